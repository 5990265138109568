/*
 * oom_torch_phases.c - two PyTorch out-of-memory errors in a row with no
 * successful allocation between them (FAKECUDA_MEM=4G), each with its own
 * torch.oom record written the way the companion does: first the card is
 * full of live tensors (a 2 GiB request; reserved == allocated: capacity),
 * then, after tensors were freed inside the cached segments, a 1.5 GiB
 * request finds 1.8 GiB reserved but unallocated in 600 MiB pieces
 * (fragmentation).  Each failure is retried once, as PyTorch does after
 * releasing its cache.  Two OOMs for the user, two verdicts.
 */

#include "scenario.h"

static const char oom_full[] =
    "{\"v\":1,\"device\":0,\"request_bytes\":2147483648,\"device_allocated\":3221225472,"
    "\"device_free\":1073741824,\"oom_index\":1,\"torch_version\":\"2.11.0\","
    "\"alloc_conf\":\"\",\"expandable_segments\":false,\"expandable_source\":\"env\","
    "\"allocated_bytes\":3221225472,\"reserved_bytes\":3221225472,"
    "\"active_bytes\":3221225472,\"num_alloc_retries\":1,\"num_ooms\":1,\"n_segments\":3,"
    "\"free_bytes\":0,\"largest_free_block\":0,\"holes\":0,"
    "\"hole_bytes\":0,\"pinned_segments\":3,\"releasable_bytes\":0,"
    "\"segments\":[],\"devices\":[]}";

static const char oom_frag[] =
    "{\"v\":1,\"device\":0,\"request_bytes\":1610612736,\"device_allocated\":3221225472,"
    "\"device_free\":1073741824,\"oom_index\":2,\"torch_version\":\"2.11.0\","
    "\"alloc_conf\":\"\",\"expandable_segments\":false,\"expandable_source\":\"env\","
    "\"allocated_bytes\":1288490188,\"reserved_bytes\":3221225472,"
    "\"active_bytes\":1288490188,\"num_alloc_retries\":2,\"num_ooms\":2,\"n_segments\":3,"
    "\"free_bytes\":1932735284,\"largest_free_block\":629145600,\"holes\":6,"
    "\"hole_bytes\":1932735284,\"pinned_segments\":3,\"releasable_bytes\":0,"
    "\"segments\":[],\"devices\":[]}";

/* torch.empty(n, device="cuda") when nothing cached fits: cudaMalloc, release
 * the (empty) cache, cudaMalloc again, then raise. */
static void torch_empty_fails(size_t n, const char *oom_json)
{
    CUdeviceptr d;
    for (int attempt = 0; attempt < 2; attempt++)
        if (cuMemAlloc_v2(&d, n) == CUDA_SUCCESS)
            exit(11);
    sc_record("torch.oom", oom_json);
}

int main(void)
{
    CUdeviceptr seg[3];
    sc_start(0);
    for (int i = 0; i < 3; i++)
        CK(cuMemAlloc_v2(&seg[i], 1024 * MIB));
    torch_empty_fails(2048 * MIB, oom_full);
    torch_empty_fails(1536 * MIB, oom_frag);
    for (int i = 0; i < 3; i++)
        CK(cuMemFree_v2(seg[i]));
    return 0;
}
