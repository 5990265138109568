/*
 * explore_train.c - a toy training loop for the exploring tools (`cuprobe
 * stats`, `cuprobe diff`, the HTML page), in one of three shapes:
 *   clean   weights, then STEPS steps that each take a temporary activation,
 *           copy a pinned batch in and launch a kernel; everything freed;
 *   leak    the same, plus a 2 MiB buffer per step that is never freed;
 *   growth  a long plateau (PLATEAU steps), then 1 MiB kept per step for
 *           GROW_STEPS steps (2% of a 16 GiB card), all freed at the end:
 *           growth in the later part of the run, which the page's
 *           selection zooms to; a batch is copied every tenth step.
 */
#include <string.h>

#include "fake_api.h"
#include "cp_test.h"

#define MIB (1u << 20)
#define STEPS 40
#define GROW_STEPS 328
#define PLATEAU 400

static CUfunction fill_kernel(void)
{
    CUmodule m;
    CUfunction f;
    CK(cuModuleLoadData(&m, "explore"));
    CK(cuModuleGetFunction(&f, m, "fake_fill_u32"));
    return f;
}

static void launch(CUfunction f, CUdeviceptr *buf)
{
    unsigned v = 1;
    size_t n = 1024;
    void *p[] = { buf, &v, &n };
    CK(cuLaunchKernel(f, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
}

static CUdeviceptr take_activation(void)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, 8 * MIB));
    return d;
}

static CUdeviceptr keep_buffer(unsigned mib)
{
    CUdeviceptr d;
    CK(cuMemAlloc_v2(&d, mib * MIB));
    return d;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "clean";
    int leak = strcmp(mode, "leak") == 0, growth = strcmp(mode, "growth") == 0;
    static CUdeviceptr kept[GROW_STEPS];
    CUcontext ctx;
    CUdeviceptr weights;
    void *batch;
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CUfunction f = fill_kernel();
    CK(cuMemAlloc_v2(&weights, 64 * MIB));
    CK(cuMemAllocHost_v2(&batch, MIB));
    memset(batch, 1, MIB);
    int steps = growth ? PLATEAU + GROW_STEPS : STEPS;
    for (int i = 0; i < steps; i++) {
        CUdeviceptr act = take_activation();
        if (!growth || i % 10 == 0)
            CK(cuMemcpyHtoD_v2(act, batch, MIB));
        launch(f, &act);
        if (leak)
            (void)keep_buffer(2);
        if (growth && i >= PLATEAU)
            kept[i - PLATEAU] = keep_buffer(1);
        CK(cuMemFree_v2(act));
    }
    CK(cuCtxSynchronize());
    for (int i = 0; growth && i < GROW_STEPS; i++)
        CK(cuMemFree_v2(kept[i]));
    CK(cuMemFreeHost(batch));
    CK(cuMemFree_v2(weights));
    printf("explore_train %s: %d steps\n", mode, steps);
    return 0;
}
