/*
 * cp_framework.h - the exported entry points through which the Python
 * framework companion (scripts/python/cuprobe_companion) writes PyTorch,
 * CuPy and JAX allocator state into the trace.  docs/framework.md gives the
 * JSON schema of each kind.
 *
 * Both functions are part of libcuprobe.so's public ABI (interpose/exports.map)
 * and are called from Python through ctypes, so they take plain C types only
 * and never abort: a failure is a negative errno.
 */
#ifndef CP_FRAMEWORK_H
#define CP_FRAMEWORK_H

#include <stdatomic.h>
#include <stddef.h>

/* A payload longer than this is cut into parts (see cuprobe_framework_record). */
#define CP_FW_PART_BYTES ((size_t)256 << 10)
/* Longest payload accepted; a longer one is refused with -E2BIG. */
#define CP_FW_MAX_BYTES ((size_t)16 << 20)
/* Longest kind accepted, without the part suffix. */
#define CP_FW_KIND_MAX 64

/*! cuprobe_framework_record() : write one CP_REC_FRAMEWORK record (str kind,
 *  str json) on the calling thread.  `json` holds `json_len` bytes (need not
 *  be NUL-terminated; NULL only with json_len 0).  A payload over
 *  CP_FW_PART_BYTES is written as n consecutive records whose kinds are
 *  "<kind>#<i>/<n>" (i from 0), each carrying the next slice of the bytes; a
 *  reader joins them in order.  When kind is "oom" or ends in ".oom" the
 *  recorder is flushed afterwards, so the state at the OOM is on disk even
 *  if the process dies next.  Thread-safe; makes no CUDA calls; must not be
 *  called from inside a cp_rec_begin/commit pair.
 *  @return : 0, -EINVAL (NULL or empty kind, kind longer than CP_FW_KIND_MAX,
 *  NULL json with a length), -E2BIG (json_len > CP_FW_MAX_BYTES), -ENOTCONN
 *  (tracing is off in this process), -EIO (a later part could not be
 *  written: the record set is incomplete and a reader drops it). */
int cuprobe_framework_record(const char *kind, const char *json, size_t json_len);

/*! cuprobe_framework_log() : record `text` as one of the shim's own log lines
 *  (CP_REC_LOG, level 2 = info, prefixed "framework: ") through cp_log(); it
 *  reaches stderr only when CUPROBE_LOG >= 2, so the companion stays silent
 *  by default.  Thread-safe.
 *  @return : 0, or -EINVAL when text is NULL. */
int cuprobe_framework_log(const char *text);

/*! cuprobe_framework_wait() : block the calling thread until the process
 *  next takes device memory from the driver (cuMemAlloc*, cuMemCreate,
 *  cuMemAllocAsync, ...) that brings its live device memory on that device
 *  to a new high since the start (an allocator growing), or timeout_ms
 *  passes.  The companion's sampler thread calls it (through ctypes, which
 *  releases the GIL) to sample the framework's allocator right after a new
 *  segment, instead of only on its timer; an allocation below the peak
 *  (under cudaMallocAsync, every tensor of a steady training step) does
 *  not wake it.  One waiter at a time is expected; more are all woken.
 *  @return : 1 when memory was taken while waiting, 0 on timeout or a
 *  signal, -EINVAL (timeout_ms < 0), -ENOTCONN (tracing is off). */
int cuprobe_framework_wait(int timeout_ms);

/* Set while a waiter is blocked in cuprobe_framework_wait(); read by the
 * allocation hooks (cp_fw_watch_note). */
extern _Atomic int cp_fw_watching;

/*! cp_fw_watch_wake() : wake the waiter (slow path of cp_fw_watch_note). */
void cp_fw_watch_wake(void);

/*! cp_fw_watch_note() : an allocation hook took device memory up to a new
 *  peak (cp_imap_insert said so): wake the companion's sampler if it
 *  waits.  One relaxed load when nobody waits; the first allocation after
 *  a wait began pays one futex wake. */
static inline void cp_fw_watch_note(void)
{
    if (atomic_load_explicit(&cp_fw_watching, memory_order_relaxed))
        cp_fw_watch_wake();
}

#endif /* CP_FRAMEWORK_H */
