/*
 * cudart_probe.c - a real CUDA runtime program (linked with NVIDIA's
 * libcudart), used to check what the shim records when cudart boots
 * against the toolkit's stub libcuda or with no libcuda at all.  Built by
 * tests/sh/shim_cudart.sh with the toolkit's headers when one is installed.
 */
#include <stdio.h>
#include <cuda_runtime_api.h>

int main(void)
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount: %d (%s), count %d\n", (int)e, cudaGetErrorString(e), n);
    return e == cudaSuccess ? 0 : 1;
}
