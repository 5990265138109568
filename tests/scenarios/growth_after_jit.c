/*
 * growth_after_jit.c - a warm-up that takes half of the work with memory
 * held rising and falling (a JIT compiler's first steps: buffers taken for
 * an eighth of the work and given back), then every step keeps 1 MiB (a
 * list of results): memory-growth must find it, at the keeping line.
 * Over the whole run the floors of the eighths rise only 5 times of 7;
 * JAX's accuracy workload (tests/gpu/accuracy/jax_train.py) can look like
 * this.
 */
#include "scenario.h"

#define STEPS 320
#define KEEP 160

static CUdeviceptr temp, kept[KEEP];
static int nkept;

static void take(int step)
{
    if (step == 0 || step == 80)
        CK(cuMemAlloc_v2(&temp, 64 * MIB));
    if (step == 40 || step == 120)
        CK(cuMemFree_v2(temp));
    if (step >= STEPS - KEEP)
        CK(cuMemAlloc_v2(&kept[nkept++], MIB));     /* keep_result */
}

int main(void)
{
    sc_start(0);
    CUdeviceptr work = sc_train(STEPS, take);
    sc_free_all(kept, nkept);
    CK(cuMemFree_v2(work));
    return 0;
}
