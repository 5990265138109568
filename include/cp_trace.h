/*
 * cp_trace.h - the cuprobe trace format, shared by the shim (writer) and the
 * analyzer (reader): framing and enumerations.  The records and their fields
 * are in cp_records.h.  docs/trace-format.md is the prose version (its record
 * table is generated from cp_records.h); change both together.
 *
 * File layout
 *   offset 0: 8-byte magic "CUPROBE\0", u32le format version, u32le flags (0).
 *   offset 16: a sequence of zstd frames.  The writer ends a frame every
 *   CP_FRAME_MAX_BYTES of input and flushes (ZSTD_e_flush) every
 *   CUPROBE_FLUSH_MS, so a file cut anywhere decodes up to its last flush.
 *
 * Decompressed stream: records, back to back.
 *   u8 type | varint len | payload[len]
 * Every payload starts with the record prefix
 *   varint ts_delta   ns since the previous record's time (the first record,
 *                     CP_REC_HEADER, carries the absolute CLOCK_MONOTONIC time)
 *   varint tid        cuprobe's small thread index (see CP_REC_THREAD)
 * followed by the type's fields, in the order cp_records.h lists.  Fields are
 * unsigned LEB128 varints ("u"), zigzag varints ("s"), strings ("str" =
 * varint length + bytes, no NUL) or fixed byte blocks ("bytes[n]").
 * A reader skips unknown types using len, and ignores trailing payload bytes
 * it does not know: new fields are only ever appended.  Records are in
 * non-decreasing time order.  A complete file ends with CP_REC_END.
 *
 * The event prefix ("EV") used by the call records: CP_EV_FIELDS in
 * cp_records.h.
 */
#ifndef CP_TRACE_H
#define CP_TRACE_H

#include <stdint.h>

#define CP_TRACE_MAGIC "CUPROBE"      /* 8 bytes with its NUL */
#define CP_TRACE_VERSION 1u
#define CP_TRACE_PREFIX_BYTES 16u
#define CP_FRAME_MAX_BYTES (4u << 20)

/* The record types and their fields: cp_records.h, the one record table. */
#include "cp_records.h"


/* How the caller obtained the function pointer of an API. */
enum cp_route {
    CP_ROUTE_SYMBOL = 0,   /* plain ELF symbol (PLT) */
    CP_ROUTE_DLSYM = 1,    /* dlsym on libcuda's handle */
    CP_ROUTE_GPA = 2,      /* cuGetProcAddress (4 args) */
    CP_ROUTE_GPA2 = 3,     /* cuGetProcAddress_v2 (5 args) */
};

enum cp_libkind {
    CP_LIB_NOT_FOUND = 0,   /* the loader found no libcuda */
    CP_LIB_DRIVER = 1,      /* a real driver library */
    CP_LIB_STUB = 2,        /* the toolkit's stubs/libcuda.so */
    CP_LIB_OTHER = 3,       /* loaded, kind unknown */
};

/* Memory classes of copy endpoints, and allocation kinds. */
enum cp_mem_class {
    CP_MC_UNKNOWN = 0,
    CP_MC_DEVICE = 1,
    CP_MC_PINNED = 2,       /* cuMemHostAlloc / cuMemAllocHost / host VMM */
    CP_MC_REGISTERED = 3,   /* cuMemHostRegister */
    CP_MC_PAGEABLE = 4,     /* host memory CUDA does not know */
    CP_MC_MANAGED = 5,
    CP_MC_ARRAY = 6,
};

enum cp_mem_kind {
    CP_MK_DEVICE = 1,       /* cuMemAlloc, cuMemAllocPitch */
    CP_MK_ASYNC = 2,        /* cuMemAllocAsync (default or current pool) */
    CP_MK_POOL = 3,         /* cuMemAllocFromPoolAsync */
    CP_MK_MANAGED = 4,
    CP_MK_HOST_PINNED = 5,
    CP_MK_HOST_REGISTERED = 6,
    CP_MK_VMM_PHYS = 7,     /* cuMemCreate on a device */
    CP_MK_VMM_HOST = 8,     /* cuMemCreate on host memory */
};

enum cp_copy_flags {
    CP_CF_ASYNC = 1,
    CP_CF_2D = 2,
    CP_CF_3D = 4,
    CP_CF_PEER = 8,
    CP_CF_BATCH = 16,
    CP_CF_CAPTURING = 32,   /* issued while a stream capture was active */
};

enum cp_ctx_op {
    CP_CTX_CREATE = 1, CP_CTX_DESTROY = 2, CP_CTX_RETAIN = 3,
    CP_CTX_RELEASE = 4, CP_CTX_RESET = 5, CP_CTX_SET = 6, CP_CTX_PUSH = 7,
    CP_CTX_POP = 8,
};

enum cp_stream_op { CP_STREAM_CREATE = 1, CP_STREAM_DESTROY = 2,
                    CP_STREAM_BEGIN_CAPTURE = 3, CP_STREAM_END_CAPTURE = 4 };

enum cp_vmm_op {
    CP_VMM_RESERVE = 1, CP_VMM_ADDR_FREE = 2, CP_VMM_MAP = 3,
    CP_VMM_UNMAP = 4, CP_VMM_SET_ACCESS = 5,
};

enum cp_pool_op {
    CP_POOL_CREATE = 1, CP_POOL_DESTROY = 2, CP_POOL_TRIM = 3,
    CP_POOL_SET_ATTR = 4, CP_POOL_ATTR_AT_FAILURE = 5, CP_POOL_DEFAULT = 6,
};

enum cp_sync_op { CP_SYNC_CTX = 1, CP_SYNC_STREAM = 2, CP_SYNC_EVENT = 3,
                  CP_SYNC_GRAPH_LAUNCH = 4 };

enum cp_end_reason {
    CP_END_EXIT = 1, CP_END__EXIT = 2, CP_END_SIGNAL = 3, CP_END_EXEC = 4,
    CP_END_DESTRUCTOR = 5, CP_END_QUICK_EXIT = 6,
};

/* A CP_REC_FREE carries a call site (EV stack) only when the freed range
 * is unknown (a failed free, whose site its CP_REC_CALL needs) or is one
 * the fragmentation check can name a free site for: a block of a kind that
 * costs a driver round trip to get back (cp_free_site_kind) and at least
 * CP_FREE_SITE_MIN_BYTES large, freed and allocated again at the same size.
 * Nothing reads any other free's site, and PyTorch frees every tensor (under
 * cudaMallocAsync each one through the driver, a capture each), so a site
 * there would cost a capture on the hottest path for nothing. */
#define CP_FREE_SITE_MIN_BYTES (2ull << 20)

/* Whether a free of this cp_mem_kind can be a fragmentation churn's free:
 * cuMemAlloc blocks and VMM physical allocations, which a caching
 * allocator releases and gets back at a driver call's cost.  Stream-ordered
 * pools (ASYNC, POOL) keep freed memory in the pool; host and managed
 * memory is not the device's. */
static inline int cp_free_site_kind(uint64_t kind)
{
    return kind == CP_MK_DEVICE || kind == CP_MK_VMM_PHYS;
}

/* Whether memory of class mclass on device mem_dev, used from a context of
 * device ctx_dev (-1: not known), is another GPU's device memory: the
 * cross-device check's finding for a memset, and so the memsets whose call
 * site the shim keeps. */
static inline int cp_mem_other_gpu(uint64_t mclass, int64_t mem_dev, int64_t ctx_dev)
{
    return mclass == CP_MC_DEVICE && mem_dev >= 0 && ctx_dev >= 0 && mem_dev != ctx_dev;
}

/* Whether an EV stream is one of the default streams: 0 (the legacy NULL
 * stream), 1 (CU_STREAM_LEGACY) and 2 (CU_STREAM_PER_THREAD) belong to
 * whatever context is current, so work on them is never on a stream of
 * another GPU (the cross-device check; the shim's memset sites). */
static inline int cp_stream_default(uint64_t stream)
{
    return stream <= 2;
}

#endif /* CP_TRACE_H */
