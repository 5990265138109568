/*
 * cp_trace.h - the cuprobe trace format, shared by the shim (writer) and the
 * analyzer (reader).  docs/trace-format.md is the prose version of this file;
 * change both together.
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
 * followed by the type's fields, in the order listed below.  Fields are
 * unsigned LEB128 varints ("u"), zigzag varints ("s"), strings ("str" =
 * varint length + bytes, no NUL) or fixed byte blocks ("bytes[n]").
 * A reader skips unknown types using len, and ignores trailing payload bytes
 * it does not know: new fields are only ever appended.  Records are in
 * non-decreasing time order.  A complete file ends with CP_REC_END.
 *
 * The event prefix ("EV") used by the call records is
 *   u api, u result, u ctx, s dev, u stream, u dur_ns, u stack
 * api is an id announced earlier by CP_REC_API; dev is -1 when unknown; stack
 * is 0 when none was taken, else an id announced earlier by CP_REC_STACK.
 */
#ifndef CP_TRACE_H
#define CP_TRACE_H

#include <stdint.h>

#define CP_TRACE_MAGIC "CUPROBE"      /* 8 bytes with its NUL */
#define CP_TRACE_VERSION 1u
#define CP_TRACE_PREFIX_BYTES 16u
#define CP_FRAME_MAX_BYTES (4u << 20)

enum cp_rec_type {
    /* u pid, u ppid, u wall_ns, u root, str host, str exe, str shim_version,
     * u argc, str argv[argc], u nenv, (str name, str value)[nenv],
     * u page_size */
    CP_REC_HEADER = 1,
    /* u os_tid, str name */
    CP_REC_THREAD = 2,
    /* u base, u size, u file_offset, str path, str build_id_hex */
    CP_REC_MODULE = 3,
    /* (no fields) forget all modules: a fresh module map follows */
    CP_REC_MODULE_RESET = 4,
    /* u id, str text */
    CP_REC_STRING = 5,
    /* u id, u n_native, u ip[n_native], u n_py, u pyframe[n_py]
     * native ips innermost first; python frames innermost first */
    CP_REC_STACK = 6,
    /* u api_id, str elf_name, u routes: bit (1 << enum cp_route) set for
     * every route by which the program obtained this function so far */
    CP_REC_API = 7,
    /* str requested, u flags, u ok, str found_path, str error,
     * u lib_kind (enum cp_libkind) */
    CP_REC_DLOPEN = 8,
    /* s driver_version (0 when cuDriverGetVersion failed), u result */
    CP_REC_DRIVER = 9,
    /* u ordinal, str name, bytes[16] uuid, u pci_domain, u pci_bus,
     * u pci_device, u cc_major, u cc_minor, u total_mem, u pageable_access,
     * u uses_host_page_tables, u sm_count */
    CP_REC_DEVICE = 10,
    /* EV: a call with nothing more to say (init, failures of other calls) */
    CP_REC_CALL = 11,
    /* EV, u kind (enum cp_mem_kind), u ptr, u size, u flags, u pool
     * EV's dev is the device holding the memory: for cuMemCreate the
     * location's device, else the calling context's.  For VMM kinds ptr is
     * the physical allocation handle. */
    CP_REC_ALLOC = 12,
    /* EV, u kind, u ptr, u size (0 if not known)
     * Written BEFORE the driver frees (mode CP_M_PRE), so that a thread that
     * is handed the same address next is always later in the trace; result
     * is then 0, and a failed free is followed by a CP_REC_CALL with the
     * driver's error. */
    CP_REC_FREE = 13,
    /* EV, u bytes, u dst_class, s dst_dev, u src_class, s src_dev,
     * u dst_ptr, u src_ptr, u flags (enum cp_copy_flags), u n_batch,
     * u launches: kernel launches this thread made since its previous COPY
     * or SYNC record (tells a sync inside the compute loop from a burst) */
    CP_REC_COPY = 14,
    /* EV, u dst_ptr, u bytes, u dst_class, s dst_dev */
    CP_REC_MEMSET = 15,
    /* EV, u op (enum cp_ctx_op), u target_ctx, s target_dev, u flags */
    CP_REC_CTX = 16,
    /* EV, u op (enum cp_stream_op), u target_stream, u flags, s priority */
    CP_REC_STREAM = 17,
    /* EV, u op (enum cp_vmm_op), u va, u size, u handle, u loc_type,
     * s loc_id, u offset, u flags */
    CP_REC_VMM = 18,
    /* EV, u op (enum cp_pool_op), u pool, s pool_dev, u attr, u value */
    CP_REC_POOL = 19,
    /* u api, u func, u count (launches since the previous record for this
     * function on this thread), str name (may be empty) */
    CP_REC_LAUNCH_COUNT = 20,
    /* EV, u func, u param_index, u ptr, s ptr_dev, u alloc_base,
     * u alloc_size, str func_name */
    CP_REC_XDEV = 21,
    /* EV (of the failed call), u requested, u free, u total,
     * u n_procs, (u pid, u used_bytes)[n_procs] */
    CP_REC_OOM = 22,
    /* EV, u op (enum cp_sync_op), u launches (as in CP_REC_COPY) */
    CP_REC_SYNC = 23,
    /* u child_pid */
    CP_REC_FORK = 24,
    /* str path, s errno_after (0 while the exec is attempted) */
    CP_REC_EXEC = 25,
    /* u signo, s code, u addr */
    CP_REC_SIGNAL = 26,
    /* u records_lost, str why */
    CP_REC_LOST = 27,
    /* u level, str text: the shim's own log lines */
    CP_REC_LOG = 28,
    /* str kind, str json: framework companion data (PyTorch, CuPy, JAX) */
    CP_REC_FRAMEWORK = 29,
    /* u id, u file_str, u func_str, u line: a Python frame */
    CP_REC_PYFRAME = 30,
    /* str symbol, s cuda_version, u flags, u result, u status, u route,
     * u handed_out (1 = cuprobe's wrapper was returned): a driver-function
     * lookup through cuGetProcAddress or dlsym that failed, that asked for
     * the resolver itself, that asked for a higher cuda_version than any
     * lookup before it (so the last such record gives the newest CUDA version
     * a runtime in the process was built for), or a dlsym that handed out a
     * wrapper */
    CP_REC_RESOLVE = 31,
    /* u reason (enum cp_end_reason), s status, u records, u dropped */
    CP_REC_END = 127,
};

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
    CP_END_DESTRUCTOR = 5,
};

/* A CP_REC_FREE carries a call site (EV stack) only when the freed range
 * is at least this large, or its size is unknown: the fragmentation check
 * points at the free of a large block that is allocated again at the same
 * size; nothing reads the site of a small free, and PyTorch frees every
 * tensor, so a site there would cost an unwind on the hottest path.  A
 * failed free always has a site (its CP_REC_CALL). */
#define CP_FREE_SITE_MIN_BYTES (2ull << 20)

#endif /* CP_TRACE_H */
