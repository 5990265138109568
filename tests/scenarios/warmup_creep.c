/*
 * warmup_creep.c - a short training run under a stream-ordered allocator
 * (PyTorch's cudaMallocAsync backend: every tensor is a cuMemAllocAsync):
 * the first step takes the weights and the optimizer's state, every step
 * makes and frees its activations, and keeps one 4-byte scalar (a loop's
 * losses.append(loss.detach())).  Twenty steps, as tests/gpu/clean_gpt2.py
 * runs: after the warm-up, memory held creeps by 4 bytes a step, which is
 * no growth; memory-growth must stay silent (it read the warm-up as growth
 * while every eighth of the work rose by a few bytes).
 */
#include "scenario.h"

#define STEPS 20
#define ACTS 40
#define KERNELS 30

int main(void)
{
    CUstream s;
    sc_start(0);
    CK(cuStreamCreate(&s, 0));
    CUdeviceptr weights, state = 0, act[ACTS], loss[STEPS];
    CK(cuMemAllocAsync(&weights, 30 * MIB, s));
    for (int step = 0; step < STEPS; step++) {
        for (int i = 0; i < ACTS; i++) {
            CK(cuMemAllocAsync(&act[i], MIB, s));
            for (int k = 0; k < KERNELS / 10; k++)
                sc_fill(s, &act[i]);
        }
        if (!state)     /* the optimizer's state, at its first step */
            CK(cuMemAllocAsync(&state, 60 * MIB, s));
        for (int i = ACTS; i-- > 0;)
            CK(cuMemFreeAsync(act[i], s));
        CK(cuMemAllocAsync(&loss[step], 4, s));
    }
    CK(cuStreamSynchronize(s));
    for (int step = 0; step < STEPS; step++)
        CK(cuMemFreeAsync(loss[step], s));
    CK(cuMemFreeAsync(state, s));
    CK(cuMemFreeAsync(weights, s));
    CK(cuStreamSynchronize(s));
    CK(cuStreamDestroy_v2(s));
    return 0;
}
