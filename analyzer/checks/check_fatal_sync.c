/*
 * check_fatal_sync.c - a synchronous device error explained with the
 * devices the process sees (see check_fatal_sync.h).
 *
 * CUDA numbers the visible GPUs from 0.  CUDA_VISIBLE_DEVICES lists which
 * physical GPUs those are, by index or UUID (prefix), in order; the driver
 * stops at the first entry it cannot use, so an entry after a bad one hides
 * its GPU too.  The trace has the visible devices (DEVICE records: ordinal,
 * name, UUID, PCI address) and the variable (the header's environment), so
 * ordinal -> physical GPU is written out for the user to compare with
 * nvidia-smi.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fatal_sync.h"
#include "cp_advice.h"
#include "cp_curesult.h"

void cp_sync_rec(cp_proc *p, cp_sync_state *s, const cp_record *r)
{
    uint64_t code = r->ev.result;
    if (!code || cp_cuerr_class(code) != CP_CUERR_SYNC_DEVICE)
        return;
    const char *n = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
    s->have = 1;
    s->code = code;
    s->stack = r->ev.stack;
    s->ts = r->ts;
    s->api = n ? cp_sym_intern(n, strlen(n)) : NULL;
    /* The calls that take a device ordinal from the caller record it. */
    uint64_t op = r->type == CP_REC_CTX ? r->u.ctx.op : 0;
    s->dev = op == CP_CTX_CREATE || op == CP_CTX_RETAIN || op == CP_CTX_RELEASE ||
                     op == CP_CTX_RESET
                 ? r->u.ctx.target_dev
                 : -1;
}

/* The first integer after the pattern pat in src, or -1. */
static int fs_int_after(const char *src, const char *pat)
{
    const char *s = strstr(src, pat);
    if (!s)
        return -1;
    s += strlen(pat);
    while (*s == ' ' || *s == '"' || *s == '\'')
        s++;
    return isdigit((unsigned char)*s) ? atoi(s) : -1;
}

int cp_sync_device_asked(const char *src)
{
    static const char *const pats[] = { "set_device(", "cuda:", "device(\"cuda\",",
                                        "device('cuda',", ".cuda(", "device=", "cuDeviceGet(" };
    for (size_t i = 0; src && i < sizeof pats / sizeof *pats; i++) {
        int d = fs_int_after(src, pats[i]);
        if (d >= 0)
            return d;
    }
    return -1;
}

/* Entry i of CUDA_VISIBLE_DEVICES (cvd) into buf; "" when it has none. */
static const char *fs_cvd_entry(const char *cvd, int i, char *buf, size_t cap)
{
    buf[0] = 0;
    for (const char *s = cvd; s && *s; i--) {
        size_t n = strcspn(s, ",");
        if (i == 0) {
            while (n && *s == ' ')
                s++, n--;
            snprintf(buf, cap, "%.*s", (int)n, s);
            return buf;
        }
        s += n;
        if (*s == ',')
            s++;
    }
    return buf;
}

/* "cuda:0 is physical GPU 2, NAME, GPU-..., PCI ..." for ordinal d. */
static void fs_dev_line(const cp_proc *p, int d, const char *cvd, char *buf, size_t cap)
{
    char u[64], pci[32], ent[80], phys[128];
    const cp_devinfo *di = &p->dev[d];
    cp_dev_uuid(p, d, u, sizeof u);
    cp_dev_pci(p, d, pci, sizeof pci);
    if (!cvd)
        snprintf(phys, sizeof phys, "physical GPU %d", d);
    else if (fs_cvd_entry(cvd, d, ent, sizeof ent)[0] && isdigit((unsigned char)ent[0]))
        snprintf(phys, sizeof phys, "physical GPU %s (entry %d of CUDA_VISIBLE_DEVICES)", ent, d);
    else if (ent[0])
        snprintf(phys, sizeof phys, "%s (entry %d of CUDA_VISIBLE_DEVICES)", ent, d);
    else
        snprintf(phys, sizeof phys, "a GPU");
    snprintf(buf, cap, "cuda:%d is %s, %s, %s, PCI %s", d, phys,
             di->name && di->name[0] ? di->name : "unnamed", u[0] ? u : "no UUID", pci);
}

static int fs_visible(const cp_proc *p)
{
    int n = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        n += p->dev[d].seen;
    return n;
}

void cp_sync_explain(cp_proc *p, const cp_sync_state *s, const cp_exc *e, const char *src, cp_finding *f)
{
    uint64_t code = e && e->cuda_code ? e->cuda_code : s->have ? s->code : 0;
    const char *name = code ? cp_result_name(code) : NULL;
    const char *cvd = cp_proc_env(p, "CUDA_VISIBLE_DEVICES");
    char line[512], cv[160];
    int n = fs_visible(p), asked = cp_sync_device_asked(src);
    int by_line = asked >= 0;
    if (!by_line && s->have && s->dev >= 0 && s->dev <= INT32_MAX)
        asked = (int)s->dev;
    if (code)
        cp_finding_line(f, "%s (%llu): %s.", name ? name : "CUDA error", (unsigned long long)code,
                        cp_result_meaning(code) ? cp_result_meaning(code) : "a device error");
    if (s->have)
        cp_finding_line(f, "Returned by %s%s%s.", s->api ? s->api : "a driver call",
                        s->stack ? " at " : "",
                        s->stack ? cp_site_label(&p->stacks, s->stack) : "");
    cp_finding_line(f, "A synchronous error: the call at the line above failed by itself; no "
                    "kernel failed before it, and a rerun that makes kernels report their "
                    "errors at once would show nothing more.");
    if (cvd)
        snprintf(cv, sizeof cv, "CUDA_VISIBLE_DEVICES=\"%s\": the GPUs it lists, renumbered "
                 "from 0", cvd);
    else
        snprintf(cv, sizeof cv, "CUDA_VISIBLE_DEVICES unset: every GPU of the machine");
    if (n == 0)
        cp_finding_line(f, "This process sees no GPU (%s).", cv);
    else
        cp_finding_line(f, "This process sees %d GPU%s (%s):", n, n == 1 ? "" : "s", cv);
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        if (!p->dev[d].seen)
            continue;
        fs_dev_line(p, d, cvd, line, sizeof line);
        cp_finding_line(f, "  %s", line);
    }
    const char *order = cp_proc_env(p, "CUDA_DEVICE_ORDER");
    if (n > 1 && (!order || strcmp(order, "PCI_BUS_ID") != 0))
        cp_finding_line(f, "  (CUDA numbers GPUs fastest first unless CUDA_DEVICE_ORDER="
                        "PCI_BUS_ID; nvidia-smi numbers them by PCI address, which tells them "
                        "apart)");
    if (asked >= 0 && asked >= n) {
        char have[64];
        if (n == 0)
            snprintf(have, sizeof have, "no device is visible");
        else if (n == 1)
            snprintf(have, sizeof have, "only cuda:0 exists");
        else
            snprintf(have, sizeof have, "only cuda:0 to cuda:%d exist", n - 1);
        cp_finding_line(f, "%s for device %d: it does not exist in this process (%s).",
                        by_line ? "Your line asks" : "The failing call asked", asked, have);
    }
    if (code == 46)
        cp_finding_line(f, "Fix: the GPU is taken (exclusive-process compute mode with another "
                        "process on it: nvidia-smi shows it) or lost (dmesg | grep -i xid); run "
                        "on another GPU.");
    else if (n == 0)
        cp_finding_line(f, "Fix: make a GPU visible to the process (CUDA_VISIBLE_DEVICES, "
                        "docker --gpus all); `cuprobe doctor` checks every layer.");
    else if ((e && e->have_torch) || cp_advice_fw(p) == CP_FWK_TORCH)
        cp_finding_line(f, "Fix: use a device index below torch.cuda.device_count() (%d here), "
                        "e.g. local_rank %% torch.cuda.device_count(), or make that GPU visible "
                        "(CUDA_VISIBLE_DEVICES lists the GPUs a process sees, numbered from 0).",
                        n);
    else
        cp_finding_line(f, "Fix: use a device ordinal below the device count (cuDeviceGetCount, "
                        "cudaGetDeviceCount: %d here), e.g. the local rank modulo that count, or "
                        "make that GPU visible (CUDA_VISIBLE_DEVICES lists the GPUs a process "
                        "sees, numbered from 0).", n);
    f->why = "A CUDA call failed by itself, synchronously: it asked for a device this process "
             "does not see (CUDA numbers the visible GPUs from 0 and CUDA_VISIBLE_DEVICES "
             "chooses them), or the device is taken or lost. The failing call is the one at "
             "the program's line: no kernel failed before it.";
    f->fix = "The one stated above: the failing call is at the program's line, no rerun is "
             "needed to find it.";
    cp_jb_ku(&f->details, "cuda_error", code);
    cp_jb_kb(&f->details, "synchronous", 1);
    cp_jb_ki(&f->details, "visible_devices", n);
    cp_jb_ks(&f->details, "cuda_visible_devices", cvd);
    cp_jb_ki(&f->details, "device_asked", asked);
    cp_jb_ks(&f->details, "failed_call", s->have ? s->api : NULL);
}
