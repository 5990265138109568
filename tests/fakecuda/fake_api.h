/*
 * fake_api.h - prototypes of every entry point the fake libcuda.so.1 exports,
 * under their exact ELF names (cuMemAlloc_v2, cuMemcpyAsync_ptsz, ...).
 *
 * Test programs include this instead of cuda.h (which they must not use):
 * cuda.h renames cuMemAlloc -> cuMemAlloc_v2 by macro, here the versioned
 * name is spelled out, so a call names the symbol it binds to.  Signatures
 * are those of cudaTypedefs.h 13.0 (PFN_<base>_v<version>).
 */
#ifndef FAKE_API_H
#define FAKE_API_H

#include "cp_cuda.h"

/* Opaque in the fake: only pointers to them are passed. */
typedef enum CUjit_option_enum CUjit_option;
typedef enum CUlibraryOption_enum CUlibraryOption;

#define FK_API __attribute__((visibility("default")))

/* init, version, errors */
FK_API CUresult cuInit(unsigned int Flags);
FK_API CUresult cuDriverGetVersion(int *driverVersion);
FK_API CUresult cuGetErrorString(CUresult error, const char **pStr);
FK_API CUresult cuGetErrorName(CUresult error, const char **pStr);
FK_API CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId);
FK_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
FK_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *symbolStatus);

/* devices */
FK_API CUresult cuDeviceGetCount(int *count);
FK_API CUresult cuDeviceGet(CUdevice *device, int ordinal);
FK_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
FK_API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
FK_API CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
FK_API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
FK_API CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
FK_API CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
FK_API CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
FK_API CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev);
FK_API CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);

/* contexts */
FK_API CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
FK_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
FK_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev);
FK_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
FK_API CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
FK_API CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                               unsigned int flags, CUdevice dev);
FK_API CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                               CUdevice dev);
FK_API CUresult cuCtxDestroy_v2(CUcontext ctx);
FK_API CUresult cuCtxSetCurrent(CUcontext ctx);
FK_API CUresult cuCtxGetCurrent(CUcontext *pctx);
FK_API CUresult cuCtxPushCurrent_v2(CUcontext ctx);
FK_API CUresult cuCtxPopCurrent_v2(CUcontext *pctx);
FK_API CUresult cuCtxGetDevice(CUdevice *device);
FK_API CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
FK_API CUresult cuCtxSynchronize(void);
FK_API CUresult cuCtxSynchronize_v2(CUcontext ctx);

/* memory */
FK_API CUresult cuMemGetInfo_v2(size_t *free, size_t *total);
FK_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
FK_API CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                   unsigned int ElementSizeBytes);
FK_API CUresult cuMemFree_v2(CUdeviceptr dptr);
FK_API CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
FK_API CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
FK_API CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
FK_API CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
FK_API CUresult cuMemFreeHost(void *p);
FK_API CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags);
FK_API CUresult cuMemHostUnregister(void *p);
FK_API CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p);
FK_API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags);
FK_API CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);
FK_API CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                                       CUdeviceptr ptr);
FK_API CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device);
FK_API CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location);
FK_API CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream);
FK_API CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream);
FK_API CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                      unsigned int flags, CUstream hStream);
FK_API CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                           unsigned int flags, CUstream hStream);

/* stream-ordered allocator and pools */
FK_API CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
FK_API CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
FK_API CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream);
FK_API CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                             CUstream hStream);
FK_API CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
FK_API CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);
FK_API CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
FK_API CUresult cuMemPoolDestroy(CUmemoryPool pool);
FK_API CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
FK_API CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
FK_API CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);

/* virtual memory management */
FK_API CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                    unsigned long long flags);
FK_API CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
FK_API CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                            unsigned long long flags);
FK_API CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
FK_API CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                         unsigned long long flags);
FK_API CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
FK_API CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
FK_API CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                              CUmemAllocationGranularity_flags option);

/* copies; _ptds/_ptsz are the per-thread-default-stream twins */
FK_API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
FK_API CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
FK_API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
FK_API CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
FK_API CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                             CUcontext srcContext, size_t ByteCount);
FK_API CUresult cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                  CUcontext srcContext, size_t ByteCount);
FK_API CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                  CUcontext srcContext, size_t ByteCount, CUstream hStream);
FK_API CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                       CUcontext srcContext, size_t ByteCount, CUstream hStream);
FK_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
FK_API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
FK_API CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
FK_API CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
FK_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
FK_API CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
FK_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream);
FK_API CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                          CUstream hStream);
FK_API CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
FK_API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
                                          CUstream hStream);
FK_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                     CUstream hStream);
FK_API CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                          CUstream hStream);
FK_API CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy);
FK_API CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy);
FK_API CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy);
FK_API CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy);
FK_API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
FK_API CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
FK_API CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy);
FK_API CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy);
FK_API CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
FK_API CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
FK_API CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy);
FK_API CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *pCopy);
FK_API CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
FK_API CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
/* CUDA 12.8 ABI (PFN_..._v12080): failIdx before the stream. */
FK_API CUresult cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                   CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
                                   CUstream hStream);
FK_API CUresult cuMemcpyBatchAsync_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                        CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                        size_t *failIdx, CUstream hStream);
/* CUDA 13.0 ABI (PFN_..._v13000): no failIdx. */
FK_API CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                      CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                      CUstream hStream);
FK_API CUresult cuMemcpyBatchAsync_v2_ptsz(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                                           CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                                           CUstream hStream);
FK_API CUresult cuMemcpy3DBatchAsync(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                     unsigned long long flags, CUstream hStream);
FK_API CUresult cuMemcpy3DBatchAsync_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
                                          unsigned long long flags, CUstream hStream);
FK_API CUresult cuMemcpy3DBatchAsync_v2(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
                                        CUstream hStream);
FK_API CUresult cuMemcpy3DBatchAsync_v2_ptsz(size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList,
                                             unsigned long long flags, CUstream hStream);

/* memsets */
FK_API CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
FK_API CUresult cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N);
FK_API CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N);
FK_API CUresult cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N);
FK_API CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
FK_API CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N);
FK_API CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                size_t Height);
FK_API CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                     size_t Height);
FK_API CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                 size_t Height);
FK_API CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                      size_t Height);
FK_API CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                 size_t Height);
FK_API CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                      size_t Height);
FK_API CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
FK_API CUresult cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
FK_API CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
FK_API CUresult cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
FK_API CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
FK_API CUresult cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
FK_API CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                  size_t Height, CUstream hStream);
FK_API CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                       size_t Height, CUstream hStream);
FK_API CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                   size_t Height, CUstream hStream);
FK_API CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                        size_t Height, CUstream hStream);
FK_API CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                   size_t Height, CUstream hStream);
FK_API CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                        size_t Height, CUstream hStream);

/* streams, events, capture, graphs */
FK_API CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
FK_API CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority);
FK_API CUresult cuStreamDestroy_v2(CUstream hStream);
FK_API CUresult cuStreamSynchronize(CUstream hStream);
FK_API CUresult cuStreamSynchronize_ptsz(CUstream hStream);
FK_API CUresult cuStreamQuery(CUstream hStream);
FK_API CUresult cuStreamQuery_ptsz(CUstream hStream);
FK_API CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);
FK_API CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
FK_API CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx);
FK_API CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx);
FK_API CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
FK_API CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
FK_API CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);
FK_API CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
FK_API CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
FK_API CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
FK_API CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
FK_API CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
FK_API CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);
FK_API CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
FK_API CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
FK_API CUresult cuEventQuery(CUevent hEvent);
FK_API CUresult cuEventSynchronize(CUevent hEvent);
FK_API CUresult cuEventDestroy_v2(CUevent hEvent);
FK_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);
FK_API CUresult cuGraphDestroy(CUgraph hGraph);
FK_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);
FK_API CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
FK_API CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);

/* modules, libraries, kernels, launches */
FK_API CUresult cuModuleLoadData(CUmodule *module, const void *image);
FK_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
FK_API CUresult cuModuleUnload(CUmodule hmod);
FK_API CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                  void **jitOptionsValues, unsigned int numJitOptions,
                                  CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                  unsigned int numLibraryOptions);
FK_API CUresult cuLibraryUnload(CUlibrary library);
FK_API CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
FK_API CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
FK_API CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize);
FK_API CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize);
FK_API CUresult cuFuncGetName(const char **name, CUfunction hfunc);
FK_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
FK_API CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                    void **kernelParams, void **extra);
FK_API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
FK_API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                      void **extra);
FK_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                          unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                          unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                          void **kernelParams);
FK_API CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                               unsigned int gridDimZ, unsigned int blockDimX,
                                               unsigned int blockDimY, unsigned int blockDimZ,
                                               unsigned int sharedMemBytes, CUstream hStream,
                                               void **kernelParams);

#endif /* FAKE_API_H */
