/*
 * doctor_nvml.c - what NVIDIA's management library says about each GPU's
 * health, for `cuprobe doctor`; run in the driver child (NVML talks to the
 * driver and can hang like it), before the driver layers.
 *
 * libnvidia-ml.so.1 is loaded with dlopen, never linked: without it the
 * checks are "not checked".  Per GPU: ECC errors (volatile: since the
 * driver loaded; aggregate: the GPU's life), row remapping (pending,
 * failed; retired pages on cards before Ampere), the current clock-throttle
 * reasons, persistence mode, and the PCIe replay counter.  Each GPU's UUID
 * goes to the parent, which names GPUs by it in the kernel-log checks.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "cp_kmsg.h"
#include "cp_nvml.h"
#include "doctor_int.h"

/* Retired pages from this many on: NVIDIA's threshold for a replacement. */
#define NV_RETIRED_RMA 60

#define NV_FNS(X) \
    X(nvmlInit_v2) X(nvmlErrorString) X(nvmlSystemGetDriverVersion) X(nvmlDeviceGetCount_v2) \
    X(nvmlDeviceGetHandleByIndex_v2) X(nvmlDeviceGetPciInfo_v3) X(nvmlDeviceGetUUID) X(nvmlDeviceGetName) \
    X(nvmlDeviceGetEccMode) X(nvmlDeviceGetTotalEccErrors) X(nvmlDeviceGetRemappedRows) \
    X(nvmlDeviceGetRetiredPages) X(nvmlDeviceGetRetiredPagesPendingStatus) \
    X(nvmlDeviceGetCurrentClocksEventReasons) X(nvmlDeviceGetCurrentClocksThrottleReasons) \
    X(nvmlDeviceGetPersistenceMode) X(nvmlDeviceGetPcieReplayCounter)

struct nv {
    void *lib;
#define NV_MEMBER(f) typeof(&f) f;
    NV_FNS(NV_MEMBER)
#undef NV_MEMBER
};

/* The throttle reasons: bit, words, mark (ok: not worth a line). */
static const struct {
    unsigned long long bit;
    const char *what;
    enum cp_dr_mark mark;
} throttle[] = {
    {nvmlClocksThrottleReasonGpuIdle, "idle", CP_DR_OK},
    {nvmlClocksThrottleReasonApplicationsClocksSetting, "application clocks set", CP_DR_OK},
    {nvmlClocksThrottleReasonSwPowerCap, "software power cap", CP_DR_NOTE},
    {nvmlClocksThrottleReasonHwSlowdown, "hardware slowdown (heat or power supply)", CP_DR_WARN},
    {nvmlClocksThrottleReasonSyncBoost, "sync boost", CP_DR_OK},
    {nvmlClocksThrottleReasonSwThermalSlowdown, "software thermal slowdown", CP_DR_WARN},
    {nvmlClocksThrottleReasonHwThermalSlowdown, "hardware thermal slowdown", CP_DR_WARN},
    {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hardware power brake", CP_DR_WARN},
    {nvmlClocksThrottleReasonDisplayClockSetting, "display clock setting", CP_DR_OK},
};

/* What NVML said about one GPU; -1 (or false) where it did not answer. */
struct nv_gpu {
    char bdf[16], uuid[96], name[96];
    int ecc;
    bool have_ecc;
    unsigned long long vol_unc, vol_cor, agg_unc, agg_cor;
    bool have_rows, have_pages;
    unsigned rows_cor, rows_unc, rows_pending, rows_failed;
    unsigned pages_sbe, pages_dbe;
    int pages_pending;
    bool have_thr;
    unsigned long long thr;
    int persist;
    long long replay;
};

static int nv_load(struct nv *nv, char *err, size_t n)
{
    const char *e;

    nv->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nv->lib) {
        e = dlerror();
        snprintf(err, n, "%s", e ? e : "dlopen failed");
        return -1;
    }
#define NV_SYM(f) nv->f = (typeof(&f))dlsym(nv->lib, #f);
    NV_FNS(NV_SYM)
#undef NV_SYM
    if (!nv->nvmlDeviceGetPciInfo_v3) /* drivers before the v3 call: the same layout */
        nv->nvmlDeviceGetPciInfo_v3 = (typeof(&nvmlDeviceGetPciInfo_v3))dlsym(nv->lib, "nvmlDeviceGetPciInfo_v2");
    if (!nv->nvmlInit_v2 || !nv->nvmlDeviceGetCount_v2 || !nv->nvmlDeviceGetHandleByIndex_v2 ||
        !nv->nvmlDeviceGetPciInfo_v3) {
        snprintf(err, n, "libnvidia-ml.so.1 lacks nvmlInit_v2 or the device queries");
        return -1;
    }
    if (!nv->nvmlDeviceGetCurrentClocksEventReasons)
        nv->nvmlDeviceGetCurrentClocksEventReasons = nv->nvmlDeviceGetCurrentClocksThrottleReasons;
    return 0;
}

static const char *nv_err(const struct nv *nv, nvmlReturn_t r)
{
    static char buf[64];

    if (nv->nvmlErrorString)
        return nv->nvmlErrorString(r);
    snprintf(buf, sizeof(buf), "NVML error %d", r);
    return buf;
}

static void nv_query(const struct nv *nv, nvmlDevice_t d, struct nv_gpu *g)
{
    nvmlEnableState_t cur, pend;
    nvmlPciInfo_t pci;
    unsigned dom, bus, dev, fn;
    const char *p = pci.busId;

    memset(g, 0, sizeof(*g));
    g->ecc = g->pages_pending = g->persist = -1;
    g->replay = -1;
    if (nv->nvmlDeviceGetPciInfo_v3(d, &pci) == NVML_SUCCESS && cp_kmsg_bdf(&p, &dom, &bus, &dev, &fn))
        snprintf(g->bdf, sizeof(g->bdf), "%04x:%02x:%02x.%x", dom & 0xffff, bus, dev, fn);
    if (nv->nvmlDeviceGetUUID)
        nv->nvmlDeviceGetUUID(d, g->uuid, sizeof(g->uuid));
    if (nv->nvmlDeviceGetName)
        nv->nvmlDeviceGetName(d, g->name, sizeof(g->name));
    if (nv->nvmlDeviceGetEccMode && nv->nvmlDeviceGetEccMode(d, &cur, &pend) == NVML_SUCCESS)
        g->ecc = cur == NVML_FEATURE_ENABLED;
    if (g->ecc == 1 && nv->nvmlDeviceGetTotalEccErrors) {
        typeof(&nvmlDeviceGetTotalEccErrors) ecc = nv->nvmlDeviceGetTotalEccErrors;

        g->have_ecc =
            ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &g->vol_unc) == NVML_SUCCESS &&
            ecc(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &g->vol_cor) == NVML_SUCCESS &&
            ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &g->agg_unc) == NVML_SUCCESS &&
            ecc(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &g->agg_cor) == NVML_SUCCESS;
    }
    g->have_rows = nv->nvmlDeviceGetRemappedRows &&
                   nv->nvmlDeviceGetRemappedRows(d, &g->rows_cor, &g->rows_unc, &g->rows_pending, &g->rows_failed) ==
                       NVML_SUCCESS;
    if (!g->have_rows && nv->nvmlDeviceGetRetiredPages) {
        unsigned long long addr[1];
        unsigned nd = 0, ns = 0;
        nvmlReturn_t rs = nv->nvmlDeviceGetRetiredPages(d, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
                                                        &ns, addr);
        nvmlReturn_t rd = nv->nvmlDeviceGetRetiredPages(d, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, &nd, addr);

        /* asked with room for none: the count comes back with
         * NVML_ERROR_INSUFFICIENT_SIZE, or with success when it is 0 */
        g->have_pages = (rs == NVML_SUCCESS || rs == NVML_ERROR_INSUFFICIENT_SIZE) &&
                        (rd == NVML_SUCCESS || rd == NVML_ERROR_INSUFFICIENT_SIZE);
        g->pages_sbe = ns, g->pages_dbe = nd;
        if (nv->nvmlDeviceGetRetiredPagesPendingStatus &&
            nv->nvmlDeviceGetRetiredPagesPendingStatus(d, &pend) == NVML_SUCCESS)
            g->pages_pending = pend == NVML_FEATURE_ENABLED;
    }
    g->have_thr = nv->nvmlDeviceGetCurrentClocksEventReasons &&
                  nv->nvmlDeviceGetCurrentClocksEventReasons(d, &g->thr) == NVML_SUCCESS;
    if (nv->nvmlDeviceGetPersistenceMode && nv->nvmlDeviceGetPersistenceMode(d, &cur) == NVML_SUCCESS)
        g->persist = cur == NVML_FEATURE_ENABLED;
    if (nv->nvmlDeviceGetPcieReplayCounter) {
        unsigned v;

        if (nv->nvmlDeviceGetPcieReplayCounter(d, &v) == NVML_SUCCESS)
            g->replay = v;
    }
}

/* The throttle reasons of mask at least as bad as `at`, "a, b" into buf.
 * @return : the worst mark among them (CP_DR_OK for none). */
static enum cp_dr_mark throttle_text(unsigned long long mask, enum cp_dr_mark at, char *buf, size_t n)
{
    enum cp_dr_mark worst = CP_DR_OK;

    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(throttle) / sizeof(throttle[0]); i++) {
        size_t len = strlen(buf);

        if (!(mask & throttle[i].bit) || (throttle[i].mark != at && throttle[i].mark != CP_DR_WARN))
            continue;
        snprintf(buf + len, n - len, "%s%s", len ? ", " : "", throttle[i].what);
        if (throttle[i].mark == CP_DR_WARN || worst == CP_DR_OK)
            worst = throttle[i].mark;
    }
    return worst;
}

/* The summary of one GPU: everything NVML said. */
static void gpu_summary(struct cp_dr_ctx *ctx, const struct nv_gpu *g, const char *who)
{
    struct cp_dr_check *c = cp_dr_add(&ctx->rep, 1, CP_DR_OK, "nvml.gpu", "NVML: %s", who);
    char thr[256];

    cp_dr_ev(c, "%s, %s; ECC %s", g->name, g->uuid, g->ecc < 0 ? "unknown" : g->ecc ? "on" : "off");
    if (g->have_ecc)
        cp_dr_ev(c, ": uncorrected %llu since the driver loaded (%llu in the GPU's life), corrected %llu (%llu)",
                 g->vol_unc, g->agg_unc, g->vol_cor, g->agg_cor);
    if (g->have_rows)
        cp_dr_ev(c, "; remapped rows: %u for uncorrectable, %u for correctable errors, %s%s", g->rows_unc,
                 g->rows_cor, g->rows_pending ? "a remapping pending" : "none pending",
                 g->rows_failed ? ", a remapping FAILED" : "");
    else if (g->have_pages)
        cp_dr_ev(c, "; retired pages: %u double-bit, %u single-bit%s", g->pages_dbe, g->pages_sbe,
                 g->pages_pending == 1 ? ", a retirement pending" : "");
    if (g->have_thr) {
        throttle_text(g->thr, CP_DR_NOTE, thr, sizeof(thr));
        cp_dr_ev(c, "; clocks %s%s (reasons 0x%llx)", thr[0] ? "throttled: " : "not throttled", thr, g->thr);
    }
    cp_dr_ev(c, "; persistence mode %s", g->persist < 0 ? "unknown" : g->persist ? "on" : "off");
    if (g->replay >= 0)
        cp_dr_ev(c, "; PCIe replays %lld", g->replay);
    cp_dr_kv_str(c, "pci", g->bdf);
    cp_dr_kv_str(c, "uuid", g->uuid);
    cp_dr_kv_str(c, "name", g->name);
    cp_dr_kv_int(c, "ecc", g->ecc);
    if (g->have_ecc) {
        cp_dr_kv_int(c, "ecc_volatile_uncorrected", (long long)g->vol_unc);
        cp_dr_kv_int(c, "ecc_volatile_corrected", (long long)g->vol_cor);
        cp_dr_kv_int(c, "ecc_aggregate_uncorrected", (long long)g->agg_unc);
        cp_dr_kv_int(c, "ecc_aggregate_corrected", (long long)g->agg_cor);
    }
    if (g->have_rows) {
        cp_dr_kv_int(c, "remapped_rows_uncorrectable", g->rows_unc);
        cp_dr_kv_int(c, "remapped_rows_correctable", g->rows_cor);
        cp_dr_kv_raw(c, "remap_pending", g->rows_pending ? "true" : "false");
        cp_dr_kv_raw(c, "remap_failed", g->rows_failed ? "true" : "false");
    } else if (g->have_pages) {
        cp_dr_kv_int(c, "retired_pages_dbe", g->pages_dbe);
        cp_dr_kv_int(c, "retired_pages_sbe", g->pages_sbe);
        cp_dr_kv_int(c, "retire_pending", g->pages_pending);
    }
    cp_dr_kv_int(c, "throttle_reasons", g->have_thr ? (long long)g->thr : -1);
    cp_dr_kv_int(c, "persistence", g->persist);
    cp_dr_kv_int(c, "pcie_replays", g->replay);
}

/* The problems NVML shows on one GPU, a check each. */
static void gpu_problems(struct cp_dr_ctx *ctx, const struct nv_gpu *g, const char *who)
{
    struct cp_dr_check *c;
    char thr[256];

    if (g->have_ecc && g->vol_unc) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_FAIL, "nvml.ecc", "%llu uncorrectable ECC error%s on %s", g->vol_unc,
                      g->vol_unc == 1 ? "" : "s", who);
        cp_dr_ev(c, "NVML volatile counter (since the driver loaded or the GPU was reset); %llu in the GPU's life",
                 g->agg_unc);
        cp_dr_fix(c, "reset the GPU (`nvidia-smi -r`) or reboot so the row is remapped; if errors return, run "
                     "`dcgmi diag -r 3` and ask the vendor for a replacement");
    }
    if (g->have_rows && (g->rows_failed || g->rows_pending)) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_FAIL, "nvml.remap", "row remapping %s on %s",
                      g->rows_failed ? "failed" : "pending", who);
        cp_dr_ev(c, "NVML: %u rows remapped for uncorrectable errors, %u for correctable ones", g->rows_unc,
                 g->rows_cor);
        cp_dr_fix(c, "%s", g->rows_failed ? "the GPU's memory has no spare rows left: take it out of service and "
                                            "ask the vendor for a replacement"
                                          : "reset the GPU (`nvidia-smi -r`) or reboot to activate the remapping");
    }
    if (g->have_pages && (g->pages_pending == 1 || g->pages_dbe + g->pages_sbe >= NV_RETIRED_RMA)) {
        c = cp_dr_add(&ctx->rep, 1, g->pages_pending == 1 ? CP_DR_FAIL : CP_DR_WARN, "nvml.remap", "%s on %s",
                      g->pages_pending == 1 ? "page retirement pending" : "many retired pages", who);
        cp_dr_ev(c, "NVML: %u pages retired for double-bit, %u for single-bit errors", g->pages_dbe, g->pages_sbe);
        cp_dr_fix(c, "%s", g->pages_pending == 1 ? "reset the GPU (`nvidia-smi -r`) or reboot to retire the page"
                                                 : "60 or more retired pages: ask the vendor for a replacement");
    }
    if (g->have_thr && throttle_text(g->thr, CP_DR_WARN, thr, sizeof(thr)) == CP_DR_WARN) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_WARN, "nvml.throttle", "clocks of %s throttled: %s", who, thr);
        cp_dr_ev(c, "NVML current clock-throttle reasons 0x%llx", g->thr);
        cp_dr_fix(c, "check cooling (fans, airflow, inlet temperature), the power supply and the GPU's power "
                     "cables; `nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER` shows the details");
        cp_dr_kv_int(c, "throttle_reasons", (long long)g->thr);
    }
    if (g->replay >= CP_DR_AER_STORM) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_WARN, "nvml.replay", "%lld PCIe replays on %s", g->replay, who);
        cp_dr_ev(c, "NVML PCIe replay counter: the link resent that many packets");
        cp_dr_fix(c, "the link loses data: reseat the GPU, check or replace the riser or cable, or try another slot");
    }
    if (g->persist == 0) {
        c = cp_dr_add(&ctx->rep, 2, CP_DR_NOTE, "nvml.persistence", "persistence mode off on %s", who);
        cp_dr_ev(c, "the driver tears the GPU's state down whenever no process uses it, so each program's start "
                    "initialises it again (seconds on many-GPU machines)");
        cp_dr_fix(c, "`sudo nvidia-smi -pm 1` or run nvidia-persistenced");
    }
}

void cp_dr_nvml(struct cp_dr_ctx *ctx)
{
    struct nv nv;
    char err[512], ver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = "?", path[PATH_MAX] = "";
    struct link_map *lm = NULL;
    struct cp_dr_check *c;
    unsigned count = 0;
    nvmlReturn_t r;

    memset(&nv, 0, sizeof(nv));
    cp_dr_send(&ctx->rep, 1, "dlopen(\"libnvidia-ml.so.1\")");
    if (nv_load(&nv, err, sizeof(err)) < 0) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_NOTE, "nvml", "NVML not checked: libnvidia-ml.so.1 does not load");
        cp_dr_ev(c, "%s; ECC, row remapping, throttling, persistence and PCIe replays not checked", err);
        cp_dr_kv_str(c, "dlerror", err);
        return;
    }
    if (dlinfo(nv.lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        snprintf(path, sizeof(path), "%s", lm->l_name);
    cp_dr_send(&ctx->rep, 1, "nvmlInit_v2");
    r = nv.nvmlInit_v2();
    if (r != NVML_SUCCESS) {
        c = cp_dr_add(&ctx->rep, r == NVML_ERROR_GPU_IS_LOST ? 1 : 2,
                      r == NVML_ERROR_GPU_IS_LOST ? CP_DR_FAIL : CP_DR_WARN, "nvml", "nvmlInit failed: %s",
                      nv_err(&nv, r));
        cp_dr_ev(c, "%s; ECC, row remapping, throttling, persistence and PCIe replays not checked", path);
        cp_dr_fix(c, "%s", r == NVML_ERROR_GPU_IS_LOST ? "a GPU is lost: reboot the node and check the kernel log"
                                                       : "check `nvidia-smi`; the NVML library must match the driver");
        cp_dr_kv_int(c, "result", r);
        return;
    }
    if (nv.nvmlSystemGetDriverVersion)
        nv.nvmlSystemGetDriverVersion(ver, sizeof(ver));
    nv.nvmlDeviceGetCount_v2(&count);
    c = cp_dr_add(&ctx->rep, 1, CP_DR_OK, "nvml", "NVML: driver %s, %u GPU%s", ver, count, count == 1 ? "" : "s");
    cp_dr_ev(c, "%s", path);
    cp_dr_kv_str(c, "driver", ver);
    cp_dr_kv_int(c, "count", count);
    cp_dr_kv_str(c, "path", path);
    for (unsigned i = 0; i < count && i < CP_DR_MAX_PCI; i++) {
        char step[64], who[96];
        struct nv_gpu g;
        nvmlDevice_t d;
        unsigned dom, bus, dev, fn;
        const char *p;

        snprintf(step, sizeof(step), "NVML queries (GPU %u)", i);
        cp_dr_send(&ctx->rep, 1, step);
        if (nv.nvmlDeviceGetHandleByIndex_v2(i, &d) != NVML_SUCCESS)
            continue;
        nv_query(&nv, d, &g);
        p = g.bdf;
        if (cp_kmsg_bdf(&p, &dom, &bus, &dev, &fn))
            cp_dr_gpu_name(ctx, dom, bus, dev, fn, false, who, sizeof(who));
        else
            snprintf(who, sizeof(who), "NVML GPU %u", i);
        cp_dr_send_gpu(&ctx->rep, g.bdf, g.uuid, -1);
        gpu_summary(ctx, &g, who);
        gpu_problems(ctx, &g, who);
    }
}
