/*
 * check_kmsg.c - kernel-log: what the kernel log said when the run died.
 *
 * When a call first returned a sticky error (700, 719, 999, ...) or an
 * uncorrectable ECC error, the shim read the kernel log and recorded its
 * NVRM and PCIe AER lines stamped since the process started (CP_REC_KMSG,
 * interpose/record/cp_klog.c).  This check reads them as `cuprobe doctor`
 * does (include/cp_kmsg.h parses them, include/cp_xid.h explains them) and
 * joins them to the error: which GPU, which Xid, how long before the error,
 * and whose fault: "Xid 79 on GPU 1 (PCI 0000:28:00.0) at 14:02:11, 3.0 s
 * before the error: the GPU has fallen off the bus; this is not your code".
 * A log the shim could not read is said in one info finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cp_checks.h"
#include "cp_curesult.h"
#include "cp_kmsg.h"
#include "cp_xid.h"

extern const cp_check cp_check_kmsg; /* defined at the end of this file */

#define KL_LINES 256
#define KL_GROUPS 16

typedef struct kl_state {
    int have;                   /* the first read was recorded */
    uint64_t trigger, source, wall_ns;
    int64_t err, kclock_us;     /* the first read's: at the error */
    uint64_t not_written;       /* lines found beyond those recorded */
    char *line[KL_LINES];
    int n;
    const char *api;            /* the first sticky error's call (ASYNC_ERROR), NULL */
    uint64_t api_result;
} kl_state;

/* One GPU's Xid events of one code, or one device's AER errors (code -1). */
typedef struct kl_group {
    unsigned dom, bus, dev, fn;
    int code;
    unsigned long count, unc;   /* events; AER: uncorrectable ones */
    int64_t first_us;
    const char *first;          /* the first line's text */
    char procs[128];
} kl_group;

static void kl_rec(cp_proc *p, void *st, const cp_record *r)
{
    kl_state *s = st;
    if (r->type == CP_REC_ASYNC_ERROR) {
        const char *n = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
        if (!s->api) {
            s->api = n ? cp_sym_intern(n, strlen(n)) : "a call";
            s->api_result = r->ev.result;
        }
        return;
    }
    const typeof(r->u.kmsg) *k = &r->u.kmsg;
    if (!k->text.n) {
        if (!s->have && k->trigger) {
            s->have = 1;
            s->trigger = k->trigger, s->source = k->source, s->err = k->err;
            s->wall_ns = k->wall_ns;
            /* without the scheduler's clock, CLOCK_MONOTONIC is the guess */
            s->kclock_us = k->kclock_us >= 0 ? k->kclock_us : (int64_t)(k->mono_ns / 1000);
        }
        if (k->lines > KL_LINES)
            s->not_written += k->lines - KL_LINES;
        if (s->have && !s->err)
            s->err = k->err;    /* a read that failed midway */
        return;
    }
    if (s->n < KL_LINES && (s->line[s->n] = malloc(k->text.n + 1))) {
        memcpy(s->line[s->n], k->text.p, k->text.n);
        s->line[s->n++][k->text.n] = 0;
    }
}

static kl_group *kl_find(kl_group *g, int *n, unsigned dom, unsigned bus, unsigned dev, unsigned fn, int code)
{
    for (int i = 0; i < *n; i++)
        if (g[i].dom == dom && g[i].bus == bus && g[i].dev == dev && g[i].fn == fn && g[i].code == code)
            return &g[i];
    if (*n == KL_GROUPS)
        return NULL;
    kl_group *x = &g[(*n)++];
    memset(x, 0, sizeof *x);
    x->dom = dom, x->bus = bus, x->dev = dev, x->fn = fn, x->code = code;
    return x;
}

/* Group the recorded lines: Xid events by GPU and code, AER errors by the
 * device they were reported for.  @return : the number of groups. */
static int kl_group_lines(const kl_state *s, kl_group *g)
{
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        struct cp_kmsg_line l;
        struct cp_kmsg_xid x;
        struct cp_kmsg_aer a;
        kl_group *e = NULL;
        if (!cp_kmsg_split(s->line[i], &l))
            continue;
        if (cp_kmsg_xid(l.text, &x)) {
            e = kl_find(g, &n, x.dom, x.bus, x.dev, x.fn, x.code);
            if (e && x.name[0] && !strstr(e->procs, x.name) &&
                strlen(e->procs) + strlen(x.name) + 3 < sizeof e->procs)
                snprintf(e->procs + strlen(e->procs), sizeof e->procs - strlen(e->procs), "%s%s",
                         e->procs[0] ? ", " : "", x.name);
        } else {
            enum cp_kmsg_aer_kind k = cp_kmsg_aer(l.text, &a);
            if (k == CP_AER_RECEIVED)
                e = kl_find(g, &n, a.sdom, a.sbus, a.sdev, a.sfn, -1);
            else if (k == CP_AER_BUS_ERROR)
                e = kl_find(g, &n, a.dom, a.bus, a.dev, a.fn, -1);
            if (e)
                e->unc += a.sev != CP_AER_COR;
        }
        if (!e)
            continue;
        if (!e->count++) {
            e->first_us = l.ts_us;
            e->first = l.text;
        }
    }
    return n;
}

/* How bad a group is, from 6 down: hardware and driver Xids by their
 * severity (4..6), uncorrectable AER errors (5), the program's own Xids (3),
 * correctable AER errors (1), an Xid that only follows an earlier error
 * (0).  From 4 on, the GPU is at fault. */
static int kl_rank(const kl_group *g)
{
    if (g->code < 0)
        return g->unc ? 5 : 1;
    struct cp_xid_info x = cp_xid_info(g->code);
    if (x.cls == CP_XID_AFTER)
        return 0;
    if (x.cls == CP_XID_APP)
        return x.sev ? 3 : 0;
    return 4 + x.sev;
}

/* Whose fault the worst group says it is: the title's words, the
 * "Verdict:" line's, the details' verdict. */
typedef struct kl_verdict {
    const char *title, *line, *json;
} kl_verdict;

static kl_verdict kl_whose(const kl_group *w)
{
    static const kl_verdict gpu = { "this is not your code", "this GPU, not your code", "this GPU" };
    if (w->code < 0)
        return w->unc ? gpu : (kl_verdict){ "its link loses data", gpu.line, gpu.json };
    switch (cp_xid_info(w->code).cls) {
    case CP_XID_APP:
        return (kl_verdict){ "the program's own fault", "the program's own fault (your code)", "your code" };
    case CP_XID_AFTER:
        return (kl_verdict){ "it follows an earlier error",
                             "not known from the kernel log (the Xid only follows an earlier error)", "unknown" };
    case CP_XID_UNKNOWN:
        return (kl_verdict){ "an Xid cuprobe does not know",
                             "not known: look the Xid up in NVIDIA's catalogue", "unknown" };
    default:
        return gpu;
    }
}

/* "GPU 1 (PCI 0000:28:00.0)": the device as this process numbered it. */
static const char *kl_gpu(const cp_proc *p, const kl_group *g, char *buf, size_t cap)
{
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        if (p->dev[d].seen && p->dev[d].pci_domain == g->dom && p->dev[d].pci_bus == g->bus &&
            p->dev[d].pci_device == g->dev) {
            snprintf(buf, cap, "GPU %d (PCI %04x:%02x:%02x.%x)", d, g->dom, g->bus, g->dev, g->fn);
            return buf;
        }
    snprintf(buf, cap, "the GPU at PCI %04x:%02x:%02x.%x (not one this process used)", g->dom, g->bus, g->dev,
             g->fn);
    return buf;
}

/* "at 14:02:11, 3.0 s before the error" for a kernel-clock time. */
static const char *kl_when(const kl_state *s, int64_t us, char *buf, size_t cap)
{
    if (us < 0) {
        snprintf(buf, cap, "at an unknown time");
        return buf;
    }
    double before = (double)(s->kclock_us - us) / 1e6;
    time_t t = (time_t)((int64_t)(s->wall_ns / 1000000000u) - (s->kclock_us - us + 500000) / 1000000);
    struct tm tm;
    char hms[16];
    localtime_r(&t, &tm);
    strftime(hms, sizeof hms, "%H:%M:%S", &tm);
    snprintf(buf, cap, "at %s, %.1f s %s the error", hms, before < 0 ? -before : before,
             before < 0 ? "after" : "before");
    return buf;
}

static void kl_unreadable(cp_proc *p, const kl_state *s, cp_report *rep)
{
    cp_finding *f = cp_finding_new(rep, &cp_check_kmsg, p,
                                   "the kernel log could not be read at the fatal error (%s): whether the GPU "
                                   "failed is not known", strerror((int)s->err));
    if (!f)
        return;
    f->sev = CP_SEV_INFO;
    f->why = "The shim reads the kernel log when a run dies of a sticky CUDA error, for the NVIDIA "
             "driver's Xid events and PCIe errors; this machine did not let the process read it.";
    f->fix = "Read it as root: `sudo dmesg | grep -i -e xid -e aer`, or run `cuprobe doctor` there; "
             "kernel.dmesg_restrict=0 lets every user read it.";
    cp_finding_line(f, "Source: %s; error %lld.", s->source == 2 ? "the file CUPROBE_KMSG names" : "/dev/kmsg",
                    (long long)s->err);
    cp_jb_ki(&f->details, "errno", s->err);
}

static void kl_finish(cp_proc *p, void *st, cp_report *rep)
{
    kl_state *s = st;
    kl_group g[KL_GROUPS];
    char gpu[96], when[96];
    if (!s->have)
        return;
    if (s->err && !s->n) {
        kl_unreadable(p, s, rep);
        return;
    }
    int n = kl_group_lines(s, g), worst = -1;
    for (int i = 0; i < n; i++)
        if (worst < 0 || kl_rank(&g[i]) > kl_rank(&g[worst]))
            worst = i;
    if (worst < 0)
        return;
    const kl_group *w = &g[worst];
    struct cp_xid_info wx = cp_xid_info(w->code);
    kl_verdict v = kl_whose(w);
    size_t sl = strcspn(wx.meaning, ":");
    cp_finding *f;
    kl_gpu(p, w, gpu, sizeof gpu);
    kl_when(s, w->first_us, when, sizeof when);
    if (w->code >= 0)
        f = cp_finding_new(rep, &cp_check_kmsg, p, "Xid %d on %s %s: %.*s; %s", w->code, gpu, when, (int)sl,
                           wx.meaning, v.title);
    else
        f = cp_finding_new(rep, &cp_check_kmsg, p, "PCIe %s errors for %s %s: %s",
                           w->unc ? "uncorrectable" : "correctable", gpu, when,
                           w->unc ? "its link failed; this is not your code" : v.title);
    if (!f)
        return;
    int rank = kl_rank(w);
    f->sev = rank >= 4 ? CP_SEV_ERROR : rank ? CP_SEV_WARNING : CP_SEV_INFO;
    f->count = 1;
    if (w->code >= 0)
        f->fix = wx.action;
    if (s->api)
        cp_finding_line(f, "The run's error: %s returned %s (%llu).", s->api,
                        cp_curesult_name(s->api_result) ? cp_curesult_name(s->api_result) : "an error",
                        (unsigned long long)s->api_result);
    else
        cp_finding_line(f, "The run's error: a call returned %s (%llu).",
                        cp_curesult_name(s->trigger) ? cp_curesult_name(s->trigger) : "an error",
                        (unsigned long long)s->trigger);
    cp_finding_line(f, "The kernel log (%s), read then, holds %d line%s about the GPUs from this run%s:",
                    s->source == 2 ? "the file CUPROBE_KMSG names" : "/dev/kmsg", s->n, s->n == 1 ? "" : "s",
                    s->not_written ? " (more were not recorded)" : "");
    cp_jb_ks(&f->details, "source", s->source == 2 ? "CUPROBE_KMSG" : "/dev/kmsg");
    cp_jb_key(&f->details, "events");
    cp_jb_open(&f->details, '[');
    for (int i = 0; i < n; i++) {
        const kl_group *e = &g[i];
        struct cp_xid_info x = cp_xid_info(e->code);
        kl_gpu(p, e, gpu, sizeof gpu);
        kl_when(s, e->first_us, when, sizeof when);
        if (e->code >= 0)
            cp_finding_line(f, "  Xid %d on %s, %lu time%s, first %s%s%s: %s (%s).", e->code, gpu, e->count,
                            e->count == 1 ? "" : "s", when, e->procs[0] ? ", process " : "", e->procs, x.meaning,
                            cp_xid_whose(x.cls));
        else
            cp_finding_line(f, "  PCIe AER: %lu error report%s for %s (%lu uncorrectable), first %s.", e->count,
                            e->count == 1 ? "" : "s", gpu, e->unc, when);
        cp_finding_line(f, "      %s", e->first);
        cp_jb_open(&f->details, '{');
        cp_jb_ki(&f->details, "xid", e->code);
        cp_jb_ks(&f->details, "class", e->code >= 0 ? cp_xid_class_name(x.cls) : "pcie");
        cp_jb_ks(&f->details, "gpu", gpu);
        cp_jb_ku(&f->details, "count", e->count);
        cp_jb_ku(&f->details, "uncorrectable", e->unc);
        if (e->first_us >= 0)
            cp_jb_kd(&f->details, "seconds_before_error", (double)(s->kclock_us - e->first_us) / 1e6);
        cp_jb_ks(&f->details, "line", e->first);
        cp_jb_close(&f->details, '}');
    }
    cp_jb_close(&f->details, ']');
    cp_jb_ks(&f->details, "verdict", v.json);
    cp_finding_line(f, "Verdict: %s.", v.line);
    if (w->code >= 0)
        cp_finding_line(f, "First action: %s (NVIDIA's Xid catalogue: %s).", wx.action, CP_XID_CATALOGUE);
}

static void kl_done(void *st)
{
    kl_state *s = st;
    for (int i = 0; s && i < s->n; i++)
        free(s->line[i]);
}

const cp_check cp_check_kmsg = {
    .id = "kernel-log",
    .sev = CP_SEV_ERROR,
    .name = "the kernel log at the fatal error",
    .explain = "When the run died of a sticky CUDA error or an uncorrectable ECC error, the shim read "
               "the kernel log: the NVIDIA driver reports what the GPU did there (Xid events: 79 the "
               "GPU fell off the bus, 48 and 94 ECC errors, 13 and 31 a kernel's bad access) and the "
               "PCIe port driver the errors of the GPU's link (AER). An Xid of the hardware or the "
               "driver shortly before the error means the GPU failed, not the program.",
    .fix = "Follow the first action of the Xid (NVIDIA's Xid catalogue), or run `cuprobe doctor` on "
           "the machine for the GPU's ECC, row remapping and PCIe state.",
    .types = CP_TYPE_BIT(CP_REC_KMSG) | CP_TYPE_BIT(CP_REC_ASYNC_ERROR),
    .state_size = sizeof(kl_state),
    .rec = kl_rec,
    .finish = kl_finish,
    .done = kl_done,
};
