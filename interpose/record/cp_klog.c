/*
 * cp_klog.c - the kernel log's word on a run's fatal error.
 *
 * A CUDA error 999, or an illegal address the program did not make, is
 * often the GPU's doing: the NVIDIA driver logs an Xid event (79, the GPU
 * fell off the bus; 48 or 94, an ECC error) and the PCIe port driver its
 * AER errors in the kernel log, which the program never sees.  When a
 * call first returns a sticky error or an uncorrectable ECC error, the
 * shim reads the log (/dev/kmsg, or the file CUPROBE_KMSG names) and
 * records its NVRM and AER lines stamped since the process started; the
 * report joins them to the error (analyzer/checks).
 *
 * Only after such an error, never on a call's path otherwise.  The log is
 * opened O_NONBLOCK: /dev/kmsg answers EAGAIN at its newest record instead
 * of waiting for more.  Nothing here allocates or takes a lock, so the
 * re-read that runs before the trace is flushed or closed may run inside a
 * fatal-signal handler; a reader already busy on another thread makes the
 * second one skip.  Lines are filtered by the kernel log's own clock,
 * against the process's start in that clock (cp_kmsg_clock_now() at the
 * read, less the time passed since the start).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_clock.h"
#include "cp_env.h"
#include "cp_klog.h"
#include "cp_kmsg.h"
#include "cp_rec.h"

#define CP_KLOG_MAX_LINES 256       /* lines written per read */

enum { CP_KLOG_SRC_DEV = 1, CP_KLOG_SRC_FILE = 2 };

static uint64_t g_start_ns;         /* the process's start, CLOCK_MONOTONIC */
static int64_t g_newest_us = -1;    /* the newest line recorded */
static atomic_int g_fatal, g_busy;

/* One clock read at load: the kernel log's clock of the start is worked
 * out only at a fatal error, from the time passed since (the two clocks
 * drift apart by milliseconds over hours, not seconds). */
__attribute__((constructor)) static void cp_klog_init(void)
{
    g_start_ns = cp__clock_slow();
}

static uint64_t cp_klog_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The state of one read: what it opened, when, what it found. */
typedef struct cp_klog_rd {
    uint64_t trigger, source, mono_ns, wall_ns;
    int64_t kclock_us, start_us, newest_us;
    uint64_t found, written;
    int opened;                 /* the opening record is written */
} cp_klog_rd;

static void cp_klog_put(const cp_klog_rd *rd, int64_t err, uint64_t found, const char *text, size_t len)
{
    (void)cp_rec_put_kmsg(rd->trigger, rd->source, err, rd->mono_ns, rd->wall_ns, rd->kclock_us, found, text, len);
}

/* One line: kept when it is about the driver or PCIe and stamped since
 * the process started and after what an earlier read recorded. */
static void cp_klog_line(cp_klog_rd *rd, char *line)
{
    struct cp_kmsg_line l;
    if (!cp_kmsg_split(line, &l) || l.ts_us < rd->start_us || l.ts_us <= g_newest_us || !cp_kmsg_wanted(l.text))
        return;
    rd->found++;
    if (l.ts_us > rd->newest_us)
        rd->newest_us = l.ts_us;
    if (!rd->opened++)
        cp_klog_put(rd, 0, 0, "", 0);
    if (rd->written < CP_KLOG_MAX_LINES) {
        rd->written++;
        cp_klog_put(rd, 0, 0, line, strnlen(line, 1024));
    }
}

/* Reads fd to its end or, for /dev/kmsg, to its newest record (EAGAIN);
 * /dev/kmsg gives one record a read and EPIPE for one the ring buffer
 * overwrote meanwhile.  @return : 0, or the errno of a failed read. */
static int cp_klog_drain(cp_klog_rd *rd, int fd)
{
    static char buf[16384];     /* guarded by g_busy */
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd, buf + len, sizeof buf - 1 - len);
        if (got < 0 && (errno == EINTR || errno == EPIPE))
            continue;
        if (got < 0 && errno == EAGAIN)
            break;
        if (got < 0)
            return errno;
        if (got == 0)
            break;
        len += (size_t)got;
        buf[len] = '\0';
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
            *nl = '\0';
            cp_klog_line(rd, start);
            start = nl + 1;
        }
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
        if (len > sizeof buf / 2)
            len = 0;    /* a runaway line: no message of ours is that long */
    }
    if (len) {
        buf[len] = '\0';
        cp_klog_line(rd, buf);
    }
    return 0;
}

static void cp_klog_read(uint64_t trigger)
{
    if (atomic_exchange(&g_busy, 1))
        return;
    int saved_errno = errno;    /* the program's, also inside a signal handler */
    const char *file = cp_config()->kmsg;
    cp_klog_rd rd = { trigger, file ? CP_KLOG_SRC_FILE : CP_KLOG_SRC_DEV, cp__clock_slow(),
                      cp_klog_wall_ns(), cp_kmsg_clock_now(), 0, g_newest_us, 0, 0, 0 };
    /* without the scheduler's clock, CLOCK_MONOTONIC is the best guess */
    int64_t now_us = rd.kclock_us >= 0 ? rd.kclock_us : (int64_t)(rd.mono_ns / 1000);
    rd.start_us = now_us - (int64_t)((rd.mono_ns - g_start_ns) / 1000);
    int err = 0, fd = open(file ? file : "/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    /* The opening record comes before the read's lines, so that the
     * analyzer knows the read (and its clocks) first.  The read at the
     * error always writes it; a later one only when it found something. */
    if (fd < 0) {
        if (trigger)
            cp_klog_put(&rd, errno, 0, "", 0);
    } else {
        if (trigger)
            rd.opened = 1, cp_klog_put(&rd, 0, 0, "", 0);
        err = cp_klog_drain(&rd, fd);
        close(fd);
        if ((err && (trigger || rd.opened)) || rd.found > rd.written)
            cp_klog_put(&rd, err, rd.found, "", 0);
        g_newest_us = rd.newest_us;
    }
    errno = saved_errno;
    atomic_store(&g_busy, 0);
}

/* Lines the driver logs just after the error (the Xid of the fault that
 * made the call fail often follows it) are caught at the next flush, at
 * the latest when the trace is closed. */
static void cp_klog_on_flush(void)
{
    cp_klog_read(0);
}

void cp_klog_fatal(int result)
{
    if (atomic_exchange(&g_fatal, 1))
        return;
    cp_klog_read((uint64_t)result);
    cp_rec_on_flush(cp_klog_on_flush);
}
