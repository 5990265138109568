/*
 * check_errors.c - cuda-errors: every failing driver call, grouped by
 * result code, with what the code means in this process's situation; and
 * the failures that leave no failing call behind: no driver at all (the
 * loader found no libcuda), the toolkit's stub library, a driver older than
 * the runtime (a lookup for a version above the driver's).
 *
 *
 * A driver older than the runtime is judged by what it broke
 * (check_errors_version.c): an error only when a call failed because of it.
 *
 * Not every failure is a problem.  Probes (does this symbol, attribute or
 * peer mapping exist?) fail by design, and at process exit the driver
 * answers CUDA_ERROR_DEINITIALIZED to calls from atexit handlers and library
 * destructors (PyTorch releases its primary contexts there), then
 * CUDA_ERROR_NOT_INITIALIZED: both are reported as info.  So is
 * CUDA_ERROR_NOT_INITIALIZED in a child forked after its parent initialised
 * CUDA, which fork-after-init reports as the error it is.
 *
 * A failure the program recovered from is info too: every API of the group
 * succeeded later in the run (a retry of the same kind, e.g. PyTorch's
 * expandable segments asking cuMemCreate for a shareable handle, getting
 * CUDA_ERROR_NOT_PERMITTED, and asking again without one).  Success is
 * known for the calls that leave a record when they succeed (allocations,
 * copies, contexts, streams, VMM, pools, syncs).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_errors_version.h"
#include "cp_checks.h"
#include "cp_fw.h"

extern const cp_check cp_check_errors;   /* defined at the end of this file */

#define ER_MAX_CODES 64
/* cp_finding.tag of a group of failures at process teardown */
#define ER_TEARDOWN (1ull << 32)

typedef struct cp_errors_code {
    uint64_t code;
    int teardown;               /* failures after the driver began shutting down */
    cp_map agg;                 /* (api << 40) ^ stack -> cp_agg_val */
    uint64_t n;
    int benign;                 /* every failure is a harmless probe */
} cp_errors_code;

#define ER_OK_DIRECT 1024

typedef struct cp_er {
    cp_map ok;                  /* api -> ts of its last success (ids >= ER_OK_DIRECT) */
    /* The same for the ids the shim hands out (its API table's index):
     * every successful call lands here, so no hashing. */
    uint64_t ok_ts[ER_OK_DIRECT];
    unsigned char ok_seen[ER_OK_DIRECT];
    cp_map fail;                /* (code << 32 | teardown << 31 | api) -> ts of the last failure */
    cp_errors_code c[ER_MAX_CODES];
    int n_codes;
    int deinit;                 /* CUDA_ERROR_DEINITIALIZED seen: exit has begun */
    ev_state ver;               /* the driver's version against the runtime's */
    char arch_list[256];
} cp_er;

static const cp_state_map er_maps[] = {
    CP_STATE_MAP(cp_er, ok, uint64_t),
    CP_STATE_MAP(cp_er, fail, uint64_t),
};

static uint64_t er_fail_key(uint64_t code, int teardown, uint64_t api)
{
    return code << 32 | (uint64_t)teardown << 31 | (api & 0x7fffffffu);
}

static int er_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Failures programs provoke on purpose: probing a pointer's kind, a
 * symbol's or a global's presence (cuGetProcAddress for optional entry
 * points, PyTorch and Triton asking for functions a driver may lack), an
 * attribute a driver of this version does not know or support, or enabling
 * peer access twice.  Nothing needs to be done about any of them. */
static int er_benign(const char *api, uint64_t code)
{
    if (code == 704 || code == 705)
        return 1;
    if (!api)
        return 0;
    if (er_prefix(api, "cuPointerGetAttribute") || er_prefix(api, "cuGetProcAddress") ||
        er_prefix(api, "cuGetExportTable"))
        return 1;
    if (code == 500 && (er_prefix(api, "cuModuleGetGlobal") ||
                        er_prefix(api, "cuLibraryGetGlobal") ||
                        er_prefix(api, "cuModuleGetTexRef") ||
                        er_prefix(api, "cuModuleGetSurfRef")))
        return 1;
    /* INVALID_VALUE / NOT_SUPPORTED from a query: an attribute newer than
     * the driver, or a feature this GPU lacks; the caller falls back. */
    if ((code == CUDA_ERROR_INVALID_VALUE || code == 801) &&
        (strstr(api, "GetAttribute") || er_prefix(api, "cuDeviceGetNvSciSyncAttributes") ||
         er_prefix(api, "cuDeviceGetExecAffinitySupport") || er_prefix(api, "cuFlushGPUDirect")))
        return 1;
    return 0;
}

static void er_framework(cp_proc *p, cp_er *s)
{
    /* arch_list comes with every torch record and companion.info. */
    if (s->arch_list[0] || !p->fw_ready_kind)
        return;
    cp_jv v = { p->fw_ready_json, p->fw_ready_len }, m;
    if (cp_json_member(v, "arch_list", &m) == 0 && m.n > 2) {
        size_t n = m.n < sizeof s->arch_list - 1 ? m.n : sizeof s->arch_list - 1;
        memcpy(s->arch_list, m.p, n);
        s->arch_list[n] = 0;
    }
}

static __attribute__((noinline)) void er_rec_full(cp_proc *p, cp_er *s, const cp_record *r)
{
    if (r->type == CP_REC_FRAMEWORK) {
        er_framework(p, s);
        if (p->fw_ready_kind && strcmp(p->fw_ready_kind, "exception") == 0)
            ev_exception(p, &s->ver);
        return;
    }
    if (r->type == CP_REC_RESOLVE) {
        ev_resolve(p, &s->ver, r);
        return;
    }
    uint64_t code = r->ev.result;
    if (code == 0) {
        uint64_t api = r->ev.api;
        if (api < ER_OK_DIRECT) {
            s->ok_ts[api] = r->ts;
            s->ok_seen[api] = 1;
            return;
        }
        uint64_t *t = cp_map_put(&s->ok, api, NULL);
        if (t)
            *t = r->ts;
        return;
    }
    if (code == 600)                /* CUDA_ERROR_NOT_READY: a query's "not yet" */
        return;
    /* The driver has begun tearing down (process exit): from now on
     * DEINITIALIZED and NOT_INITIALIZED answer calls made by atexit
     * handlers and destructors, which is how every exit looks. */
    if (code == 4)
        s->deinit = 1;
    int teardown = code == 4 || (code == CUDA_ERROR_NOT_INITIALIZED && s->deinit);
    int i;
    for (i = 0; i < s->n_codes; i++)
        if (s->c[i].code == code && s->c[i].teardown == teardown)
            break;
    if (i == s->n_codes) {
        if (s->n_codes == ER_MAX_CODES)
            return;
        s->c[i].code = code;
        s->c[i].teardown = teardown;
        s->c[i].benign = 1;
        cp_map_init(&s->c[i].agg, sizeof(cp_agg_val));
        s->n_codes++;
    }
    const char *api = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
    cp_agg_val *v = cp_agg_add(&s->c[i].agg, (r->ev.api << 40) ^ r->ev.stack, r->ev.stack, 0,
                               r->ev.dur_ns, r->ts);
    if (v && !v->note && api)
        v->note = cp_sym_intern(api, strlen(api));
    ev_failure(&s->ver, v && v->note ? v->note : NULL, code);
    s->c[i].n++;
    uint64_t *ft = cp_map_put(&s->fail, er_fail_key(code, teardown, r->ev.api), NULL);
    if (ft)
        *ft = r->ts;
    /* Once one failure with this code was not benign, the code's finding
     * is not: er_benign()'s name comparisons (most of a failing call's
     * cost) would change nothing. */
    if (!teardown && s->c[i].benign && !er_benign(api, code))
        s->c[i].benign = 0;
}

/* The common record, a call that succeeded, without er_rec_full()'s frame:
 * small enough to be inlined into the checks' dispatch (each check's call
 * cost a dozen register saves and restores of a frame its rare paths
 * need). */
__attribute__((always_inline)) inline void
cp_check_errors_rec(cp_proc *p, void *st, const cp_record *r)
{
    cp_er *s = st;
    uint64_t api = r->ev.api;
    if (r->ev.result == 0 && api < ER_OK_DIRECT && r->type != CP_REC_FRAMEWORK &&
        r->type != CP_REC_RESOLVE) {
        s->ok_ts[api] = r->ts;
        s->ok_seen[api] = 1;
        return;
    }
    er_rec_full(p, s, r);
}

/* What code means when this API returned it, where that says more than the
 * code alone; NULL otherwise. */
static const char *er_context(const char *api, uint64_t code)
{
    if (!api)
        return NULL;
    int vmm_share = er_prefix(api, "cuMemCreate") || er_prefix(api, "cuMemExportToShareable") ||
                    er_prefix(api, "cuMemImportFromShareable");
    if (code == 800 && vmm_share)
        return "the allocator asked for a shareable memory handle (a POSIX file descriptor "
               "for IPC, or a fabric handle for multi-node NVLink) that this container or "
               "driver setting forbids (no IMEX channel, the capability not granted to the "
               "container); allocators such as PyTorch's expandable segments and NCCL probe "
               "for it and continue without";
    if (code == 801 && vmm_share)
        return "this driver or GPU does not offer the shareable handle type asked for "
               "(fabric handles need multi-node NVLink); the allocator falls back to memory "
               "without it";
    if (code == 712 && er_prefix(api, "cuMemHostRegister"))
        return "the buffer was already pinned (registered earlier, or allocated pinned): it "
               "stays usable as it is";
    if (code == 217 || (code == 1 && er_prefix(api, "cuCtxEnablePeerAccess")))
        return "these two GPUs cannot reach each other's memory directly (no peer-to-peer "
               "over this PCIe/NVLink topology, or inside this VM); frameworks then copy "
               "through the host";
    return NULL;
}

static void er_version(char *buf, size_t cap, int64_t v)
{
    snprintf(buf, cap, "%lld.%lld", (long long)(v / 1000), (long long)(v % 1000 / 10));
}

static int cp_cvd_hides_all(const char *cvd)
{
    if (!cvd)
        return 0;
    while (*cvd == ' ')
        cvd++;
    return !*cvd || strcmp(cvd, "-1") == 0 || strcasecmp(cvd, "none") == 0 ||
           strcasecmp(cvd, "NoDevFiles") == 0 || strcmp(cvd, ",") == 0;
}

typedef struct cp_errors_apis {
    const char *top;            /* the API with the most failures */
    uint64_t top_n, n_apis;
    int recovered;              /* every API of the group succeeded after its last failure */
} cp_errors_apis;

static void er_group_apis(cp_er *s, const cp_errors_code *c, cp_errors_apis *a)
{
    const char *seen[16];
    size_t n_seen = 0, it = 0;
    uint64_t key;
    cp_agg_val *v;
    *a = (cp_errors_apis){ .recovered = 1 };
    while ((v = cp_map_next((cp_map *)&c->agg, &it, &key))) {
        uint64_t api = (key ^ v->stack) >> 40;
        const uint64_t *ft = cp_map_get(&s->fail, er_fail_key(c->code, c->teardown, api));
        const uint64_t *ok = api >= ER_OK_DIRECT ? cp_map_get(&s->ok, api)
                           : s->ok_seen[api] ? &s->ok_ts[api] : NULL;
        if (!ft || !ok || *ok <= *ft)
            a->recovered = 0;
        size_t i;
        for (i = 0; i < n_seen && seen[i] != v->note; i++)
            ;
        if (i == n_seen && n_seen < sizeof seen / sizeof *seen)
            seen[n_seen++] = v->note;
        if (v->note && v->count > a->top_n) {
            a->top = v->note;
            a->top_n = v->count;
        }
    }
    a->n_apis = n_seen;
}

static void er_code_finding(cp_proc *p, cp_er *s, cp_errors_code *c, cp_report *rep)
{
    const char *name = cp_result_name(c->code);
    char meaning[512], v1[32], from[160] = "";
    cp_errors_apis a;
    er_group_apis(s, c, &a);
    const char *m = a.n_apis == 1 ? er_context(a.top, c->code) : NULL;
    if (!m)
        m = cp_result_meaning(c->code);
    if (m)
        snprintf(meaning, sizeof meaning, "%s", m);
    else
        snprintf(meaning, sizeof meaning, "a code cuprobe has no explanation for (cuGetErrorString "
                 "names it); the failing API and its call site are listed below");
    if (a.top)
        snprintf(from, sizeof from, " from %s%s", a.top, a.n_apis > 1 ? " and other APIs" : "");
    if (c->teardown) {
        snprintf(meaning, sizeof meaning, "calls made while the process exited, after the "
                 "driver had begun shutting down (atexit handlers and library destructors, "
                 "e.g. PyTorch releasing its contexts): normal at exit, nothing to fix");
    } else if (c->code == 100) {
        const char *cvd = cp_proc_env(p, "CUDA_VISIBLE_DEVICES");
        if (cp_cvd_hides_all(cvd))
            snprintf(meaning, sizeof meaning,
                     "every GPU is hidden by CUDA_VISIBLE_DEVICES=\"%s\"", cvd);
        else if (cvd)
            snprintf(meaning, sizeof meaning,
                     "no CUDA device is visible: CUDA_VISIBLE_DEVICES=\"%s\" names no GPU "
                     "that exists, or the machine (container) has none", cvd);
        else
            snprintf(meaning, sizeof meaning,
                     "no CUDA device is visible: none is installed, or the container was "
                     "started without GPUs (docker --gpus all)");
    } else if (c->code == 209) {
        int d = 0;
        while (d < CP_MAX_DEV - 1 && !p->dev[d].seen)
            d++;
        if (p->dev[d].seen)
            snprintf(meaning, sizeof meaning,
                     "the program has no kernel image for this GPU (%s, sm_%llu%llu): it was "
                     "built only for other architectures%s%s", p->dev[d].name,
                     (unsigned long long)p->dev[d].cc_major,
                     (unsigned long long)p->dev[d].cc_minor,
                     s->arch_list[0] ? "; PyTorch was built for " : "", s->arch_list);
        else
            snprintf(meaning, sizeof meaning, "the program has no kernel image for this GPU's "
                     "architecture");
    } else if (c->code == 36 && p->driver_version > 0) {
        er_version(v1, sizeof v1, p->driver_version);
        snprintf(meaning, sizeof meaning, "the call needs a newer driver than this one "
                 "(CUDA %s)", v1);
    } else if (c->code == 34) {
        snprintf(meaning, sizeof meaning, "the stub libcuda.so of the CUDA toolkit answered "
                 "instead of the driver");
    }
    int recovered = a.recovered && !c->teardown;
    cp_finding *f = cp_finding_new(rep, &cp_check_errors, p, "%s (%llu)%s, %llu call%s%s: %s",
                                   name ? name : "CUDA error", (unsigned long long)c->code, from,
                                   (unsigned long long)c->n, c->n == 1 ? "" : "s",
                                   recovered ? ", recovered" : "", meaning);
    if (!f)
        return;
    f->tag = c->code | (c->teardown ? ER_TEARDOWN : 0);
    if (recovered)
        cp_finding_line(f, "The program recovered: every failing API here succeeded later in "
                        "the run (%s last), so the failure cost nothing but the retry (info).",
                        a.top ? a.top : "the same call");
    /* The oom check carries out-of-memory failures at their own severity;
     * probes, teardown failures and failures recovered from need no action. */
    if (c->benign || c->code == 2 || recovered)
        f->sev = CP_SEV_INFO;
    f->sort = CP_SORT_COUNT;
    cp_finding_sites_from(f, p, &c->agg);
    cp_jb_ku(&f->details, "code", c->code);
    cp_jb_ks(&f->details, "name", name);
    cp_jb_ks(&f->details, "meaning", meaning);
    cp_jb_kb(&f->details, "teardown", c->teardown);
    cp_jb_kb(&f->details, "recovered", recovered);
    cp_jb_ks(&f->details, "api", a.top);
}

static void er_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_er *s = st;
    if (p->dlopen_seen && !p->dlopen_ok && p->lib_kind == CP_LIB_NOT_FOUND) {
        cp_finding *f = cp_finding_new(rep, &cp_check_errors, p,
                                       "no CUDA driver installed: libcuda.so.1 was not found");
        if (f) {
            if (p->lib_error && *p->lib_error)
                cp_finding_line(f, "The loader said: %s", p->lib_error);
            cp_finding_line(f, "The CUDA runtime reports this as \"CUDA driver version is "
                            "insufficient for CUDA runtime version\" (cudaErrorInsufficientDriver)"
                            " and PyTorch as torch.cuda.is_available() == False: there is no "
                            "driver at all, not an old one.");
            cp_finding_line(f, "Fix: install the NVIDIA driver; in a container start it with "
                            "GPUs (docker run --gpus all, NVIDIA Container Toolkit) so "
                            "libcuda.so.1 is mounted.");
            cp_jb_ks(&f->details, "condition", "no-driver");
            f->count = 1;
        }
    }
    int stub = p->lib_kind == CP_LIB_STUB;
    for (int i = 0; i < s->n_codes; i++)
        stub |= s->c[i].code == 34;
    if (stub) {
        cp_finding *f = cp_finding_new(rep, &cp_check_errors, p,
                                       "the CUDA toolkit's stub libcuda.so was loaded instead of "
                                       "the driver's library");
        if (f) {
            if (p->lib_path)
                cp_finding_line(f, "Loaded: %s", p->lib_path);
            cp_finding_line(f, "The stub (toolkit stubs/libcuda.so) only exists for linking; "
                            "every call returns CUDA_ERROR_STUB_LIBRARY (34).");
            cp_finding_line(f, "Fix: remove the toolkit's stubs directory from "
                            "LD_LIBRARY_PATH / rpath, so the driver's libcuda.so.1 is found.");
            cp_jb_ks(&f->details, "condition", "stub-library");
            f->count = 1;
        }
    }
    ev_finish(p, &s->ver, rep, &cp_check_errors);
    for (int i = 0; i < s->n_codes; i++)
        if (s->c[i].code != 34)
            er_code_finding(p, s, &s->c[i], rep);
}

/* A child forked after its parent initialised CUDA gets
 * CUDA_ERROR_NOT_INITIALIZED from every call: fork-after-init reports that
 * as the error, with its cause; here it is only the symptom. */
static void er_across(cp_report *rep)
{
    for (size_t j = 0; j < rep->n; j++) {
        cp_finding *f = rep->f[j];
        cp_proc *ch = f->proc;
        if (f->check != &cp_check_errors || !ch || f->tag != CUDA_ERROR_NOT_INITIALIZED ||
            f->sev == CP_SEV_INFO)
            continue;
        /* Its parent: a process of the child's ppid on its host whose FORK
         * records name the child. */
        size_t n_par;
        cp_proc *const *pars = cp_run_pid(&rep->run, ch->host, ch->ppid, &n_par);
        int forked = 0;
        for (size_t i = 0; i < n_par && !forked; i++)
            for (size_t k = 0; pars[i] != ch && k < pars[i]->n_forks && !forked; k++)
                forked = pars[i]->forks[k] == ch->pid;
        if (!forked)
            continue;
        f->sev = CP_SEV_INFO;
        cp_finding_line(f, "pid %llu is a child forked after pid %llu initialised "
                        "CUDA: see fork-after-init.", (unsigned long long)ch->pid,
                        (unsigned long long)ch->ppid);
    }
}

/* The per-code maps are set up as codes appear, so they are not in a map table. */
static void er_done(void *st)
{
    cp_er *s = st;
    for (int i = 0; i < s->n_codes; i++)
        cp_map_free(&s->c[i].agg);
}

const cp_check cp_check_errors = {
    .id = "cuda-errors",
    .sev = CP_SEV_ERROR,
    .name = "failing CUDA calls",
    .explain = "Driver calls that returned an error, grouped by result code, with what the "
               "code means for this process; and the failures that happen before any call "
               "can fail: no driver library at all, the toolkit's stub library in its place, "
               "or a driver older than the CUDA runtime the program was built with.",
    .fix = "Each group names its cause; the fix follows from it (install or upgrade the "
           "driver, fix CUDA_VISIBLE_DEVICES, build for this GPU's architecture, set the "
           "device on every thread, reduce memory use).",
    .types = CP_TYPE_BIT(CP_REC_CALL) | CP_TYPE_BIT(CP_REC_ALLOC) | CP_TYPE_BIT(CP_REC_FREE) |
             CP_TYPE_BIT(CP_REC_COPY) | CP_TYPE_BIT(CP_REC_MEMSET) | CP_TYPE_BIT(CP_REC_CTX) |
             CP_TYPE_BIT(CP_REC_STREAM) | CP_TYPE_BIT(CP_REC_VMM) | CP_TYPE_BIT(CP_REC_POOL) |
             CP_TYPE_BIT(CP_REC_SYNC) | CP_TYPE_BIT(CP_REC_RESOLVE) |
             CP_TYPE_BIT(CP_REC_FRAMEWORK),
    CP_CHECK_STATE(cp_er, er_maps),
    .rec = cp_check_errors_rec,
    .finish = er_finish,
    .done = er_done,
    .across = er_across,
};
