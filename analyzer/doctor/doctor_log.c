/*
 * doctor_log.c - the kernel log for `cuprobe doctor`: where the NVIDIA
 * driver reports Xid events and the PCIe port driver AER errors.
 *
 * Sources, first readable wins:
 *   --kernel-log FILE   a log copied off another machine (dmesg, dmesg -T,
 *                       journalctl, syslog or /dev/kmsg format); only the
 *                       log is analyzed then
 *   CUPROBE_KMSG=FILE   this machine's log in a file (tests, containers
 *                       given the host's log)
 *   /dev/kmsg           the ring buffer from its start, non-blocking: a
 *                       read never waits for new lines (CUPROBE_DEV_ROOT)
 *   journalctl -k -b    the journal's kernel messages of this boot, where
 *                       the user may read them (groups adm, systemd-journal)
 * Why each source before the one used could not be read (permission,
 * kernel.dmesg_restrict, a container) is kept for the report.  Only the
 * lines about Xid events and AER errors are kept (doctor_xid.c,
 * doctor_aer.c), so a large ring buffer costs no memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_kmsg.h"
#include "doctor_int.h"

struct reader {
    struct cp_dr_klog *log;
    int aer_state;
    unsigned long long stamped; /* lines with a time of their own */
};

static void one_line(void *arg, char *line)
{
    struct reader *rd = arg;
    struct cp_dr_klog *log = rd->log;
    struct cp_kmsg_line l;
    int64_t wall;

    line[strcspn(line, "\r")] = '\0';
    if (!cp_kmsg_split(line, &l))
        return;
    log->lines++;
    rd->stamped += l.ts_us >= 0 || l.wall;
    if (!strstr(l.text, "NVRM: ") && !strstr(l.text, "AER") && !strstr(l.text, "PCIe Bus Error") &&
        !strchr(l.text, '['))
        return; /* the common line: neither parser can match */
    wall = l.wall ? cp_kmsg_wall(l.wall, (time_t)log->now_wall) : -1;
    log->xid_lines += (unsigned long long)cp_dr_xid_line(log, l.text, l.ts_us, wall);
    log->aer_lines += (unsigned long long)cp_dr_aer_line(log, l.text, &rd->aer_state);
}

/* Reads fd to its end (a file) or to the newest record (/dev/kmsg answers
 * EAGAIN then: O_NONBLOCK).  Each read of /dev/kmsg returns one record,
 * which must fit the buffer (else EINVAL), and EPIPE when the ring buffer
 * overwrote the next one: reading goes on.  @return : 0, or -errno when
 * nothing could be read. */
static int read_fd(struct reader *rd, int fd)
{
    static char buf[65536];
    size_t len = 0;
    bool any = false;

    for (;;) {
        ssize_t got = read(fd, buf + len, sizeof(buf) - 1 - len);
        char *start = buf, *nl;

        if (got < 0 && (errno == EINTR || errno == EPIPE))
            continue;
        if (got < 0 && errno == EAGAIN)
            break;
        if (got < 0)
            return any ? 0 : -errno;
        if (got == 0)
            break;
        any = true;
        len += (size_t)got;
        buf[len] = '\0';
        while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
            *nl = '\0';
            one_line(rd, start);
            start = nl + 1;
        }
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
        if (len > sizeof(buf) / 2) { /* a runaway line: take what came */
            buf[len] = '\0';
            one_line(rd, buf);
            len = 0;
        }
    }
    if (len) {
        buf[len] = '\0';
        one_line(rd, buf);
    }
    return 0;
}

static void tried(struct cp_dr_klog *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tried(struct cp_dr_klog *log, const char *fmt, ...)
{
    size_t len = strlen(log->tried);
    va_list ap;

    if (len + 3 >= sizeof(log->tried))
        return;
    if (len)
        len += (size_t)snprintf(log->tried + len, sizeof(log->tried) - len, "; ");
    va_start(ap, fmt);
    vsnprintf(log->tried + len, sizeof(log->tried) - len, fmt, ap);
    va_end(ap);
}

/* A container usually has no /dev/kmsg, or one it may not read. */
static bool in_container(const struct cp_dr_ctx *ctx)
{
    char path[PATH_MAX], text[4096];

    if (access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0)
        return true;
    cp_dr_fmt(path, sizeof(path), "%s/1/cgroup", ctx->procfs);
    return cp_dr_read_file(path, text, sizeof(text)) == 0 &&
           (strstr(text, "docker") || strstr(text, "kubepods") || strstr(text, "containerd") ||
            strstr(text, "lxc") || strstr(text, "libpod"));
}

/* Why opening or reading what (kmsg: the kernel's /dev/kmsg) failed with
 * -err, for the report. */
static void why_not(struct cp_dr_ctx *ctx, const char *what, bool kmsg, int err)
{
    char path[PATH_MAX], v[16] = "";
    bool box = kmsg && in_container(ctx);

    if (!kmsg && err != -ENOENT) {
        tried(&ctx->log, "%s: %s", what, strerror(-err));
    } else if (err == -EACCES || err == -EPERM) {
        cp_dr_fmt(path, sizeof(path), "%s/sys/kernel/dmesg_restrict", ctx->procfs);
        cp_dr_read_file(path, v, sizeof(v));
        tried(&ctx->log, "%s: permission denied (%s%s)", what,
              strcmp(v, "1") == 0 ? "kernel.dmesg_restrict=1: only root or CAP_SYSLOG may read it"
                                  : "not readable by this user",
              box ? "; in a container" : "");
    } else if (err == -ENOENT) {
        tried(&ctx->log, "%s: not present%s", what, box ? " (in a container: the host's log is not passed in)" : "");
    } else {
        tried(&ctx->log, "%s: %s", what, strerror(-err));
    }
}

/* @return : 0 when path was read, else -errno (noted). */
static int read_path(struct cp_dr_ctx *ctx, const char *path, const char *what, bool kmsg)
{
    struct reader rd = {&ctx->log, -1, 0};
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc;

    if (fd < 0) {
        rc = -errno;
        why_not(ctx, what, kmsg, rc);
        return rc;
    }
    rc = read_fd(&rd, fd);
    close(fd);
    if (rc < 0) {
        why_not(ctx, what, kmsg, rc);
        return rc;
    }
    snprintf(ctx->log.source, sizeof(ctx->log.source), "%s", what);
    ctx->log.readable = true;
    return 0;
}

static void read_journal(struct cp_dr_ctx *ctx)
{
    static const char *const argv[] = {"journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic", NULL};
    struct reader rd = {&ctx->log, -1, 0};
    char err[256];
    int rc = cp_dr_run_cmd(argv, ctx->timeout_s, false, one_line, &rd, err, sizeof(err));

    if (rc == 0 && rd.stamped) {
        snprintf(ctx->log.source, sizeof(ctx->log.source), "journalctl -k");
        ctx->log.readable = true;
        return;
    }
    ctx->log.lines = ctx->log.xid_lines = ctx->log.aer_lines = 0;
    if (rc == -ENOENT)
        tried(&ctx->log, "journalctl: not installed");
    else if (rc < 0 || err[0])
        tried(&ctx->log, "journalctl -k: %s", err[0] ? err : strerror(-rc));
    else if (rc > 0)
        tried(&ctx->log, "journalctl -k: exit status %d", rc);
    else
        tried(&ctx->log, "journalctl -k: no kernel messages (no journal, or not in group adm or systemd-journal)");
}

void cp_dr_log_read(struct cp_dr_ctx *ctx)
{
    struct cp_dr_klog *log = &ctx->log;
    const char *env = getenv("CUPROBE_KMSG");
    char path[PATH_MAX], what[PATH_MAX + 32];
    struct timespec ts;

    log->now_wall = (int64_t)time(NULL);
    log->now_us = cp_kmsg_clock_now();
    if (log->now_us < 0) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        log->now_us = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    }
    if (ctx->kernel_log) {
        log->foreign = true;
        cp_dr_fmt(what, sizeof(what), "--kernel-log %s", ctx->kernel_log);
        if (read_path(ctx, ctx->kernel_log, what, false) == 0)
            tried(log, "this machine's own log not read (--kernel-log)");
        return;
    }
    cp_dr_fmt(path, sizeof(path), "%s/kmsg", ctx->devfs);
    if (env && env[0]) {
        cp_dr_fmt(what, sizeof(what), "CUPROBE_KMSG=%s", env);
        if (read_path(ctx, env, what, false) == 0) {
            tried(log, "%s and journalctl -k not read (CUPROBE_KMSG names the log)", path);
            return;
        }
    }
    if (read_path(ctx, path, path, true) == 0) {
        tried(log, "journalctl -k not needed");
        return;
    }
    read_journal(ctx);
}

const char *cp_dr_log_hint(const struct cp_dr_ctx *ctx)
{
    return ctx->log.readable ? "the kernel log's Xid and AER checks (layer 1)"
                             : "`sudo dmesg | grep -i -e xid -e nvrm -e aer` (doctor could not read the kernel log)";
}

static bool log_clean(const struct cp_dr_klog *log)
{
    if (log->nxid)
        return false;
    for (int i = 0; i < log->naer; i++)
        for (int k = 0; k < 3; k++)
            if (log->aer[i].rcv[k] || log->aer[i].log[k])
                return false;
    return true;
}

void cp_dr_log_checks(struct cp_dr_ctx *ctx)
{
    struct cp_dr_klog *log = &ctx->log;
    struct cp_dr_check *c;

    if (!log->readable) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_NOTE, "kernel.log",
                      "kernel log not readable: Xid events and PCIe AER lines not checked");
        cp_dr_ev(c, "%s", log->tried);
        cp_dr_fix(c, "run doctor as root (or `sudo sysctl kernel.dmesg_restrict=0`), add the user to group adm or "
                     "systemd-journal for journalctl, or copy the log out: `sudo dmesg > kern.log; cuprobe doctor "
                     "--kernel-log kern.log`");
    } else if (log_clean(log)) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_OK, "kernel.log", "kernel log: no Xid event, no PCIe AER error");
        cp_dr_ev(c, "%s, %llu lines; %s", log->source, log->lines, log->tried);
    } else {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_NOTE, "kernel.log", "kernel log: %llu Xid line%s, %llu PCIe AER line%s",
                      log->xid_lines, log->xid_lines == 1 ? "" : "s", log->aer_lines, log->aer_lines == 1 ? "" : "s");
        cp_dr_ev(c, "%s, %llu lines; %s", log->source, log->lines, log->tried);
    }
    cp_dr_kv_str(c, "source", log->source);
    cp_dr_kv_raw(c, "readable", log->readable ? "true" : "false");
    cp_dr_kv_raw(c, "foreign", log->foreign ? "true" : "false");
    cp_dr_kv_int(c, "lines", (long long)log->lines);
    cp_dr_kv_int(c, "xid_lines", (long long)log->xid_lines);
    cp_dr_kv_int(c, "aer_lines", (long long)log->aer_lines);
    cp_dr_kv_str(c, "not_used", log->tried);
    cp_dr_xid_checks(ctx);
    cp_dr_aer_checks(ctx);
}
