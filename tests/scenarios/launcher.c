/*
 * launcher.c - a launcher that starts two workers and never uses CUDA
 * itself (it only asks for the driver version, as a launcher checking the
 * installation might); the workers allocate on the GPU.  Three traces read
 * together: the launcher's unused GPU is normal (info), not a warning.
 */
#include "scenario.h"

static void worker(int rank)
{
    (void)rank;
    CUdeviceptr d;
    sc_start(0);
    CK(cuMemAlloc_v2(&d, 16 * MIB));
    CK(cuMemFree_v2(d));
}

int main(void)
{
    int v;
    CK(cuDriverGetVersion(&v));
    return sc_fork_ranks(2, worker);
}
