/*
 * no_gpu_used.c - initialises CUDA, counts the devices, and then does all
 * its work on the CPU.
 */
#include "scenario.h"

int main(void)
{
    int n;
    CK(cuInit(0));
    CK(cuDeviceGetCount(&n));
    double s = 0;
    for (int i = 0; i < 1000; i++)
        s += i;
    printf("%d devices, sum %f\n", n, s);
    return 0;
}
