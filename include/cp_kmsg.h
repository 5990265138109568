/*
 * cp_kmsg.h - lines of the kernel log, for both sides: the shim keeps the
 * lines about NVIDIA Xid events and PCIe AER errors when a run dies of a
 * sticky CUDA error; `cuprobe doctor` and the report explain them.
 *
 * A line comes in one of these shapes (what precedes the message):
 *   /dev/kmsg             "6,1234,5678901,-;"        (prio,seq,usec,flags;)
 *   dmesg, journalctl -o short-monotonic
 *                         "[ 5678.901234] " then maybe "host kernel: "
 *   dmesg -T              "[Tue Mar  4 14:02:11 2025] "
 *   syslog, journalctl    "Mar  4 14:02:11 host kernel: " maybe "[ 5678.9] "
 *   ISO (short-iso, rsyslog, dmesg --time-format iso)
 *                         "2025-03-04T14:02:11.123+0000 host kernel: "
 * each of the last four maybe after dmesg -r's "<3>" (the raw priority) or
 * dmesg -x's "kern  :err   : " (facility and level).
 * The first two give the kernel log's own clock (microseconds since boot,
 * printk's local_clock); the others a wall-clock time.  /dev/kmsg also
 * prints " KEY=value" continuation lines, which carry no message.
 *
 * cp_kmsg_split() and the Xid and AER parsers call nothing but string
 * scanning: the shim runs them inside a flush, possibly in a fatal-signal
 * handler.  cp_kmsg_wall() (mktime) is for the analyzer only.
 */
#ifndef CP_KMSG_H
#define CP_KMSG_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One line, split into its time and its message. */
struct cp_kmsg_line {
    int64_t ts_us;    /* kernel log clock, microseconds since boot; -1: none */
    const char *text; /* the message (points into the line) */
    const char *wall; /* a wall-clock prefix for cp_kmsg_wall(), NULL when none */
};

static inline int cp_kmsg_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Parses unsigned decimal digits at *s; advances *s.  @return : the
 * number of digits read (0: none), the value in *v. */
static inline int cp_kmsg_num(const char **s, int64_t *v)
{
    int n = 0;

    *v = 0;
    while (cp_kmsg_digit(**s) && n < 18) {
        *v = *v * 10 + (**s - '0');
        (*s)++;
        n++;
    }
    return n;
}

/* "[ 123.456789]": seconds and up to 6 decimals.  @return : microseconds,
 * or -1 (then *s is unchanged). */
static inline int64_t cp_kmsg_bracket_ts(const char **s)
{
    const char *p = *s;
    int64_t sec, frac = 0;
    int nd;

    if (*p++ != '[')
        return -1;
    while (*p == ' ')
        p++;
    if (!cp_kmsg_num(&p, &sec) || *p++ != '.')
        return -1;
    nd = cp_kmsg_num(&p, &frac);
    if (!nd || *p++ != ']')
        return -1;
    for (; nd < 6; nd++)
        frac *= 10;
    for (; nd > 6; nd--)
        frac /= 10;
    while (*p == ' ')
        p++;
    *s = p;
    return sec * 1000000 + frac;
}

/* Skips "host kernel: " (journalctl, syslog) when it comes next. */
static inline const char *cp_kmsg_skip_host(const char *p)
{
    const char *sp = strchr(p, ' ');

    if (sp && sp > p && strncmp(sp, " kernel: ", 9) == 0 && !memchr(p, ':', (size_t)(sp - p)))
        return sp + 9;
    return p;
}

/* Skips the time of a syslog ("Mar  4 14:02:11 ") or ISO
 * ("2025-03-04T14:02:11.123+00:00 ") prefix.  @return : what follows, or
 * NULL when neither starts the line. */
static inline const char *cp_kmsg_skip_wall(const char *p)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    const char *q = p;
    int64_t v;

    if (cp_kmsg_num(&q, &v) == 4 && *q == '-' && q[3] == '-' && q[6] == 'T') {
        q = strchr(q, ' ');
        return q ? q + 1 : NULL;
    }
    for (int m = 0; m < 12; m++) {
        if (strncmp(p, months + 3 * m, 3) != 0 || p[3] != ' ')
            continue;
        q = p + 4;
        while (*q == ' ')
            q++;
        if (cp_kmsg_num(&q, &v) < 1 || *q++ != ' ' || cp_kmsg_num(&q, &v) != 2 || *q != ':')
            return NULL;
        q = strchr(q, ' ');
        return q ? q + 1 : NULL;
    }
    return NULL;
}

/* Skips dmesg -r's "<3>" or dmesg -x's "kern  :err   : " at p, which
 * come before a dmesg line's own prefix.  @return : what follows. */
static inline const char *cp_kmsg_skip_dmesg(const char *p)
{
    static const char *const fac[] = {"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
                                      "uucp", "cron", "authpriv", "ftp", "local0", "local1", "local2",
                                      "local3", "local4", "local5", "local6", "local7"};
    static const char *const lvl[] = {"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"};
    const char *q = p;
    size_t n;
    int64_t v;
    int ok = 0;

    if (*q == '<' && (q++, cp_kmsg_num(&q, &v)) && *q == '>')
        return q + 1;
    n = strcspn(p, " :");
    for (size_t i = 0; i < sizeof(fac) / sizeof(fac[0]) && !ok; i++)
        ok = strlen(fac[i]) == n && strncmp(p, fac[i], n) == 0;
    for (q = p + n; *q == ' ';)
        q++;
    if (!ok || *q++ != ':')
        return p;
    n = strcspn(q, " :");
    ok = 0;
    for (size_t i = 0; i < sizeof(lvl) / sizeof(lvl[0]) && !ok; i++)
        ok = strlen(lvl[i]) == n && strncmp(q, lvl[i], n) == 0;
    for (q += n; *q == ' ';)
        q++;
    return ok && q[0] == ':' && q[1] == ' ' ? q + 2 : p;
}

/*! cp_kmsg_split() :
 *  Split one line (NUL-terminated, no newline) into its time and message.
 *  @return : 1 for a message, 0 for a line without one (empty, or a
 *            /dev/kmsg " KEY=value" continuation). */
static inline int cp_kmsg_split(const char *line, struct cp_kmsg_line *out)
{
    const char *p = line, *q;
    int64_t v, ts;

    out->ts_us = -1;
    out->wall = NULL;
    out->text = line;
    if (*p == ' ' || !*p)
        return 0;
    /* /dev/kmsg: prio,seq,usec,flags[,more];message */
    q = p;
    if (cp_kmsg_num(&q, &v) && *q == ',' && (q++, cp_kmsg_num(&q, &v)) && *q == ',' &&
        (q++, cp_kmsg_num(&q, &ts)) && *q == ',' && (q = strchr(q, ';'))) {
        out->ts_us = ts;
        out->text = q + 1;
        return 1;
    }
    p = cp_kmsg_skip_dmesg(p);
    out->text = p;
    if (*p == '[') {
        ts = cp_kmsg_bracket_ts(&p);
        if (ts >= 0) {
            out->ts_us = ts;
            out->text = cp_kmsg_skip_host(p);
            return 1;
        }
        /* dmesg -T: "[Tue Mar  4 14:02:11 2025] message" */
        q = strchr(p, ']');
        if (q && q - p > 20 && q - p < 32) {
            out->wall = p + 1;
            out->text = q[1] == ' ' ? q + 2 : q + 1;
        }
        return 1;
    }
    q = cp_kmsg_skip_wall(p);
    if (q) {
        out->wall = p;
        p = cp_kmsg_skip_host(q);
        ts = cp_kmsg_bracket_ts(&p);
        out->ts_us = ts;
        out->text = p;
    }
    return 1;
}

/*! cp_kmsg_wall() :
 *  The wall-clock time of a cp_kmsg_line's wall prefix, in the local time
 *  zone; a syslog prefix has no year: the latest one not after `now`.
 *  Analyzer only (mktime).  @return : seconds since the epoch, or -1. */
static inline int64_t cp_kmsg_wall(const char *wall, time_t now)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    struct tm tm, nowtm;
    const char *p = wall;
    int64_t v[6];
    time_t t;

    memset(&tm, 0, sizeof(tm));
    tm.tm_isdst = -1;
    if (cp_kmsg_num(&p, &v[0]) == 4 && *p == '-') {
        /* ISO: 2025-03-04T14:02:11[.frac][zone]; the zone is ignored
         * unless it is Z or +0000, which are UTC. */
        const char *z;

        for (int i = 1; i < 6; i++) {
            p++;
            if (!cp_kmsg_num(&p, &v[i]))
                return -1;
        }
        tm.tm_year = (int)v[0] - 1900, tm.tm_mon = (int)v[1] - 1, tm.tm_mday = (int)v[2];
        tm.tm_hour = (int)v[3], tm.tm_min = (int)v[4], tm.tm_sec = (int)v[5];
        while (*p == '.' || *p == ',' || cp_kmsg_digit(*p))
            p++;
        z = p;
        if (*z == 'Z' || strncmp(z, "+0000", 5) == 0 || strncmp(z, "+00:00", 6) == 0)
            return (int64_t)timegm(&tm);
        t = mktime(&tm);
        return t == (time_t)-1 ? -1 : (int64_t)t;
    }
    /* "Mar  4 14:02:11", or dmesg -T's "Tue Mar  4 14:02:11 2025" */
    tm.tm_mon = -1;
    for (int skip = 0; skip <= 4 && tm.tm_mon < 0; skip += 4)
        for (int m = 0; m < 12; m++)
            if (strncmp(wall + skip, months + 3 * m, 3) == 0 && wall[skip + 3] == ' ')
                tm.tm_mon = m, p = wall + skip;
    if (tm.tm_mon < 0)
        return -1;
    p += 3;
    while (*p == ' ')
        p++;
    if (!cp_kmsg_num(&p, &v[0]) || *p++ != ' ' || !cp_kmsg_num(&p, &v[1]) || *p++ != ':' ||
        !cp_kmsg_num(&p, &v[2]) || *p++ != ':' || !cp_kmsg_num(&p, &v[3]))
        return -1;
    tm.tm_mday = (int)v[0], tm.tm_hour = (int)v[1], tm.tm_min = (int)v[2], tm.tm_sec = (int)v[3];
    while (*p == '.' || cp_kmsg_digit(*p))
        p++;
    if (*p == ' ' && cp_kmsg_num((++p, &p), &v[4]) == 4) {
        tm.tm_year = (int)v[4] - 1900;
        t = mktime(&tm);
        return t == (time_t)-1 ? -1 : (int64_t)t;
    }
    localtime_r(&now, &nowtm);
    tm.tm_year = nowtm.tm_year;
    t = mktime(&tm);
    if (t != (time_t)-1 && t > now + 86400) {
        tm.tm_year--;
        tm.tm_isdst = -1;
        t = mktime(&tm);
    }
    return t == (time_t)-1 ? -1 : (int64_t)t;
}

/* ---- NVIDIA Xid events -------------------------------------------------- */

/* "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python3, GPU has fallen
 * off the bus." and its variants: no "PCI:" (older drivers), a function
 * number, pid='<unknown>' or pid='N/A' or none, name=<unknown> or none. */
struct cp_kmsg_xid {
    unsigned dom, bus, dev, fn;
    int code;
    int64_t pid;      /* -1: unknown */
    char name[64];    /* process name, "" when unknown */
    const char *msg;  /* the rest of the message (points into the text) */
};

/* Parses a hex number of at most max digits at *s.  @return : digits read. */
static inline int cp_kmsg_hex(const char **s, unsigned *v, int max)
{
    int n = 0;

    *v = 0;
    for (; n < max; n++, (*s)++) {
        char c = **s;
        unsigned d = cp_kmsg_digit(c) ? (unsigned)(c - '0') : (c | 0x20) >= 'a' && (c | 0x20) <= 'f'
                                                                   ? (unsigned)((c | 0x20) - 'a' + 10)
                                                                   : 16;

        if (d > 15)
            break;
        *v = *v * 16 + d;
    }
    return n;
}

/*! cp_kmsg_bdf() :
 *  Parse a PCI address "dddd:bb:dd[.f]" (the domain may be 4 or 8 digits,
 *  the function defaults to 0) at *s; advances *s.  @return : 1 or 0. */
static inline int cp_kmsg_bdf(const char **s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn)
{
    const char *p = *s;
    int nd = cp_kmsg_hex(&p, dom, 8);

    if (nd < 4 || *p++ != ':' || cp_kmsg_hex(&p, bus, 2) != 2 || *p++ != ':' || cp_kmsg_hex(&p, dev, 2) != 2)
        return 0;
    *fn = 0;
    if (*p == '.' && cp_kmsg_hex((p++, &p), fn, 1) != 1)
        return 0;
    *s = p;
    return 1;
}

/* Copies the value of "key=" at p up to ", " or the end, quotes and <>
 * removed, into out (size n).  @return : just after the value. */
static inline const char *cp_kmsg_field(const char *p, char *out, size_t n)
{
    const char *end = strstr(p, ", ");
    size_t len;

    if (!end)
        end = p + strlen(p);
    len = (size_t)(end - p);
    while (len && (*p == '\'' || *p == '"'))
        p++, len--;
    while (len && (p[len - 1] == '\'' || p[len - 1] == '"'))
        len--;
    if (len >= n)
        len = n - 1;
    memcpy(out, p, len);
    out[len] = '\0';
    if (strcmp(out, "<unknown>") == 0 || strcmp(out, "N/A") == 0)
        out[0] = '\0';
    return *end ? end + 2 : end;
}

/*! cp_kmsg_xid() :
 *  @return : 1 when text is an Xid line (filled into *x), else 0. */
static inline int cp_kmsg_xid(const char *text, struct cp_kmsg_xid *x)
{
    const char *p = strstr(text, "NVRM: Xid (");
    int64_t code;
    char pid[32];

    if (!p)
        return 0;
    p += 11;
    if (strncmp(p, "PCI:", 4) == 0)
        p += 4;
    if (!cp_kmsg_bdf(&p, &x->dom, &x->bus, &x->dev, &x->fn) || strncmp(p, "): ", 3) != 0)
        return 0;
    p += 3;
    if (!cp_kmsg_num(&p, &code))
        return 0;
    x->code = (int)code;
    x->pid = -1;
    x->name[0] = '\0';
    while (*p == ',' || *p == ' ')
        p++;
    if (strncmp(p, "pid=", 4) == 0) {
        const char *q = pid;
        int64_t v;

        p = cp_kmsg_field(p + 4, pid, sizeof(pid));
        if (cp_kmsg_num(&q, &v) && !*q)
            x->pid = v;
    }
    if (strncmp(p, "name=", 5) == 0)
        p = cp_kmsg_field(p + 5, x->name, sizeof(x->name));
    x->msg = p;
    return 1;
}

/* ---- PCIe AER ----------------------------------------------------------- */

enum cp_kmsg_aer_kind {
    CP_AER_NONE = 0,
    CP_AER_RECEIVED,  /* "AER: Corrected error received: 0000:18:00.0" (at the root port) */
    CP_AER_BUS_ERROR, /* "PCIe Bus Error: severity=Corrected, type=..." (at the device) */
    CP_AER_DETAIL,    /* "[ 0] RxErr" / "[ 7] Bad DLLP" (at the device) */
};

/* Severity of an AER error: corrected, uncorrected non-fatal, fatal. */
enum cp_kmsg_aer_sev { CP_AER_COR = 0, CP_AER_NONFATAL = 1, CP_AER_FATAL = 2 };

struct cp_kmsg_aer {
    enum cp_kmsg_aer_kind kind;
    unsigned dom, bus, dev, fn;     /* the device that logged the line */
    unsigned sdom, sbus, sdev, sfn; /* RECEIVED: the device that reported it */
    enum cp_kmsg_aer_sev sev;       /* RECEIVED, BUS_ERROR */
    char name[40];                  /* DETAIL: the error's name */
};

static inline enum cp_kmsg_aer_sev cp_kmsg_aer_sev(const char *p)
{
    const char *end = strstr(p, "error");
    size_t n = end ? (size_t)(end - p) : strcspn(p, ",");
    const char *nf = strstr(p, "Non-Fatal"), *f = strstr(p, "Fatal");

    if (nf && (size_t)(nf - p) < n)
        return CP_AER_NONFATAL;
    if (f && (size_t)(f - p) < n)
        return CP_AER_FATAL;
    return CP_AER_COR;
}

/*! cp_kmsg_aer() :
 *  Parse an AER line of the PCIe port driver or of a device's driver:
 *  "<driver> <dddd:bb:dd.f>: [AER: ]<what>".  @return : its kind
 *  (CP_AER_NONE for other lines), the rest in *a. */
static inline enum cp_kmsg_aer_kind cp_kmsg_aer(const char *text, struct cp_kmsg_aer *a)
{
    const char *p = strchr(text, ' '), *q;
    int aer;

    memset(a, 0, sizeof(*a));
    if (!p || memchr(text, ':', (size_t)(p - text)))
        return CP_AER_NONE;
    p++;
    if (!cp_kmsg_bdf(&p, &a->dom, &a->bus, &a->dev, &a->fn) || *p++ != ':')
        return CP_AER_NONE;
    while (*p == ' ')
        p++;
    aer = strncmp(p, "AER:", 4) == 0;
    if (aer)
        for (p += 4; *p == ' ';)
            p++;
    if (strncmp(p, "PCIe Bus Error: severity=", 25) == 0) {
        a->sev = cp_kmsg_aer_sev(p + 25);
        return a->kind = CP_AER_BUS_ERROR;
    }
    if (*p == '[') {
        /* "[ 7] Bad DLLP" or "[ 0] RxErr                  (First)" */
        int64_t bit;
        size_t n;

        q = p + 1;
        while (*q == ' ')
            q++;
        if (!cp_kmsg_num(&q, &bit) || *q++ != ']')
            return CP_AER_NONE;
        while (*q == ' ')
            q++;
        n = strlen(q);
        if (n > 7 && strcmp(q + n - 7, "(First)") == 0)
            n -= 7;
        while (n && q[n - 1] == ' ')
            n--;
        if (!n)
            return CP_AER_NONE;
        if (n >= sizeof(a->name))
            n = sizeof(a->name) - 1;
        memcpy(a->name, q, n);
        a->name[n] = '\0';
        return a->kind = CP_AER_DETAIL;
    }
    if (!aer)
        return CP_AER_NONE;
    q = strstr(p, "error received: ");
    if (!q)
        return CP_AER_NONE;
    a->sev = cp_kmsg_aer_sev(p);
    q += 16;
    if (strncmp(q, "id=", 3) == 0) {
        /* older kernels: the requester id, bus << 8 | device << 3 | function */
        unsigned id;

        q += 3;
        if (cp_kmsg_hex(&q, &id, 4) != 4)
            return CP_AER_NONE;
        a->sdom = a->dom, a->sbus = id >> 8, a->sdev = (id >> 3) & 0x1f, a->sfn = id & 7;
    } else if (!cp_kmsg_bdf(&q, &a->sdom, &a->sbus, &a->sdev, &a->sfn)) {
        return CP_AER_NONE;
    }
    return a->kind = CP_AER_RECEIVED;
}

/*! cp_kmsg_wanted() :
 *  @return : non-zero for the lines the post-mortem keeps: the NVIDIA
 *            driver's (NVRM: Xid events and what it says around them) and
 *            PCIe AER errors. */
static inline int cp_kmsg_wanted(const char *text)
{
    struct cp_kmsg_aer a;

    return strstr(text, "NVRM: ") != NULL || cp_kmsg_aer(text, &a) != CP_AER_NONE;
}

/* ---- the kernel log's clock ------------------------------------------------ */

/*! cp_kmsg_clock_now() :
 *  The kernel log's clock now, in microseconds since boot.  printk stamps
 *  lines with the scheduler's clock, which drifts from CLOCK_MONOTONIC
 *  (NTP slews only the latter: seconds a week); the scheduler's statistics
 *  of the running thread (se.exec_start of /proc/thread-self/sched, in ms,
 *  kernels with CONFIG_SCHED_DEBUG) give that clock within a tick.
 *  Async-signal-safe (open, read, close).  @return : microseconds, or -1
 *  when the file is not there (then CLOCK_MONOTONIC is the best guess). */
static inline int64_t cp_kmsg_clock_now(void)
{
    static const char *const paths[] = {"/proc/thread-self/sched", "/proc/self/sched"};
    char buf[2048];

    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
        ssize_t got;
        const char *p;
        int64_t ms, frac = 0;
        int nd;

        if (fd < 0)
            continue;
        got = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (got <= 0)
            continue;
        buf[got] = '\0';
        p = strstr(buf, "se.exec_start");
        if (!p || !(p = strchr(p, ':')))
            continue;
        for (p++; *p == ' ';)
            p++;
        if (!cp_kmsg_num(&p, &ms) || *p++ != '.')
            continue;
        nd = cp_kmsg_num(&p, &frac);
        for (; nd < 3; nd++)
            frac *= 10;
        for (; nd > 3; nd--)
            frac /= 10;
        return ms * 1000 + frac;
    }
    return -1;
}

#endif /* CP_KMSG_H */
