/*
 * fk_memset.c - the memset entry points of the fake driver (1D and 2D,
 * 8/16/32-bit, sync with _ptds twins and async with _ptsz twins).
 *
 * The destination must be device-accessible memory the driver knows and
 * aligned to the element size; rows of a 2D memset are set one by one.
 */
#include "fk_internal.h"

static CUresult fk_memset2d(CUdeviceptr dst, size_t pitch, unsigned value, int elem, size_t width, size_t height,
                            CUstream st, int pt)
{
    FK_GUARD();
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !st ? CU_STREAM_PER_THREAD : st, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (width == 0 || height == 0)
        return CUDA_SUCCESS;
    size_t row = width * (size_t)elem;
    if (!dst || dst % (unsigned)elem || (height > 1 && (pitch < row || pitch % (unsigned)elem)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!fk_mem_check(dst, (height - 1) * pitch + row, 1, 0))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t y = 0; y < height && rc == CUDA_SUCCESS; y++)
        rc = fk_op_memset(&sr, (void *)(uintptr_t)(dst + y * pitch), value, elem, width);
    return rc;
}

/*
 * The eight entry points of one element size T (bits wide): 1D and 2D, each
 * sync with its _ptds twin and async with its _ptsz twin.  They differ only
 * in the arguments they forward, so one macro writes them all.
 */
#define FK_MEMSET_FN(name, params, args) \
    CUresult name params { return fk_memset2d args; } \
    FK_ALIAS(name);

#define FK_MEMSET_ENTRIES(bits, T) \
    FK_MEMSET_FN(cuMemsetD##bits##_v2, (CUdeviceptr d, T v, size_t n), \
                 (d, 0, v, (int)sizeof(T), n, 1, NULL, 0)) \
    FK_MEMSET_FN(cuMemsetD##bits##_v2_ptds, (CUdeviceptr d, T v, size_t n), \
                 (d, 0, v, (int)sizeof(T), n, 1, NULL, 1)) \
    FK_MEMSET_FN(cuMemsetD2D##bits##_v2, (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h), \
                 (d, pitch, v, (int)sizeof(T), w, h, NULL, 0)) \
    FK_MEMSET_FN(cuMemsetD2D##bits##_v2_ptds, (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h), \
                 (d, pitch, v, (int)sizeof(T), w, h, NULL, 1)) \
    FK_MEMSET_FN(cuMemsetD##bits##Async, (CUdeviceptr d, T v, size_t n, CUstream st), \
                 (d, 0, v, (int)sizeof(T), n, 1, st, 0)) \
    FK_MEMSET_FN(cuMemsetD##bits##Async_ptsz, (CUdeviceptr d, T v, size_t n, CUstream st), \
                 (d, 0, v, (int)sizeof(T), n, 1, st, 1)) \
    FK_MEMSET_FN(cuMemsetD2D##bits##Async, \
                 (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, CUstream st), \
                 (d, pitch, v, (int)sizeof(T), w, h, st, 0)) \
    FK_MEMSET_FN(cuMemsetD2D##bits##Async_ptsz, \
                 (CUdeviceptr d, size_t pitch, T v, size_t w, size_t h, CUstream st), \
                 (d, pitch, v, (int)sizeof(T), w, h, st, 1))

FK_MEMSET_ENTRIES(8, unsigned char)
FK_MEMSET_ENTRIES(16, unsigned short)
FK_MEMSET_ENTRIES(32, unsigned int)
