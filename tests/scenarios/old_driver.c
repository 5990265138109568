/*
 * old_driver.c - a CUDA 12.4 runtime on a CUDA 11.8 driver
 * (FAKECUDA_DRIVER_VERSION=11080): the runtime asks for the resolver
 * itself and for cuMemAlloc at its own version, is refused, and gives up.
 */
#include "scenario.h"

int main(void)
{
    void *fn = NULL;
    int v = 0;
    CUdriverProcAddressQueryResult st;
    CK(cuDriverGetVersion(&v));
    CUresult r1 = cuGetProcAddress_v2("cuGetProcAddress", &fn, 12040, 0, &st);
    CUresult r2 = cuGetProcAddress_v2("cuMemAlloc", &fn, 12040, 0, &st);
    printf("driver %d: %d %d\n", v, (int)r1, (int)r2);
    return 0;
}
