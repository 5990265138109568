/*
 * no_device.c - run with CUDA_VISIBLE_DEVICES set to "" : cuInit fails with
 * CUDA_ERROR_NO_DEVICE and the program carries on without a GPU.
 */
#include "scenario.h"

int main(void)
{
    CUresult r = cuInit(0);
    printf("cuInit: %d\n", (int)r);
    return 0;
}
