/*
 * frag_cache.c - a clean PyTorch-like run whose exit record shows the
 * caching allocator keeping 2.55 GiB of free space in 394 MiB pieces
 * (reserved 3.84 GiB, allocated 1.29 GiB) with no failed allocation, no
 * retry and no churn: the fragmentation number is reported, as info.
 */

#include "scenario.h"

static const char torch_exit[] =
    "{\"v\":1,\"torch_version\":\"2.11.0\",\"devices\":[{\"device\":0,"
    "\"allocated_bytes\":1385126912,\"reserved_bytes\":4123000832,"
    "\"active_bytes\":1385126912,\"num_alloc_retries\":0,\"num_ooms\":0,\"n_segments\":70,"
    "\"free_bytes\":2737873920,\"largest_free_block\":413138944,\"holes\":40,"
    "\"hole_bytes\":2737873920,\"pinned_segments\":30,\"releasable_bytes\":0}]}";

int main(void)
{
    CUdeviceptr d;
    sc_start(0);
    CK(cuMemAlloc_v2(&d, 64 * MIB));
    CK(cuMemFree_v2(d));
    sc_record("torch.exit", torch_exit);
    return 0;
}
