/*
 * blocking_upload.c - what PyTorch does with non_blocking=False, which must
 * not be reported: model.cuda() copies 72 parameters from pageable memory,
 * each as cuMemcpyHtoDAsync followed at once by cuStreamSynchronize of the
 * same stream; .tolist() copies 80 bytes back the same way; the training
 * loop (20 steps, 1 ms of host work each) feeds from pinned memory; at the
 * end a checkpoint is saved with 30 synchronous downloads in one burst.
 */
#include <string.h>
#include <unistd.h>

#include "scenario.h"

#define N_PARAM 72

static void to_cuda(CUdeviceptr d, const void *h, size_t n)
{
    CK(cuMemcpyHtoDAsync_v2(d, h, n, NULL));
    CK(cuStreamSynchronize(NULL));
}

static void tolist(void *h, CUdeviceptr d, size_t n)
{
    CK(cuMemcpyDtoHAsync_v2(h, d, n, NULL));
    CK(cuStreamSynchronize(NULL));
}

static void save_checkpoint(void *h, const CUdeviceptr *w, size_t n)
{
    for (int i = 0; i < N_PARAM / 2; i++)
        CK(cuMemcpyDtoH_v2(h, w[i], n));
}

int main(void)
{
    sc_start(0);
    CUdeviceptr w[N_PARAM], batch;
    char *host = malloc(MIB);
    void *pinned;
    memset(host, 1, MIB);
    CK(cuMemHostAlloc(&pinned, MIB, 0));
    for (int i = 0; i < N_PARAM; i++) {
        CK(cuMemAlloc_v2(&w[i], MIB));
        to_cuda(w[i], host, MIB);
    }
    CK(cuMemAlloc_v2(&batch, MIB));
    CUfunction fill = sc_kernel("fake_fill_u32");
    unsigned v = 1;
    size_t n = 1024;
    void *p[] = { &batch, &v, &n };
    for (int step = 0; step < 20; step++) {
        CK(cuMemcpyHtoDAsync_v2(batch, pinned, MIB, NULL));
        CK(cuLaunchKernel(fill, 4, 1, 1, 256, 1, 1, 0, NULL, p, NULL));
        usleep(1000);
    }
    tolist(host, batch, 80);
    save_checkpoint(host, w, MIB);
    for (int i = 0; i < N_PARAM; i++)
        CK(cuMemFree_v2(w[i]));
    CK(cuMemFree_v2(batch));
    CK(cuMemFreeHost(pinned));
    free(host);
    return 0;
}
