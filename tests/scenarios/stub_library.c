/*
 * stub_library.c - FAKECUDA_STUB=1 makes the fake behave like the CUDA
 * toolkit's stubs/libcuda.so: every call returns CUDA_ERROR_STUB_LIBRARY.
 */
#include "scenario.h"

int main(void)
{
    int n = 0;
    CUresult r = cuInit(0);
    CUresult r2 = cuDeviceGetCount(&n);
    printf("cuInit: %d, cuDeviceGetCount: %d\n", (int)r, (int)r2);
    return 0;
}
