/*
 * oom_torch_too_big.c - one request larger than the card (torch.cdist of
 * the whole matrix, tests/gpu/accuracy/torch_oom.py), with the companion's
 * record written by hand (FAKECUDA_MEM=1G): three 200 MiB segments, a
 * 4 GiB request fails at the driver, PyTorch releases one idle segment and
 * retries, fails again and reports 400 MiB reserved but unallocated in
 * blocks of 200 MiB at most.  The free space is split, and the failure
 * came with a release and a retry, but no arrangement of it could have
 * served 4 GiB: the verdict is capacity and the fragmentation is info.
 */
#include "scenario.h"

static const char torch_oom[] =
    "{\"v\":1,\"device\":0,\"request_bytes\":4294967296,\"device_allocated\":419430400,"
    "\"device_free\":629145600,\"oom_index\":1,\"torch_version\":\"2.11.0\","
    "\"alloc_conf\":\"\",\"expandable_segments\":false,\"expandable_source\":\"env\","
    "\"allocated_bytes\":209715200,\"reserved_bytes\":629145600,"
    "\"active_bytes\":209715200,\"num_alloc_retries\":1,\"num_ooms\":1,\"n_segments\":3,"
    "\"free_bytes\":419430400,\"largest_free_block\":209715200,\"holes\":2,"
    "\"hole_bytes\":419430400,\"pinned_segments\":1,\"releasable_bytes\":419430400,"
    "\"segments\":[],\"devices\":[]}";

int main(void)
{
    CUdeviceptr seg[3], big;
    sc_start(0);
    for (int i = 0; i < 3; i++)
        CK(cuMemAlloc_v2(&seg[i], 200 * MIB));
    if (cuMemAlloc_v2(&big, 4096 * MIB) != CUDA_ERROR_OUT_OF_MEMORY)
        return 1;
    CK(cuMemFree_v2(seg[2]));          /* the cache released, then the retry */
    if (cuMemAlloc_v2(&big, 4096 * MIB) != CUDA_ERROR_OUT_OF_MEMORY)
        return 1;
    sc_record("torch.oom", torch_oom);
    sc_free_all(seg, 2);
    return 0;
}
