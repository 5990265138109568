// nolink
/*
 * no_driver.c - a program that loads the driver at run time, like the CUDA
 * runtime does, on a machine without one (the test runs it with no libcuda
 * on the library path).
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    printf("libcuda: %s\n", h ? "loaded" : dlerror());
    return 0;
}
