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

CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return fk_memset2d(dstDevice, 0, uc, 1, N, 1, NULL, 0);
}
FK_ALIAS(cuMemsetD8_v2);

CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return fk_memset2d(dstDevice, 0, uc, 1, N, 1, NULL, 1);
}
FK_ALIAS(cuMemsetD8_v2_ptds);

CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height)
{
    return fk_memset2d(dstDevice, dstPitch, uc, 1, Width, Height, NULL, 0);
}
FK_ALIAS(cuMemsetD2D8_v2);

CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height)
{
    return fk_memset2d(dstDevice, dstPitch, uc, 1, Width, Height, NULL, 1);
}
FK_ALIAS(cuMemsetD2D8_v2_ptds);

CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    return fk_memset2d(dstDevice, 0, uc, 1, N, 1, hStream, 0);
}
FK_ALIAS(cuMemsetD8Async);

CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    return fk_memset2d(dstDevice, 0, uc, 1, N, 1, hStream, 1);
}
FK_ALIAS(cuMemsetD8Async_ptsz);

CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height,
                          CUstream hStream)
{
    return fk_memset2d(dstDevice, dstPitch, uc, 1, Width, Height, hStream, 0);
}
FK_ALIAS(cuMemsetD2D8Async);

CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height,
                               CUstream hStream)
{
    return fk_memset2d(dstDevice, dstPitch, uc, 1, Width, Height, hStream, 1);
}
FK_ALIAS(cuMemsetD2D8Async_ptsz);

CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    return fk_memset2d(dstDevice, 0, us, 2, N, 1, NULL, 0);
}
FK_ALIAS(cuMemsetD16_v2);

CUresult cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    return fk_memset2d(dstDevice, 0, us, 2, N, 1, NULL, 1);
}
FK_ALIAS(cuMemsetD16_v2_ptds);

CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height)
{
    return fk_memset2d(dstDevice, dstPitch, us, 2, Width, Height, NULL, 0);
}
FK_ALIAS(cuMemsetD2D16_v2);

CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height)
{
    return fk_memset2d(dstDevice, dstPitch, us, 2, Width, Height, NULL, 1);
}
FK_ALIAS(cuMemsetD2D16_v2_ptds);

CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{
    return fk_memset2d(dstDevice, 0, us, 2, N, 1, hStream, 0);
}
FK_ALIAS(cuMemsetD16Async);

CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)
{
    return fk_memset2d(dstDevice, 0, us, 2, N, 1, hStream, 1);
}
FK_ALIAS(cuMemsetD16Async_ptsz);

CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height,
                           CUstream hStream)
{
    return fk_memset2d(dstDevice, dstPitch, us, 2, Width, Height, hStream, 0);
}
FK_ALIAS(cuMemsetD2D16Async);

CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height,
                                CUstream hStream)
{
    return fk_memset2d(dstDevice, dstPitch, us, 2, Width, Height, hStream, 1);
}
FK_ALIAS(cuMemsetD2D16Async_ptsz);

CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    return fk_memset2d(dstDevice, 0, ui, 4, N, 1, NULL, 0);
}
FK_ALIAS(cuMemsetD32_v2);

CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    return fk_memset2d(dstDevice, 0, ui, 4, N, 1, NULL, 1);
}
FK_ALIAS(cuMemsetD32_v2_ptds);

CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height)
{
    return fk_memset2d(dstDevice, dstPitch, ui, 4, Width, Height, NULL, 0);
}
FK_ALIAS(cuMemsetD2D32_v2);

CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height)
{
    return fk_memset2d(dstDevice, dstPitch, ui, 4, Width, Height, NULL, 1);
}
FK_ALIAS(cuMemsetD2D32_v2_ptds);

CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    return fk_memset2d(dstDevice, 0, ui, 4, N, 1, hStream, 0);
}
FK_ALIAS(cuMemsetD32Async);

CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    return fk_memset2d(dstDevice, 0, ui, 4, N, 1, hStream, 1);
}
FK_ALIAS(cuMemsetD32Async_ptsz);

CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height,
                           CUstream hStream)
{
    return fk_memset2d(dstDevice, dstPitch, ui, 4, Width, Height, hStream, 0);
}
FK_ALIAS(cuMemsetD2D32Async);

CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height,
                                CUstream hStream)
{
    return fk_memset2d(dstDevice, dstPitch, ui, 4, Width, Height, hStream, 1);
}
FK_ALIAS(cuMemsetD2D32Async_ptsz);
