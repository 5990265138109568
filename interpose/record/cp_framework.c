/*
 * cp_framework.c - CP_REC_FRAMEWORK records from the Python framework
 * companion (see cp_framework.h and docs/framework.md).
 *
 * The companion runs inside the traced Python process and reaches these two
 * functions through ctypes, so they are exported with default visibility
 * while the rest of the shim stays hidden.  They only format records: all
 * I/O stays on the writer thread, as for every other record.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cp_framework.h"
#include "cp_rec.h"

#define CP_FW_EXPORT __attribute__((visibility("default")))

/* Room for "#<i>/<n>" after the kind: two decimal numbers of a size_t. */
#define CP_FW_SUFFIX_MAX 44

/* Whether a kind names an event the process may die of right after: an
 * out-of-memory ("oom", "torch.oom", ...) or the uncaught exception
 * ("exception"): the record must reach the file first. */
static int cp_fw_must_flush(const char *kind, size_t klen)
{
    if (klen == 9 && memcmp(kind, "exception", 9) == 0)
        return 1;
    if (klen == 3)
        return memcmp(kind, "oom", 3) == 0;
    return klen > 4 && memcmp(kind + klen - 4, ".oom", 4) == 0;
}

/* Write one record: kind (klen bytes), payload slice (n bytes). */
static int cp_fw_put(const char *kind, size_t klen, const char *data, size_t n)
{
    return cp_rec_put_framework(kind, klen, data, n) ? -ENOTCONN : 0;
}

/* Write a payload larger than one part as "<kind>#i/n" records.  The parts
 * of one call come from one thread, one after the other, so a reader finds
 * them consecutive among that thread's records. */
static int cp_fw_put_parts(const char *kind, size_t klen, const char *json,
                           size_t len)
{
    char name[CP_FW_KIND_MAX + CP_FW_SUFFIX_MAX];
    size_t nparts = (len + CP_FW_PART_BYTES - 1) / CP_FW_PART_BYTES;
    size_t i;

    for (i = 0; i < nparts; i++) {
        size_t off = i * CP_FW_PART_BYTES;
        size_t n = len - off < CP_FW_PART_BYTES ? len - off : CP_FW_PART_BYTES;
        int nl = snprintf(name, sizeof(name), "%.*s#%zu/%zu", (int)klen, kind,
                          i, nparts);
        int rc;

        if (nl < 0 || (size_t)nl >= sizeof(name))
            return -EINVAL;
        rc = cp_fw_put(name, (size_t)nl, json + off, n);
        if (rc)
            /* Parts already written stay; without their last part a reader
             * drops the whole set. */
            return i == 0 ? rc : -EIO;
    }
    return 0;
}

CP_FW_EXPORT int cuprobe_framework_record(const char *kind, const char *json,
                                          size_t json_len)
{
    size_t klen;
    int rc;

    if (!kind || (!json && json_len))
        return -EINVAL;
    klen = strnlen(kind, CP_FW_KIND_MAX + 1);
    if (klen == 0 || klen > CP_FW_KIND_MAX)
        return -EINVAL;
    if (json_len > CP_FW_MAX_BYTES)
        return -E2BIG;
    if (!cp_rec_on())
        return -ENOTCONN;

    /* A sample is placed on the run's work axis by the launch counts
     * recorded before it; a thread's counts otherwise leave only every
     * few thousand launches, and a short jitted loop of a few hundred
     * steps would reach the trace at exit, after all its samples. */
    cp_rec_catch_up();
    if (json_len <= CP_FW_PART_BYTES)
        rc = cp_fw_put(kind, klen, json, json_len);
    else
        rc = cp_fw_put_parts(kind, klen, json, json_len);

    /* The OOM is often the process's last act: PyTorch raises next, and the
     * program may die before the timed flush.  The companion calls us before
     * any tensor is released, so this is the allocator state at the OOM. */
    if (rc == 0 && cp_fw_must_flush(kind, klen))
        cp_rec_flush();
    return rc;
}

CP_FW_EXPORT int cuprobe_framework_log(const char *text)
{
    if (!text)
        return -EINVAL;
    /* Level 2 (info): recorded in the trace, but silent on stderr unless
     * CUPROBE_LOG asks for it, since the companion must not change what the
     * program prints. */
    cp_log(2, "framework: %s", text);
    return 0;
}

/* The segment watch.  cp_fw_seq is the futex word the waiter sleeps on;
 * the first allocation hook that finds cp_fw_watching set clears it, bumps
 * the word and wakes.  Clearing first means the allocations that follow
 * (an allocator growing takes several segments in a row) cost one relaxed
 * load each, not a syscall, until the sampler waits again. */
_Atomic int cp_fw_watching;
static _Atomic uint32_t cp_fw_seq;

void cp_fw_watch_wake(void)
{
    if (!atomic_exchange_explicit(&cp_fw_watching, 0, memory_order_acq_rel))
        return;
    atomic_fetch_add_explicit(&cp_fw_seq, 1, memory_order_release);
    /* Raw syscall: the hook runs on the program's allocation path and must
     * not touch errno; syscall() would, so save and restore it. */
    int saved = errno;
    syscall(SYS_futex, &cp_fw_seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
    errno = saved;
}

CP_FW_EXPORT int cuprobe_framework_wait(int timeout_ms)
{
    if (timeout_ms < 0)
        return -EINVAL;
    if (!cp_rec_on())
        return -ENOTCONN;
    uint32_t seen = atomic_load_explicit(&cp_fw_seq, memory_order_acquire);
    atomic_store_explicit(&cp_fw_watching, 1, memory_order_release);
    struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
    int saved = errno;
    /* Returns at once (EAGAIN) when an allocation bumped the word after we
     * read it: nothing is missed between the load and the wait. */
    syscall(SYS_futex, &cp_fw_seq, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    errno = saved;
    atomic_store_explicit(&cp_fw_watching, 0, memory_order_release);
    return atomic_load_explicit(&cp_fw_seq, memory_order_acquire) != seen;
}
