/*
 * cp_api_table.h - the one table of driver functions cuprobe wraps.
 *
 * Each row:  CP_API(elf_name, pfn_typedef, mode, hook, (params), (args))
 *   elf_name     the exact exported symbol, suffix included (_v2, _ptsz, _ptds)
 *   pfn_typedef  its PFN_* typedef in NVIDIA's cudaTypedefs.h: the ABI check
 *                (tests/unit/test_abi_cudah.c) proves the params below equal it
 *   mode         CP_M_EV: timed, recorded after the call; CP_M_LITE: untimed
 *                (launches, name lookups); CP_M_PRE: frees, recorded before the
 *                call (see cp_wrap.h)
 *   hook         the interpose/ hook that records it: cp_hook_<hook>(call, args)
 *                legacy and per-thread variants share one hook
 * Everything the driver exports that is not in this table is handed out
 * unwrapped: it costs the program nothing.  The interposer (cp_wrap.c) and
 * the analyzer's name table are both generated from these rows, so
 * including this file requires CP_API and CP_API0 to be defined.
 *
 * CP_API0 is the same for the one function without parameters.
 *
 * Not rows: cuGetProcAddress / cuGetProcAddress_v2 (cp_resolve.c writes them
 * by hand, they are the resolvers themselves).
 */

/* --- initialisation and environment ----------------------------------- */
CP_API(cuInit, PFN_cuInit_v2000, CP_M_EV, init, (unsigned int Flags), (Flags))
CP_API(cuDriverGetVersion, PFN_cuDriverGetVersion_v2020, CP_M_EV, driver_version,
       (int *driverVersion), (driverVersion))

/* --- device memory ----------------------------------------------------- */
CP_API(cuMemAlloc_v2, PFN_cuMemAlloc_v3020, CP_M_EV, mem_alloc,
       (CUdeviceptr *dptr, size_t bytesize), (dptr, bytesize))
CP_API(cuMemAllocPitch_v2, PFN_cuMemAllocPitch_v3020, CP_M_EV, mem_alloc_pitch,
       (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
        unsigned int ElementSizeBytes),
       (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes))
CP_API(cuMemFree_v2, PFN_cuMemFree_v3020, CP_M_PRE, mem_free, (CUdeviceptr dptr), (dptr))
CP_API(cuMemAllocManaged, PFN_cuMemAllocManaged_v6000, CP_M_EV, mem_alloc_managed,
       (CUdeviceptr *dptr, size_t bytesize, unsigned int flags), (dptr, bytesize, flags))

/* --- stream-ordered allocation and pools ------------------------------- */
CP_API(cuMemAllocAsync, PFN_cuMemAllocAsync_v11020, CP_M_EV, mem_alloc_async,
       (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), (dptr, bytesize, hStream))
CP_API(cuMemAllocAsync_ptsz, PFN_cuMemAllocAsync_v11020_ptsz, CP_M_EV, mem_alloc_async,
       (CUdeviceptr *dptr, size_t bytesize, CUstream hStream), (dptr, bytesize, hStream))
CP_API(cuMemAllocFromPoolAsync, PFN_cuMemAllocFromPoolAsync_v11020, CP_M_EV, mem_alloc_pool,
       (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
       (dptr, bytesize, pool, hStream))
CP_API(cuMemAllocFromPoolAsync_ptsz, PFN_cuMemAllocFromPoolAsync_v11020_ptsz, CP_M_EV,
       mem_alloc_pool,
       (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream),
       (dptr, bytesize, pool, hStream))
CP_API(cuMemFreeAsync, PFN_cuMemFreeAsync_v11020, CP_M_PRE, mem_free_async,
       (CUdeviceptr dptr, CUstream hStream), (dptr, hStream))
CP_API(cuMemFreeAsync_ptsz, PFN_cuMemFreeAsync_v11020_ptsz, CP_M_PRE, mem_free_async,
       (CUdeviceptr dptr, CUstream hStream), (dptr, hStream))
CP_API(cuMemPoolCreate, PFN_cuMemPoolCreate_v11020, CP_M_EV, pool_create,
       (CUmemoryPool *pool, const CUmemPoolProps *poolProps), (pool, poolProps))
CP_API(cuMemPoolDestroy, PFN_cuMemPoolDestroy_v11020, CP_M_EV, pool_destroy,
       (CUmemoryPool pool), (pool))
CP_API(cuMemPoolTrimTo, PFN_cuMemPoolTrimTo_v11020, CP_M_EV, pool_trim,
       (CUmemoryPool pool, size_t minBytesToKeep), (pool, minBytesToKeep))
CP_API(cuMemPoolSetAttribute, PFN_cuMemPoolSetAttribute_v11020, CP_M_EV, pool_set_attr,
       (CUmemoryPool pool, CUmemPool_attribute attr, void *value), (pool, attr, value))

/* --- virtual memory management (PyTorch expandable segments, NCCL) ----- */
CP_API(cuMemAddressReserve, PFN_cuMemAddressReserve_v10020, CP_M_EV, vmm_reserve,
       (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
        unsigned long long flags), (ptr, size, alignment, addr, flags))
CP_API(cuMemAddressFree, PFN_cuMemAddressFree_v10020, CP_M_PRE, vmm_addr_free,
       (CUdeviceptr ptr, size_t size), (ptr, size))
CP_API(cuMemCreate, PFN_cuMemCreate_v10020, CP_M_EV, vmm_create,
       (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
        unsigned long long flags), (handle, size, prop, flags))
CP_API(cuMemRelease, PFN_cuMemRelease_v10020, CP_M_PRE, vmm_release,
       (CUmemGenericAllocationHandle handle), (handle))
CP_API(cuMemMap, PFN_cuMemMap_v10020, CP_M_EV, vmm_map,
       (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
        unsigned long long flags), (ptr, size, offset, handle, flags))
CP_API(cuMemUnmap, PFN_cuMemUnmap_v10020, CP_M_PRE, vmm_unmap,
       (CUdeviceptr ptr, size_t size), (ptr, size))
CP_API(cuMemSetAccess, PFN_cuMemSetAccess_v10020, CP_M_EV, vmm_set_access,
       (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count),
       (ptr, size, desc, count))

/* --- host memory -------------------------------------------------------- */
CP_API(cuMemHostAlloc, PFN_cuMemHostAlloc_v2020, CP_M_EV, host_alloc,
       (void **pp, size_t bytesize, unsigned int Flags), (pp, bytesize, Flags))
CP_API(cuMemAllocHost_v2, PFN_cuMemAllocHost_v3020, CP_M_EV, host_alloc_host,
       (void **pp, size_t bytesize), (pp, bytesize))
CP_API(cuMemFreeHost, PFN_cuMemFreeHost_v2000, CP_M_PRE, host_free, (void *p), (p))
CP_API(cuMemHostRegister_v2, PFN_cuMemHostRegister_v6050, CP_M_EV, host_register,
       (void *p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags))
CP_API(cuMemHostUnregister, PFN_cuMemHostUnregister_v4000, CP_M_PRE, host_unregister,
       (void *p), (p))

/* --- managed memory hints ------------------------------------------------ */
CP_API(cuMemAdvise, PFN_cuMemAdvise_v8000, CP_M_EV, mem_advise_dev,
       (CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device),
       (devPtr, count, advice, device))
CP_API(cuMemAdvise_v2, PFN_cuMemAdvise_v12020, CP_M_EV, mem_advise_loc,
       (CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location),
       (devPtr, count, advice, location))
CP_API(cuMemPrefetchAsync, PFN_cuMemPrefetchAsync_v8000, CP_M_EV, mem_prefetch_dev,
       (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream),
       (devPtr, count, dstDevice, hStream))
CP_API(cuMemPrefetchAsync_ptsz, PFN_cuMemPrefetchAsync_v8000_ptsz, CP_M_EV, mem_prefetch_dev,
       (CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream),
       (devPtr, count, dstDevice, hStream))
CP_API(cuMemPrefetchAsync_v2, PFN_cuMemPrefetchAsync_v12020, CP_M_EV, mem_prefetch_loc,
       (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
        CUstream hStream), (devPtr, count, location, flags, hStream))
CP_API(cuMemPrefetchAsync_v2_ptsz, PFN_cuMemPrefetchAsync_v12020_ptsz, CP_M_EV,
       mem_prefetch_loc,
       (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
        CUstream hStream), (devPtr, count, location, flags, hStream))

/* --- copies: unified and peer ------------------------------------------ */
CP_API(cuMemcpy, PFN_cuMemcpy_v4000, CP_M_EV, cpy,
       (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount))
CP_API(cuMemcpy_ptds, PFN_cuMemcpy_v7000_ptds, CP_M_EV, cpy,
       (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount))
CP_API(cuMemcpyAsync, PFN_cuMemcpyAsync_v4000, CP_M_EV, cpy_async,
       (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
       (dst, src, ByteCount, hStream))
CP_API(cuMemcpyAsync_ptsz, PFN_cuMemcpyAsync_v7000_ptsz, CP_M_EV, cpy_async,
       (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
       (dst, src, ByteCount, hStream))
CP_API(cuMemcpyPeer, PFN_cuMemcpyPeer_v4000, CP_M_EV, cpy_peer,
       (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
        CUcontext srcContext, size_t ByteCount),
       (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
CP_API(cuMemcpyPeer_ptds, PFN_cuMemcpyPeer_v7000_ptds, CP_M_EV, cpy_peer,
       (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
        CUcontext srcContext, size_t ByteCount),
       (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
CP_API(cuMemcpyPeerAsync, PFN_cuMemcpyPeerAsync_v4000, CP_M_EV, cpy_peer_async,
       (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
        CUcontext srcContext, size_t ByteCount, CUstream hStream),
       (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))
CP_API(cuMemcpyPeerAsync_ptsz, PFN_cuMemcpyPeerAsync_v7000_ptsz, CP_M_EV, cpy_peer_async,
       (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
        CUcontext srcContext, size_t ByteCount, CUstream hStream),
       (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))

/* --- copies: typed 1D -------------------------------------------------- */
#define CP_HTOD_P (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
#define CP_HTOD_A (dstDevice, srcHost, ByteCount)
#define CP_DTOH_P (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
#define CP_DTOH_A (dstHost, srcDevice, ByteCount)
#define CP_DTOD_P (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
#define CP_DTOD_A (dstDevice, srcDevice, ByteCount)
#define CP_HTODA_P (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
#define CP_HTODA_A (dstDevice, srcHost, ByteCount, hStream)
#define CP_DTOHA_P (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
#define CP_DTOHA_A (dstHost, srcDevice, ByteCount, hStream)
#define CP_DTODA_P (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
#define CP_DTODA_A (dstDevice, srcDevice, ByteCount, hStream)
CP_API(cuMemcpyHtoD_v2, PFN_cuMemcpyHtoD_v3020, CP_M_EV, htod, CP_HTOD_P, CP_HTOD_A)
CP_API(cuMemcpyHtoD_v2_ptds, PFN_cuMemcpyHtoD_v7000_ptds, CP_M_EV, htod, CP_HTOD_P, CP_HTOD_A)
CP_API(cuMemcpyDtoH_v2, PFN_cuMemcpyDtoH_v3020, CP_M_EV, dtoh, CP_DTOH_P, CP_DTOH_A)
CP_API(cuMemcpyDtoH_v2_ptds, PFN_cuMemcpyDtoH_v7000_ptds, CP_M_EV, dtoh, CP_DTOH_P, CP_DTOH_A)
CP_API(cuMemcpyDtoD_v2, PFN_cuMemcpyDtoD_v3020, CP_M_EV, dtod, CP_DTOD_P, CP_DTOD_A)
CP_API(cuMemcpyDtoD_v2_ptds, PFN_cuMemcpyDtoD_v7000_ptds, CP_M_EV, dtod, CP_DTOD_P, CP_DTOD_A)
CP_API(cuMemcpyHtoDAsync_v2, PFN_cuMemcpyHtoDAsync_v3020, CP_M_EV, htod_async,
       CP_HTODA_P, CP_HTODA_A)
CP_API(cuMemcpyHtoDAsync_v2_ptsz, PFN_cuMemcpyHtoDAsync_v7000_ptsz, CP_M_EV, htod_async,
       CP_HTODA_P, CP_HTODA_A)
CP_API(cuMemcpyDtoHAsync_v2, PFN_cuMemcpyDtoHAsync_v3020, CP_M_EV, dtoh_async,
       CP_DTOHA_P, CP_DTOHA_A)
CP_API(cuMemcpyDtoHAsync_v2_ptsz, PFN_cuMemcpyDtoHAsync_v7000_ptsz, CP_M_EV, dtoh_async,
       CP_DTOHA_P, CP_DTOHA_A)
CP_API(cuMemcpyDtoDAsync_v2, PFN_cuMemcpyDtoDAsync_v3020, CP_M_EV, dtod_async,
       CP_DTODA_P, CP_DTODA_A)
CP_API(cuMemcpyDtoDAsync_v2_ptsz, PFN_cuMemcpyDtoDAsync_v7000_ptsz, CP_M_EV, dtod_async,
       CP_DTODA_P, CP_DTODA_A)

/* --- copies: arrays ------------------------------------------------------ */
CP_API(cuMemcpyHtoA_v2, PFN_cuMemcpyHtoA_v3020, CP_M_EV, htoa,
       (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount),
       (dstArray, dstOffset, srcHost, ByteCount))
CP_API(cuMemcpyHtoA_v2_ptds, PFN_cuMemcpyHtoA_v7000_ptds, CP_M_EV, htoa,
       (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount),
       (dstArray, dstOffset, srcHost, ByteCount))
CP_API(cuMemcpyAtoH_v2, PFN_cuMemcpyAtoH_v3020, CP_M_EV, atoh,
       (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount),
       (dstHost, srcArray, srcOffset, ByteCount))
CP_API(cuMemcpyAtoH_v2_ptds, PFN_cuMemcpyAtoH_v7000_ptds, CP_M_EV, atoh,
       (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount),
       (dstHost, srcArray, srcOffset, ByteCount))
CP_API(cuMemcpyDtoA_v2, PFN_cuMemcpyDtoA_v3020, CP_M_EV, dtoa,
       (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount),
       (dstArray, dstOffset, srcDevice, ByteCount))
CP_API(cuMemcpyDtoA_v2_ptds, PFN_cuMemcpyDtoA_v7000_ptds, CP_M_EV, dtoa,
       (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount),
       (dstArray, dstOffset, srcDevice, ByteCount))
CP_API(cuMemcpyAtoD_v2, PFN_cuMemcpyAtoD_v3020, CP_M_EV, atod,
       (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount),
       (dstDevice, srcArray, srcOffset, ByteCount))
CP_API(cuMemcpyAtoD_v2_ptds, PFN_cuMemcpyAtoD_v7000_ptds, CP_M_EV, atod,
       (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount),
       (dstDevice, srcArray, srcOffset, ByteCount))
CP_API(cuMemcpyAtoA_v2, PFN_cuMemcpyAtoA_v3020, CP_M_EV, atoa,
       (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
        size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount))
CP_API(cuMemcpyAtoA_v2_ptds, PFN_cuMemcpyAtoA_v7000_ptds, CP_M_EV, atoa,
       (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset,
        size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount))
CP_API(cuMemcpyHtoAAsync_v2, PFN_cuMemcpyHtoAAsync_v3020, CP_M_EV, htoa_async,
       (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount,
        CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream))
CP_API(cuMemcpyHtoAAsync_v2_ptsz, PFN_cuMemcpyHtoAAsync_v7000_ptsz, CP_M_EV, htoa_async,
       (CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount,
        CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream))
CP_API(cuMemcpyAtoHAsync_v2, PFN_cuMemcpyAtoHAsync_v3020, CP_M_EV, atoh_async,
       (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
        CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream))
CP_API(cuMemcpyAtoHAsync_v2_ptsz, PFN_cuMemcpyAtoHAsync_v7000_ptsz, CP_M_EV, atoh_async,
       (void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount,
        CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream))

/* --- copies: 2D / 3D ------------------------------------------------------ */
CP_API(cuMemcpy2D_v2, PFN_cuMemcpy2D_v3020, CP_M_EV, cpy2d, (const CUDA_MEMCPY2D *pCopy), (pCopy))
CP_API(cuMemcpy2D_v2_ptds, PFN_cuMemcpy2D_v7000_ptds, CP_M_EV, cpy2d,
       (const CUDA_MEMCPY2D *pCopy), (pCopy))
CP_API(cuMemcpy2DUnaligned_v2, PFN_cuMemcpy2DUnaligned_v3020, CP_M_EV, cpy2d,
       (const CUDA_MEMCPY2D *pCopy), (pCopy))
CP_API(cuMemcpy2DUnaligned_v2_ptds, PFN_cuMemcpy2DUnaligned_v7000_ptds, CP_M_EV, cpy2d,
       (const CUDA_MEMCPY2D *pCopy), (pCopy))
CP_API(cuMemcpy2DAsync_v2, PFN_cuMemcpy2DAsync_v3020, CP_M_EV, cpy2d_async,
       (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream))
CP_API(cuMemcpy2DAsync_v2_ptsz, PFN_cuMemcpy2DAsync_v7000_ptsz, CP_M_EV, cpy2d_async,
       (const CUDA_MEMCPY2D *pCopy, CUstream hStream), (pCopy, hStream))
CP_API(cuMemcpy3D_v2, PFN_cuMemcpy3D_v3020, CP_M_EV, cpy3d, (const CUDA_MEMCPY3D *pCopy), (pCopy))
CP_API(cuMemcpy3D_v2_ptds, PFN_cuMemcpy3D_v7000_ptds, CP_M_EV, cpy3d,
       (const CUDA_MEMCPY3D *pCopy), (pCopy))
CP_API(cuMemcpy3DAsync_v2, PFN_cuMemcpy3DAsync_v3020, CP_M_EV, cpy3d_async,
       (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream))
CP_API(cuMemcpy3DAsync_v2_ptsz, PFN_cuMemcpy3DAsync_v7000_ptsz, CP_M_EV, cpy3d_async,
       (const CUDA_MEMCPY3D *pCopy, CUstream hStream), (pCopy, hStream))
CP_API(cuMemcpy3DPeer, PFN_cuMemcpy3DPeer_v4000, CP_M_EV, cpy3d_peer,
       (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy))
CP_API(cuMemcpy3DPeer_ptds, PFN_cuMemcpy3DPeer_v7000_ptds, CP_M_EV, cpy3d_peer,
       (const CUDA_MEMCPY3D_PEER *pCopy), (pCopy))
CP_API(cuMemcpy3DPeerAsync, PFN_cuMemcpy3DPeerAsync_v4000, CP_M_EV, cpy3d_peer_async,
       (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream))
CP_API(cuMemcpy3DPeerAsync_ptsz, PFN_cuMemcpy3DPeerAsync_v7000_ptsz, CP_M_EV, cpy3d_peer_async,
       (const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream), (pCopy, hStream))

/* --- copies: batches (CUDA 12.8 ABI with failIdx, CUDA 13 _v2 without) ---- */
#define CP_BATCH12_P (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, \
        CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx, \
        CUstream hStream)
#define CP_BATCH12_A (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, hStream)
#define CP_BATCH13_P (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count, \
        CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream hStream)
#define CP_BATCH13_A (dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, hStream)
CP_API(cuMemcpyBatchAsync, PFN_cuMemcpyBatchAsync_v12080, CP_M_EV, batch12,
       CP_BATCH12_P, CP_BATCH12_A)
CP_API(cuMemcpyBatchAsync_ptsz, PFN_cuMemcpyBatchAsync_v12080_ptsz, CP_M_EV, batch12,
       CP_BATCH12_P, CP_BATCH12_A)
CP_API(cuMemcpyBatchAsync_v2, PFN_cuMemcpyBatchAsync_v13000, CP_M_EV, batch13,
       CP_BATCH13_P, CP_BATCH13_A)
CP_API(cuMemcpyBatchAsync_v2_ptsz, PFN_cuMemcpyBatchAsync_v13000_ptsz, CP_M_EV, batch13,
       CP_BATCH13_P, CP_BATCH13_A)
CP_API(cuMemcpy3DBatchAsync, PFN_cuMemcpy3DBatchAsync_v12080, CP_M_EV, batch3d12,
       (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
        unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream))
CP_API(cuMemcpy3DBatchAsync_ptsz, PFN_cuMemcpy3DBatchAsync_v12080_ptsz, CP_M_EV, batch3d12,
       (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, size_t *failIdx,
        unsigned long long flags, CUstream hStream), (numOps, opList, failIdx, flags, hStream))
CP_API(cuMemcpy3DBatchAsync_v2, PFN_cuMemcpy3DBatchAsync_v13000, CP_M_EV, batch3d13,
       (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
        CUstream hStream), (numOps, opList, flags, hStream))
CP_API(cuMemcpy3DBatchAsync_v2_ptsz, PFN_cuMemcpy3DBatchAsync_v13000_ptsz, CP_M_EV, batch3d13,
       (size_t numOps, CUDA_MEMCPY3D_BATCH_OP *opList, unsigned long long flags,
        CUstream hStream), (numOps, opList, flags, hStream))

/* --- memsets --------------------------------------------------------------- */
#define CP_MS_ROWS(N, T, V, PFNV, PFNPT)                                                    \
CP_API(cuMemsetD##N##_v2, PFN_cuMemsetD##N##_v3020, CP_M_EV, memset##N,                     \
       (CUdeviceptr dstDevice, T V, size_t Num), (dstDevice, V, Num))                       \
CP_API(cuMemsetD##N##_v2_ptds, PFN_cuMemsetD##N##_v7000_ptds, CP_M_EV, memset##N,           \
       (CUdeviceptr dstDevice, T V, size_t Num), (dstDevice, V, Num))                       \
CP_API(cuMemsetD##N##Async, PFN_cuMemsetD##N##Async_v3020, CP_M_EV, memset##N##_async,      \
       (CUdeviceptr dstDevice, T V, size_t Num, CUstream hStream), (dstDevice, V, Num, hStream)) \
CP_API(cuMemsetD##N##Async_ptsz, PFN_cuMemsetD##N##Async_v7000_ptsz, CP_M_EV,              \
       memset##N##_async,                                                                   \
       (CUdeviceptr dstDevice, T V, size_t Num, CUstream hStream), (dstDevice, V, Num, hStream)) \
CP_API(cuMemsetD2D##N##_v2, PFN_cuMemsetD2D##N##_v3020, CP_M_EV, memset2d##N,               \
       (CUdeviceptr dstDevice, size_t dstPitch, T V, size_t Width, size_t Height),          \
       (dstDevice, dstPitch, V, Width, Height))                                             \
CP_API(cuMemsetD2D##N##_v2_ptds, PFN_cuMemsetD2D##N##_v7000_ptds, CP_M_EV, memset2d##N,     \
       (CUdeviceptr dstDevice, size_t dstPitch, T V, size_t Width, size_t Height),          \
       (dstDevice, dstPitch, V, Width, Height))                                             \
CP_API(cuMemsetD2D##N##Async, PFN_cuMemsetD2D##N##Async_v3020, CP_M_EV, memset2d##N##_async, \
       (CUdeviceptr dstDevice, size_t dstPitch, T V, size_t Width, size_t Height,           \
        CUstream hStream), (dstDevice, dstPitch, V, Width, Height, hStream))                \
CP_API(cuMemsetD2D##N##Async_ptsz, PFN_cuMemsetD2D##N##Async_v7000_ptsz, CP_M_EV,           \
       memset2d##N##_async,                                                                 \
       (CUdeviceptr dstDevice, size_t dstPitch, T V, size_t Width, size_t Height,           \
        CUstream hStream), (dstDevice, dstPitch, V, Width, Height, hStream))
CP_MS_ROWS(8, unsigned char, uc, 0, 0)
CP_MS_ROWS(16, unsigned short, us, 0, 0)
CP_MS_ROWS(32, unsigned int, ui, 0, 0)
#undef CP_MS_ROWS

/* --- contexts -------------------------------------------------------------- */
CP_API(cuCtxCreate_v2, PFN_cuCtxCreate_v3020, CP_M_EV, ctx_create2,
       (CUcontext *pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev))
CP_API(cuCtxCreate_v3, PFN_cuCtxCreate_v11040, CP_M_EV, ctx_create3,
       (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
        CUdevice dev), (pctx, paramsArray, numParams, flags, dev))
CP_API(cuCtxCreate_v4, PFN_cuCtxCreate_v12050, CP_M_EV, ctx_create4,
       (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev),
       (pctx, ctxCreateParams, flags, dev))
CP_API(cuCtxDestroy_v2, PFN_cuCtxDestroy_v4000, CP_M_EV, ctx_destroy, (CUcontext ctx), (ctx))
CP_API(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000, CP_M_EV, ctx_retain,
       (CUcontext *pctx, CUdevice dev), (pctx, dev))
CP_API(cuDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v7000, CP_M_EV, ctx_release,
       (CUdevice dev), (dev))
CP_API(cuDevicePrimaryCtxRelease_v2, PFN_cuDevicePrimaryCtxRelease_v11000, CP_M_EV,
       ctx_release, (CUdevice dev), (dev))
CP_API(cuDevicePrimaryCtxReset, PFN_cuDevicePrimaryCtxReset_v7000, CP_M_EV, ctx_reset,
       (CUdevice dev), (dev))
CP_API(cuDevicePrimaryCtxReset_v2, PFN_cuDevicePrimaryCtxReset_v11000, CP_M_EV, ctx_reset,
       (CUdevice dev), (dev))
CP_API(cuCtxSetCurrent, PFN_cuCtxSetCurrent_v4000, CP_M_EV, ctx_set, (CUcontext ctx), (ctx))
CP_API(cuCtxPushCurrent_v2, PFN_cuCtxPushCurrent_v4000, CP_M_EV, ctx_push, (CUcontext ctx), (ctx))
CP_API(cuCtxPopCurrent_v2, PFN_cuCtxPopCurrent_v4000, CP_M_EV, ctx_pop, (CUcontext *pctx), (pctx))

/* --- streams and synchronisation ------------------------------------------ */
CP_API(cuStreamCreate, PFN_cuStreamCreate_v2000, CP_M_EV, stream_create,
       (CUstream *phStream, unsigned int Flags), (phStream, Flags))
CP_API(cuStreamCreateWithPriority, PFN_cuStreamCreateWithPriority_v5050, CP_M_EV,
       stream_create_prio, (CUstream *phStream, unsigned int flags, int priority),
       (phStream, flags, priority))
CP_API(cuStreamDestroy_v2, PFN_cuStreamDestroy_v4000, CP_M_EV, stream_destroy,
       (CUstream hStream), (hStream))
CP_API(cuStreamBeginCapture, PFN_cuStreamBeginCapture_v10000, CP_M_LITE, capture_begin1,
       (CUstream hStream), (hStream))
CP_API(cuStreamBeginCapture_ptsz, PFN_cuStreamBeginCapture_v10000_ptsz, CP_M_LITE,
       capture_begin1, (CUstream hStream), (hStream))
CP_API(cuStreamBeginCapture_v2, PFN_cuStreamBeginCapture_v10010, CP_M_LITE, capture_begin,
       (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode))
CP_API(cuStreamBeginCapture_v2_ptsz, PFN_cuStreamBeginCapture_v10010_ptsz, CP_M_LITE,
       capture_begin, (CUstream hStream, CUstreamCaptureMode mode), (hStream, mode))
CP_API(cuStreamEndCapture, PFN_cuStreamEndCapture_v10000, CP_M_LITE, capture_end,
       (CUstream hStream, CUgraph *phGraph), (hStream, phGraph))
CP_API(cuStreamEndCapture_ptsz, PFN_cuStreamEndCapture_v10000_ptsz, CP_M_LITE, capture_end,
       (CUstream hStream, CUgraph *phGraph), (hStream, phGraph))
CP_API0(cuCtxSynchronize, PFN_cuCtxSynchronize_v2000, CP_M_EV, ctx_sync)
CP_API(cuCtxSynchronize_v2, PFN_cuCtxSynchronize_v13000, CP_M_EV, ctx_sync2, (CUcontext ctx), (ctx))
CP_API(cuStreamSynchronize, PFN_cuStreamSynchronize_v2000, CP_M_EV, stream_sync,
       (CUstream hStream), (hStream))
CP_API(cuStreamSynchronize_ptsz, PFN_cuStreamSynchronize_v7000_ptsz, CP_M_EV, stream_sync,
       (CUstream hStream), (hStream))
CP_API(cuEventSynchronize, PFN_cuEventSynchronize_v2000, CP_M_EV, event_sync,
       (CUevent hEvent), (hEvent))

/* --- kernels: names and launches ------------------------------------------ */
CP_API(cuModuleGetFunction, PFN_cuModuleGetFunction_v2000, CP_M_LITE, module_get_function,
       (CUfunction *hfunc, CUmodule hmod, const char *name), (hfunc, hmod, name))
CP_API(cuLibraryGetKernel, PFN_cuLibraryGetKernel_v12000, CP_M_LITE, library_get_kernel,
       (CUkernel *pKernel, CUlibrary library, const char *name), (pKernel, library, name))
CP_API(cuKernelGetFunction, PFN_cuKernelGetFunction_v12000, CP_M_LITE, kernel_get_function,
       (CUfunction *pFunc, CUkernel kernel), (pFunc, kernel))
#define CP_LAUNCH_P (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, \
        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, \
        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, \
        void **kernelParams, void **extra)
#define CP_LAUNCH_A (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, \
        sharedMemBytes, hStream, kernelParams, extra)
#define CP_COOP_P (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, \
        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, \
        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, \
        void **kernelParams)
#define CP_COOP_A (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, \
        sharedMemBytes, hStream, kernelParams)
CP_API(cuLaunchKernel, PFN_cuLaunchKernel_v4000, CP_M_LITE, launch, CP_LAUNCH_P, CP_LAUNCH_A)
CP_API(cuLaunchKernel_ptsz, PFN_cuLaunchKernel_v7000_ptsz, CP_M_LITE, launch,
       CP_LAUNCH_P, CP_LAUNCH_A)
CP_API(cuLaunchKernelEx, PFN_cuLaunchKernelEx_v11060, CP_M_LITE, launch_ex,
       (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra),
       (config, f, kernelParams, extra))
CP_API(cuLaunchKernelEx_ptsz, PFN_cuLaunchKernelEx_v11060_ptsz, CP_M_LITE, launch_ex,
       (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra),
       (config, f, kernelParams, extra))
CP_API(cuLaunchCooperativeKernel, PFN_cuLaunchCooperativeKernel_v9000, CP_M_LITE, launch_coop,
       CP_COOP_P, CP_COOP_A)
CP_API(cuLaunchCooperativeKernel_ptsz, PFN_cuLaunchCooperativeKernel_v9000_ptsz, CP_M_LITE,
       launch_coop, CP_COOP_P, CP_COOP_A)
CP_API(cuGraphLaunch, PFN_cuGraphLaunch_v10000, CP_M_LITE, graph_launch,
       (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream))
CP_API(cuGraphLaunch_ptsz, PFN_cuGraphLaunch_v10000_ptsz, CP_M_LITE, graph_launch,
       (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream))
