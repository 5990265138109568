/*
 * doctor_aer.c - PCIe Advanced Error Reporting for `cuprobe doctor`: the
 * errors on the links between each GPU and the CPU.
 *
 * Two records of the same errors:
 *   sysfs       aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal of the
 *               GPU and of every bridge above it up to the root port (the
 *               device's real path, /sys/devices/pci0000:00/<root>/<bridge>/
 *               <gpu>, lists them), counted since boot;
 *   kernel log  "AER: Corrected error received: <dev>" at the root port,
 *               "PCIe Bus Error: severity=..." and "[ n] RxErr" (or "Bad
 *               TLP", "Bad DLLP", "Replay Timer Timeout") at the device.
 * Correctable errors by the thousand, or any uncorrectable one, mean the
 * link loses data: the slot, a riser or a cable.  The check names the
 * device that counted them and the link it sits on, and joins the link
 * width of the link-training check (doctor_hw.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_kmsg.h"
#include "doctor_int.h"

static const char *const sev_files[3] = {"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal"};

static struct cp_dr_aer *find_dev(struct cp_dr_klog *log, unsigned dom, unsigned bus, unsigned dev, unsigned fn)
{
    struct cp_dr_aer *a;

    for (int i = 0; i < log->naer; i++)
        if (log->aer[i].dom == dom && log->aer[i].bus == bus && log->aer[i].dev == dev && log->aer[i].fn == fn)
            return &log->aer[i];
    if (log->naer == CP_DR_AER_MAX)
        return NULL;
    a = &log->aer[log->naer++];
    memset(a, 0, sizeof(*a));
    a->dom = dom, a->bus = bus, a->dev = dev, a->fn = fn;
    a->gpu = -1;
    a->role = CP_DR_AER_OTHER;
    snprintf(a->bdf, sizeof(a->bdf), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
    return a;
}

/* Counts n more of error `name` in v (at most 8 names). */
static void add_name(struct cp_dr_aer_name *v, int *nv, const char *name, unsigned long long n)
{
    for (int i = 0; i < *nv; i++) {
        if (strcmp(v[i].name, name) == 0) {
            v[i].n += n;
            return;
        }
    }
    if (*nv == 8)
        return;
    snprintf(v[*nv].name, sizeof(v[*nv].name), "%s", name);
    v[(*nv)++].n = n;
}

int cp_dr_aer_line(struct cp_dr_klog *log, const char *text, int *state)
{
    struct cp_kmsg_aer a;
    struct cp_dr_aer *d;

    switch (cp_kmsg_aer(text, &a)) {
    case CP_AER_RECEIVED:
        /* the port that logs it is the root port the error message went
         * to: in another machine's log, the only trace of the path */
        d = find_dev(log, a.sdom, a.sbus, a.sdev, a.sfn);
        if (d)
            d->rcv[a.sev]++;
        if (d && !d->root[0])
            snprintf(d->root, sizeof(d->root), "%04x:%02x:%02x.%x", a.dom, a.bus, a.dev, a.fn);
        return 1;
    case CP_AER_BUS_ERROR:
        d = find_dev(log, a.dom, a.bus, a.dev, a.fn);
        if (d)
            d->log[a.sev]++;
        if (d && strncmp(text, "nvidia ", 7) == 0)
            d->nvidia = true;
        *state = d ? (int)(d - log->aer) : -1;
        return 1;
    case CP_AER_DETAIL:
        /* only right after its device's "PCIe Bus Error" line */
        if (*state < 0 || log->aer[*state].bus != a.bus || log->aer[*state].dev != a.dev ||
            log->aer[*state].fn != a.fn)
            return 0;
        d = &log->aer[*state];
        add_name(d->lname, &d->nl, a.name, 1);
        return 1;
    default:
        return 0;
    }
}

/* "RxErr 12\nBadTLP 0\n...\nTOTAL_ERR_COR 12": the total into *total, the
 * non-zero counters into the device's sysfs names.  @return : 0 or -1. */
static int read_counters(struct cp_dr_aer *d, const char *dir, int sev)
{
    char path[PATH_MAX], text[2048], *line, *save = NULL;
    bool total = false;

    cp_dr_fmt(path, sizeof(path), "%s/%s", dir, sev_files[sev]);
    if (cp_dr_read_file(path, text, sizeof(text)) < 0)
        return -1;
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[40];
        unsigned long long n;

        if (sscanf(line, "%39s %llu", name, &n) != 2)
            continue;
        if (strncmp(name, "TOTAL_ERR_", 10) == 0) {
            d->sys[sev] = n;
            total = true;
        } else if (n) {
            add_name(d->sname, &d->ns, name, n);
        }
    }
    /* kernels before the totals: sum the counters */
    if (!total)
        for (int i = 0; i < d->ns; i++)
            d->sys[sev] += d->sname[i].n;
    d->have_sys = true;
    return 0;
}

/* The device at the end of dir's path, if its name is a PCI address. */
static bool dir_bdf(const char *name, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn)
{
    const char *p = name;

    return cp_kmsg_bdf(&p, dom, bus, dev, fn) && !*p;
}

/* GPU i's path: its real sysfs directory is .../pci0000:00/<root port>/
 * [<bridge>/...]<gpu>; every component named by a PCI address is a device
 * on the path, the first the root port when its parent is the host bridge
 * ("pciDDDD:BB"). */
static void gpu_path(struct cp_dr_ctx *ctx, int gi)
{
    char link[PATH_MAX], real[PATH_MAX], *comp[16];
    int ncomp = 0, first;

    cp_dr_fmt(link, sizeof(link), "%s/bus/pci/devices/%s", ctx->sysfs, ctx->pci[gi].bdf);
    if (!realpath(link, real))
        return;
    for (char *p = strrchr(real, '/'); p && ncomp < 16; p = strrchr(real, '/')) {
        unsigned dom, bus, dev, fn;

        *p = '\0';
        if (!dir_bdf(p + 1, &dom, &bus, &dev, &fn)) {
            *p = '/';
            break;
        }
        comp[ncomp++] = p + 1;
    }
    /* real is now the directory above the path's devices; comp[] lists
     * them from the GPU up, their text still NUL-cut in real */
    first = strncmp(strrchr(real, '/') ? strrchr(real, '/') + 1 : real, "pci", 3) == 0;
    for (int k = 0; k < ncomp; k++) {
        unsigned dom, bus, dev, fn;
        char dir[PATH_MAX];
        struct cp_dr_aer *d;

        dir_bdf(comp[k], &dom, &bus, &dev, &fn);
        d = find_dev(&ctx->log, dom, bus, dev, fn);
        if (!d)
            return;
        d->gpu = gi;
        d->role = k == 0 ? CP_DR_AER_GPU : k == ncomp - 1 && first ? CP_DR_AER_ROOT : CP_DR_AER_BRIDGE;
        snprintf(d->below, sizeof(d->below), "%s", k ? comp[k - 1] : "");
        snprintf(d->above, sizeof(d->above), "%s", k + 1 < ncomp ? comp[k + 1] : "");
        if (first)
            snprintf(d->root, sizeof(d->root), "%s", comp[ncomp - 1]);
        /* the device's own directory: the path's text up to it */
        cp_dr_fmt(dir, sizeof(dir), "%s", real);
        for (int j = ncomp - 1; j >= k; j--)
            cp_dr_fmt(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%s", comp[j]);
        for (int sev = 0; sev < 3; sev++)
            ctx->pci[gi].aer_sys |= read_counters(d, dir, sev) == 0;
    }
}

void cp_dr_aer_sysfs(struct cp_dr_ctx *ctx)
{
    for (int i = 0; i < ctx->npci; i++)
        gpu_path(ctx, i);
}

/* What the two records say: the larger count of each severity (the log
 * says "Multiple ... received" for several, and its lines are rate-limited;
 * sysfs counts every one, but only on kernels that have the files). */
static unsigned long long count(const struct cp_dr_aer *d, int sev)
{
    unsigned long long n = d->rcv[sev] > d->log[sev] ? d->rcv[sev] : d->log[sev];

    return d->sys[sev] > n ? d->sys[sev] : n;
}

int cp_dr_aer_fail_layer(const struct cp_dr_klog *log)
{
    for (int i = 0; i < log->naer; i++)
        if (count(&log->aer[i], 1) || count(&log->aer[i], 2))
            return 1;
    return 0;
}

static void names(struct cp_dr_check *c, const char *what, const struct cp_dr_aer_name *v, int n)
{
    if (!n)
        return;
    cp_dr_ev(c, "; %s:", what);
    for (int i = 0; i < n; i++)
        cp_dr_ev(c, "%s %s %llu", i ? "," : "", v[i].name, v[i].n);
}

/* Another machine's device is a GPU when the nvidia driver logged its
 * errors, or logged an Xid or the UUID for its address. */
static bool foreign_gpu(const struct cp_dr_klog *log, const struct cp_dr_aer *d)
{
    if (d->nvidia)
        return true;
    for (int i = 0; i < log->nxid; i++)
        if (log->xid[i].dom == d->dom && log->xid[i].bus == d->bus && log->xid[i].dev == d->dev &&
            log->xid[i].fn == d->fn)
            return true;
    for (int i = 0; i < log->nuuid; i++)
        if (log->uuid[i].dom == d->dom && log->uuid[i].bus == d->bus && log->uuid[i].dev == d->dev && !d->fn)
            return true;
    return false;
}

/* "bridge 0000:17:00.0 above physical GPU 0 (PCI 0000:18:00.0)" */
static void where(const struct cp_dr_ctx *ctx, const struct cp_dr_aer *d, char *buf, size_t n)
{
    static const char *const role[] = {"", "bridge", "root port", "PCIe device"};
    const struct cp_dr_pci *g = d->gpu >= 0 ? &ctx->pci[d->gpu] : NULL;
    char gpu[96];

    if (!g && d->role == CP_DR_AER_GPU) {
        cp_dr_gpu_name(ctx, d->dom, d->bus, d->dev, d->fn, false, gpu, sizeof(gpu));
        snprintf(buf, n, "%s itself", gpu);
        return;
    }
    if (!g) {
        snprintf(buf, n, "PCIe device %s", d->bdf);
        return;
    }
    cp_dr_gpu_name(ctx, g->dom, g->bus, g->dev, g->fn, false, gpu, sizeof(gpu));
    if (d->role == CP_DR_AER_GPU)
        snprintf(buf, n, "%s itself", gpu);
    else
        snprintf(buf, n, "%s %s above %s", role[d->role], d->bdf, gpu);
}

static void aer_check(struct cp_dr_ctx *ctx, struct cp_dr_aer *d)
{
    unsigned long long cor = count(d, 0), unc = count(d, 1) + count(d, 2), nrcv, nlog;
    enum cp_dr_mark m = unc ? CP_DR_FAIL : cor >= CP_DR_AER_STORM ? CP_DR_WARN : CP_DR_NOTE;
    const struct cp_dr_pci *g = d->gpu >= 0 ? &ctx->pci[d->gpu] : NULL;
    char at[160], link[64] = "", path[96];
    bool via_root = false;
    struct cp_dr_check *c;

    if (!g && ctx->log.foreign && foreign_gpu(&ctx->log, d))
        d->role = CP_DR_AER_GPU;
    where(ctx, d, at, sizeof(at));
    if (unc)
        c = cp_dr_add(&ctx->rep, 1, m, "pcie.aer", "%llu uncorrectable PCIe error%s at %s", unc, unc == 1 ? "" : "s",
                      at);
    else
        c = cp_dr_add(&ctx->rep, 1, m, "pcie.aer", "%llu correctable PCIe error%s at %s", cor, cor == 1 ? "" : "s",
                      at);
    if (d->role == CP_DR_AER_GPU && d->above[0])
        snprintf(link, sizeof(link), "%s - %s", d->above, d->bdf);
    else if (d->below[0])
        snprintf(link, sizeof(link), "%s - %s", d->bdf, d->below);
    cp_dr_ev(c, "corrected %llu, uncorrected non-fatal %llu, fatal %llu", cor, count(d, 1), count(d, 2));
    if (d->have_sys)
        cp_dr_ev(c, " (sysfs since boot: %llu, %llu, %llu)", d->sys[0], d->sys[1], d->sys[2]);
    nrcv = d->rcv[0] + d->rcv[1] + d->rcv[2];
    nlog = d->log[0] + d->log[1] + d->log[2];
    if (nrcv + nlog)
        cp_dr_ev(c, "; kernel log: %llu error report%s at the root port, %llu at the device", nrcv,
                 nrcv == 1 ? "" : "s", nlog);
    names(c, "kernel log errors", d->lname, d->nl);
    names(c, "sysfs counters", d->sname, d->ns);
    if (link[0]) {
        cp_dr_ev(c, "; the link %s%s%s", link, d->root[0] ? ", root port " : "", d->root);
    } else if (d->root[0] && strcmp(d->root, d->bdf) != 0) {
        /* no topology (another machine's log): the port it reported to */
        cp_dr_ev(c, "; reported to root port %s", d->root);
        via_root = true;
    }
    if (g && g->max_width)
        cp_dr_ev(c, "; the GPU's link trained at x%d of x%d%s", g->cur_width, g->max_width,
                 g->cur_width < g->max_width ? " (degraded: the same link)" : "");
    if (via_root)
        snprintf(path, sizeof(path), "the path from root port %s to %s", d->root, d->bdf);
    else
        snprintf(path, sizeof(path), "the link %s", link[0] ? link : d->bdf);
    if (m != CP_DR_NOTE)
        cp_dr_fix(c, "%s%s loses data: reseat the GPU, check or replace the riser or cable, try another "
                     "slot or a lower PCIe generation in the BIOS; errors that follow the GPU to another slot are "
                     "the GPU's",
                  unc ? "an uncorrectable error can drop the GPU off the bus (Xid 79); " : "", path);
    cp_dr_kv_str(c, "device", d->bdf);
    cp_dr_kv_str(c, "role", (const char *[]){"gpu", "bridge", "root_port", "other"}[d->role]);
    cp_dr_kv_str(c, "gpu_pci", g ? g->bdf : d->role == CP_DR_AER_GPU ? d->bdf : "");
    cp_dr_kv_str(c, "link", link);
    cp_dr_kv_str(c, "root_port", d->root);
    cp_dr_kv_int(c, "correctable", (long long)cor);
    cp_dr_kv_int(c, "nonfatal", (long long)count(d, 1));
    cp_dr_kv_int(c, "fatal", (long long)count(d, 2));
}

/* The GPUs whose path to the CPU has no AER counters in sysfs: their
 * links' errors are known only from the kernel log, which is said rather
 * than passed over as a clean link. */
static void no_counters(struct cp_dr_ctx *ctx)
{
    char names[CP_DR_TEXT / 2] = "", pcis[CP_DR_TEXT / 2] = "";
    struct cp_dr_check *c;
    int n = 0;

    for (int i = 0; i < ctx->npci; i++) {
        char gpu[96];
        size_t ln = strlen(names), lp = strlen(pcis);

        if (ctx->pci[i].aer_sys)
            continue;
        cp_dr_gpu_name(ctx, ctx->pci[i].dom, ctx->pci[i].bus, ctx->pci[i].dev, ctx->pci[i].fn, false, gpu,
                       sizeof(gpu));
        snprintf(names + ln, sizeof(names) - ln, "%s%s", n ? ", " : "", gpu);
        snprintf(pcis + lp, sizeof(pcis) - lp, "%s%s", n ? ", " : "", ctx->pci[i].bdf);
        n++;
    }
    if (!n)
        return;
    c = cp_dr_add(&ctx->rep, 1, CP_DR_NOTE, "pcie.aer", "PCIe AER counters not in sysfs for %s", names);
    cp_dr_ev(c, "no aer_dev_correctable, aer_dev_nonfatal or aer_dev_fatal for the GPU%s or the bridges above "
                "%s (a kernel before 4.17, AER off with pci=noaer or by the firmware, or a virtual machine's "
                "bridge without AER): %s PCIe errors are %s",
             n == 1 ? "" : "s", n == 1 ? "it" : "them", n == 1 ? "its" : "their",
             ctx->log.readable ? "known only from the kernel log"
                               : "not checked (the kernel log is not readable either)");
    cp_dr_kv_int(c, "devices", 0);
    cp_dr_kv_str(c, "not_in_sysfs", pcis);
}

int cp_dr_aer_checks(struct cp_dr_ctx *ctx)
{
    struct cp_dr_klog *log = &ctx->log;
    int added = 0, nread = 0;

    for (int i = 0; i < log->naer; i++) {
        struct cp_dr_aer *d = &log->aer[i];

        nread += d->have_sys;
        /* a device on no GPU's path (a disk, a NIC) is not doctor's
         * business, unless the log is another machine's */
        if ((d->gpu < 0 && !log->foreign) || !(count(d, 0) + count(d, 1) + count(d, 2)))
            continue;
        aer_check(ctx, d);
        added++;
    }
    if (!added && nread) {
        struct cp_dr_check *c = cp_dr_add(&ctx->rep, 1, CP_DR_OK, "pcie.aer",
                                          "no PCIe AER errors on the GPUs' paths");

        cp_dr_ev(c, "aer_dev_correctable, aer_dev_nonfatal, aer_dev_fatal of %d device%s (GPUs, bridges, root "
                    "ports) in sysfs",
                 nread, nread == 1 ? "" : "s");
        cp_dr_kv_int(c, "devices", nread);
    }
    if (!log->foreign)
        no_counters(ctx);
    return added;
}
