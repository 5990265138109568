/*
 * oom_torch_fragmentation.c - check_oom_frag.py's case, with the companion's
 * record written by hand (FAKECUDA_MEM=4G): three 1 GiB segments hold
 * live blocks with holes between them; a 1.5 GiB request fails at the driver
 * (1 GiB free) and PyTorch reports 1.8 GiB reserved but unallocated whose
 * largest free block is 600 MiB.  The driver alone would say "capacity".
 */

#include "scenario.h"

static const char torch_oom[] =
    "{\"v\":1,\"device\":0,\"request_bytes\":1610612736,\"device_allocated\":3221225472,"
    "\"device_free\":1073741824,\"oom_index\":1,\"torch_version\":\"2.11.0\","
    "\"alloc_conf\":\"\",\"expandable_segments\":false,\"expandable_source\":\"env\","
    "\"allocated_bytes\":1288490188,\"reserved_bytes\":3221225472,"
    "\"active_bytes\":1288490188,\"num_alloc_retries\":1,\"num_ooms\":1,\"n_segments\":3,"
    "\"free_bytes\":1932735284,\"largest_free_block\":629145600,\"holes\":6,"
    "\"hole_bytes\":1932735284,\"pinned_segments\":3,\"releasable_bytes\":0,"
    "\"segments\":[{\"address\":1,\"total_size\":1073741824,\"allocated_size\":429496729,"
    "\"active_size\":429496729,\"free_blocks\":[629145600,15099495]},"
    "{\"address\":2,\"total_size\":1073741824,\"allocated_size\":429496729,"
    "\"active_size\":429496729,\"free_blocks\":[600000000,44245095]}],\"devices\":[]}";

int main(void)
{
    CUdeviceptr seg[3], big;
    sc_start(0);
    for (int i = 0; i < 3; i++)
        CK(cuMemAlloc_v2(&seg[i], 1024 * MIB));
    CUresult r = cuMemAlloc_v2(&big, 1536 * MIB);
    printf("1.5 GiB: %d\n", (int)r);
    sc_record("torch.oom", torch_oom);
    for (int i = 0; i < 3; i++)
        CK(cuMemFree_v2(seg[i]));
    return 0;
}
