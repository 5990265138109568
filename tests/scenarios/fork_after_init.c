/*
 * fork_after_init.c - a worker forked after CUDA was initialised that uses
 * CUDA (multiprocessing with the 'fork' start method).  Two traces.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "scenario.h"

int main(void)
{
    CUdeviceptr d;
    sc_start(0);
    CK(cuMemAlloc_v2(&d, MIB));
    pid_t pid = fork();
    if (pid == 0) {
        CUdeviceptr c;
        CUresult r = cuMemAlloc_v2(&c, MIB);
        printf("child: cuMemAlloc = %d\n", (int)r);
        if (r == CUDA_SUCCESS)      /* the fake allows it; a real driver fails */
            cuMemFree_v2(c);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    CK(cuMemFree_v2(d));
    return 0;
}
