/*
 * launcher.c - a launcher that starts two workers and never uses CUDA
 * itself (it only asks for the driver version, as a launcher checking the
 * installation might); the workers allocate on the GPU.  Three traces read
 * together: the launcher's unused GPU is normal (info), not a warning.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "scenario.h"

static void worker(void)
{
    CUdeviceptr d;
    sc_start(0);
    CK(cuMemAlloc_v2(&d, 16 * MIB));
    CK(cuMemFree_v2(d));
}

int main(void)
{
    int v;
    CK(cuDriverGetVersion(&v));
    pid_t kids[2];
    for (int r = 0; r < 2; r++) {
        kids[r] = fork();
        if (kids[r] == 0) {
            worker();
            exit(0);
        }
    }
    int bad = 0;
    for (int r = 0; r < 2; r++) {
        int st;
        waitpid(kids[r], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}
