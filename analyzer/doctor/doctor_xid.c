/*
 * doctor_xid.c - NVIDIA Xid events in the kernel log, for `cuprobe doctor`.
 *
 * Each "NVRM: Xid (PCI:...): N, ..." line (include/cp_kmsg.h parses every
 * driver version's form) is grouped by GPU and code: how many, the first
 * and last time, the processes named, the first and last message.  Each
 * group becomes one check, explained from the shared table
 * (include/cp_xid.h, after NVIDIA's Xid catalogue) with its first action;
 * the cause class places it: hardware Xids at layer 1 ("this GPU"), driver
 * and firmware Xids at layer 2, a program's own faults at layer 2 as
 * warnings ("your code").  The GPU is named by its place on the bus, its
 * UUID and its CUDA ordinal in this process (doctor_hw.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cp_kmsg.h"
#include "cp_xid.h"
#include "doctor_int.h"

/* "NVRM: GPU at PCI:0000:18:00: GPU-0b11d014-..." (logged at start-up and
 * with some Xids): the UUID of a GPU of the log's own machine. */
static void uuid_line(struct cp_dr_klog *log, const char *text)
{
    const char *p = strstr(text, "NVRM: GPU at PCI:");
    unsigned dom, bus, dev, fn;
    size_t n;

    if (!p || log->nuuid == CP_DR_LOG_UUIDS)
        return;
    p += 17;
    if (!cp_kmsg_bdf(&p, &dom, &bus, &dev, &fn) || strncmp(p, ": GPU-", 6) != 0)
        return;
    p += 2;
    for (int i = 0; i < log->nuuid; i++)
        if (log->uuid[i].dom == dom && log->uuid[i].bus == bus && log->uuid[i].dev == dev)
            return;
    n = strspn(p, "GPU-0123456789abcdefABCDEF");
    if (n >= sizeof(log->uuid[0].uuid))
        n = sizeof(log->uuid[0].uuid) - 1;
    log->uuid[log->nuuid].dom = dom, log->uuid[log->nuuid].bus = bus, log->uuid[log->nuuid].dev = dev;
    memcpy(log->uuid[log->nuuid].uuid, p, n);
    log->uuid[log->nuuid++].uuid[n] = '\0';
}

static void add_proc(struct cp_dr_xid *g, const struct cp_kmsg_xid *x)
{
    char one[96];
    size_t len = strlen(g->procs);

    if (x->name[0] && x->pid >= 0)
        snprintf(one, sizeof(one), "%s (pid %lld)", x->name, (long long)x->pid);
    else if (x->name[0])
        snprintf(one, sizeof(one), "%s", x->name);
    else if (x->pid >= 0)
        snprintf(one, sizeof(one), "pid %lld", (long long)x->pid);
    else
        return;
    if (strstr(g->procs, one))
        return;
    if (len + strlen(one) + 8 < sizeof(g->procs))
        snprintf(g->procs + len, sizeof(g->procs) - len, "%s%s", len ? ", " : "", one);
    else if (!strstr(g->procs, ", ..."))
        snprintf(g->procs + len, sizeof(g->procs) - len, ", ...");
}

int cp_dr_xid_line(struct cp_dr_klog *log, const char *text, int64_t us, int64_t wall)
{
    struct cp_kmsg_xid x;
    struct cp_dr_xid *g = NULL;

    if (!cp_kmsg_xid(text, &x)) {
        uuid_line(log, text);
        return 0;
    }
    for (int i = 0; i < log->nxid && !g; i++)
        if (log->xid[i].dom == x.dom && log->xid[i].bus == x.bus && log->xid[i].dev == x.dev &&
            log->xid[i].fn == x.fn && log->xid[i].code == x.code)
            g = &log->xid[i];
    if (!g) {
        if (log->nxid == CP_DR_XID_MAX) {
            log->xid_dropped++;
            return 1;
        }
        g = &log->xid[log->nxid++];
        memset(g, 0, sizeof(*g));
        g->dom = x.dom, g->bus = x.bus, g->dev = x.dev, g->fn = x.fn, g->code = x.code;
        g->first_us = us, g->first_wall = wall;
        snprintf(g->first_msg, sizeof(g->first_msg), "%s", x.msg);
    }
    g->count++;
    g->last_us = us, g->last_wall = wall;
    snprintf(g->last_msg, sizeof(g->last_msg), "%s", x.msg);
    add_proc(g, &x);
    return 1;
}

/* "2025-03-04 14:02:11 (boot + 123.4 s)" into buf for a kernel-clock time
 * us (-1: none) and a wall time (-1: none).  @return : buf. */
static const char *when(const struct cp_dr_klog *log, int64_t us, int64_t wall, char *buf, size_t n)
{
    char boot[48] = "";
    struct tm tm;
    time_t t;

    if (us >= 0)
        snprintf(boot, sizeof(boot), "boot + %.1f s", (double)us / 1e6);
    /* A kernel-clock time becomes a wall time only on the machine that
     * wrote it, with this boot's clock. */
    if (wall < 0 && us >= 0 && !log->foreign && us <= log->now_us)
        wall = log->now_wall - (log->now_us - us + 500000) / 1000000;
    if (wall < 0) {
        snprintf(buf, n, "%s", boot[0] ? boot : "an unknown time");
        return buf;
    }
    t = (time_t)wall;
    localtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
    if (boot[0])
        snprintf(buf + strlen(buf), n - strlen(buf), " (%s)", boot);
    return buf;
}

/* Layer of a class: the hardware's at 1, the rest at the driver's. */
static int class_layer(enum cp_xid_class cls)
{
    return cls == CP_XID_HW ? 1 : 2;
}

int cp_dr_xid_fail_layer(const struct cp_dr_klog *log)
{
    int layer = 0;

    for (int i = 0; i < log->nxid; i++) {
        struct cp_xid_info info = cp_xid_info(log->xid[i].code);
        int l = class_layer(info.cls);

        if (info.sev == 2 && info.cls != CP_XID_APP && (!layer || l < layer))
            layer = l;
    }
    return layer;
}

int cp_dr_xid_checks(struct cp_dr_ctx *ctx)
{
    static const enum cp_dr_mark marks[] = {CP_DR_NOTE, CP_DR_WARN, CP_DR_FAIL};
    const struct cp_dr_klog *log = &ctx->log;

    for (int i = 0; i < log->nxid; i++) {
        const struct cp_dr_xid *g = &log->xid[i];
        struct cp_xid_info info = cp_xid_info(g->code);
        char gpu[96], full[256], first[80], last[80], pci[16];
        size_t short_len = strcspn(info.meaning, ":");
        int idx = cp_dr_pci_find_bdf(ctx, g->dom, g->bus, g->dev, g->fn);
        struct cp_dr_check *c;

        cp_dr_gpu_name(ctx, g->dom, g->bus, g->dev, g->fn, false, gpu, sizeof(gpu));
        cp_dr_gpu_name(ctx, g->dom, g->bus, g->dev, g->fn, true, full, sizeof(full));
        c = cp_dr_add(&ctx->rep, class_layer(info.cls), marks[info.sev], "xid", "Xid %d on %s: %.*s (%s)", g->code,
                      gpu, (int)short_len, info.meaning, cp_xid_whose(info.cls));
        when(log, g->first_us, g->first_wall, first, sizeof(first));
        when(log, g->last_us, g->last_wall, last, sizeof(last));
        if (g->count == 1)
            cp_dr_ev(c, "once, at %s", first);
        else
            cp_dr_ev(c, "%lu times, first at %s, last at %s", g->count, first, last);
        if (g->procs[0])
            cp_dr_ev(c, "; process%s %s", strchr(g->procs, ',') ? "es" : "", g->procs);
        cp_dr_ev(c, "; %s; Xid %d: %s; last message: \"%s\"", full, g->code, info.meaning, g->last_msg);
        cp_dr_fix(c, "%s (NVIDIA's Xid catalogue: %s)", info.action, CP_XID_CATALOGUE);
        cp_dr_kv_int(c, "xid", g->code);
        cp_dr_kv_str(c, "class", cp_xid_class_name(info.cls));
        cp_dr_kv_str(c, "verdict", cp_xid_whose(info.cls));
        snprintf(pci, sizeof(pci), "%04x:%02x:%02x.%x", g->dom, g->bus, g->dev, g->fn);
        cp_dr_kv_str(c, "pci", pci);
        cp_dr_kv_int(c, "physical", idx);
        cp_dr_kv_str(c, "uuid", idx >= 0 ? ctx->pci[idx].uuid : "");
        cp_dr_kv_int(c, "cuda_device", idx >= 0 ? ctx->pci[idx].cuda : -1);
        cp_dr_kv_int(c, "count", (long long)g->count);
        cp_dr_kv_str(c, "first", first);
        cp_dr_kv_str(c, "last", last);
        cp_dr_kv_str(c, "processes", g->procs);
        cp_dr_kv_str(c, "message", g->last_msg);
    }
    if (log->xid_dropped) {
        struct cp_dr_check *c = cp_dr_add(&ctx->rep, 2, CP_DR_NOTE, "xid", "%lu more Xid events not grouped",
                                          log->xid_dropped);

        cp_dr_ev(c, "more than %d GPU and code pairs in the log", CP_DR_XID_MAX);
    }
    return log->nxid;
}
