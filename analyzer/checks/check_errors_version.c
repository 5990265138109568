/*
 * check_errors_version.c - whether a driver older than the runtime cost
 * anything (see check_errors_version.h).
 *
 * What the trace shows of the mismatch: the highest version any lookup
 * through cuGetProcAddress asked for (the newest runtime or bindings in the
 * process, cp_model.c), the driver's version, and the lookups the driver
 * refused.  A refusal is for the version (CU_GET_PROC_ADDRESS_VERSION_NOT_
 * SUFFICIENT, or CUDA_ERROR_INVALID_VALUE for a version the driver does not
 * know) or for a function it does not have at all (SYMBOL_NOT_FOUND); NVIDIA's
 * CUDA Python bindings ask for every function they know at their own
 * version, so a clean numba run on an older driver has dozens of the
 * latter.  What makes the mismatch an error is a failure it caused:
 *   - a call failed with a code that asks for a newer driver (35, 36, 218,
 *     222: cp_curesult.h's CP_CUERR_SYNC_OLD);
 *   - a function whose lookup was refused was then called, and failed;
 *   - the exception the run died of names such a function (the bindings
 *     raise 'Function "cuX" not found' when one is called), or names such a
 *     code: a kernel image the driver's JIT refused (numba's CudaAPIError
 *     "[222] Call to cuModuleLoadDataEx results in CUDA_ERROR_UNSUPPORTED_
 *     PTX_VERSION", PyTorch's "CUDA error: the provided PTX was compiled with
 *     an unsupported toolchain."), where no driver call the trace shows
 *     returned it (module loads are not recorded);
 *   - CUDA was never initialised after the refusals: the runtime gave up
 *     (what it reports as cudaErrorInsufficientDriver).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_errors_version.h"
#include "check_fatal_exc.h"
#include "cp_curesult.h"

static int ev_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void ev_resolve(cp_proc *p, ev_state *s, const cp_record *r)
{
    const typeof(r->u.resolve) *rs = &r->u.resolve;
    int version = rs->status == 2 || rs->result == CUDA_ERROR_INVALID_VALUE;
    int missing = !version && rs->result != 0 && (rs->status == 1 || rs->result == 500);
    if (rs->route < CP_ROUTE_GPA || (!version && !missing))
        return;
    /* Compared with the driver's version here when it is known already,
     * and again at the end: cudart asks before or after cuDriverGetVersion. */
    if (p->driver_version > 0 && rs->cuda_version <= p->driver_version)
        return;
    if (version)
        s->refused++;
    else
        s->missing++;
    if ((uint64_t)rs->cuda_version > s->asked_max)
        s->asked_max = (uint64_t)rs->cuda_version;
    const char *sym = cp_sym_intern(rs->symbol.p, rs->symbol.n);
    int i;
    for (i = 0; i < s->n_syms && s->syms[i] != sym; i++)
        ;
    if (sym && i == s->n_syms && i < EV_SYMS)
        s->syms[s->n_syms++] = sym;
}

void ev_failure(ev_state *s, const char *api, uint64_t code)
{
    if (cp_cuerr_class(code) == CP_CUERR_SYNC_OLD && !s->old_code) {
        s->old_code = code;
        s->old_api = api;
    }
    for (int i = 0; api && !s->used && i < s->n_syms; i++) {
        size_t n = strlen(s->syms[i]);
        /* cuMemAlloc refused, cuMemAlloc_v2 called */
        if (strncmp(api, s->syms[i], n) == 0 && (api[n] == 0 || api[n] == '_'))
            s->used = s->syms[i];
    }
}

void ev_exception(cp_proc *p, ev_state *s)
{
    if (!s->exc_code) {
        cp_exc *e = malloc(sizeof *e);     /* 6 KiB, for an exception or two a run */
        if (e && cp_exc_parse(p->fw_ready_json, p->fw_ready_len, e) == 0 &&
            cp_cuerr_class(e->cuda_code) == CP_CUERR_SYNC_OLD)
            s->exc_code = e->cuda_code;
        free(e);
    }
    for (int i = 0; !s->exc && i < s->n_syms; i++) {
        size_t n = strlen(s->syms[i]);
        const char *t = p->fw_ready_json, *end = t + p->fw_ready_len;
        while (t && (t = memmem(t, (size_t)(end - t), s->syms[i], n))) {
            if ((t == p->fw_ready_json || !ev_ident_char(t[-1])) &&
                (t + n == end || !ev_ident_char(t[n]))) {
                s->exc = s->syms[i];
                break;
            }
            t += n;
        }
    }
}

static void ev_version(char *buf, size_t cap, int64_t v)
{
    snprintf(buf, cap, "%lld.%lld", (long long)(v / 1000), (long long)(v % 1000 / 10));
}

/* What failed because of the mismatch, into buf.  @return : 1 when
 * something did. */
static int ev_needed(const cp_proc *p, const ev_state *s, char *buf, size_t cap)
{
    const char *name = s->old_code ? cp_result_name(s->old_code) : NULL;
    if (s->old_code)
        snprintf(buf, cap, "%s returned %s (%llu): %s", s->old_api ? s->old_api : "a call",
                 name ? name : "an error", (unsigned long long)s->old_code,
                 cp_result_meaning(s->old_code) ? cp_result_meaning(s->old_code) : "");
    else if (s->used)
        snprintf(buf, cap, "%s, whose lookup this driver refused, was called and failed",
                 s->used);
    else if (s->exc)
        snprintf(buf, cap, "the exception the run died of names %s, a function this driver "
                 "does not have", s->exc);
    else if (s->exc_code)
        snprintf(buf, cap, "the exception the run died of is %s (%llu): %s",
                 cp_result_name(s->exc_code) ? cp_result_name(s->exc_code) : "a CUDA error",
                 (unsigned long long)s->exc_code,
                 cp_result_meaning(s->exc_code) ? cp_result_meaning(s->exc_code) : "");
    else if (!p->init_ok && (s->refused || p->runtime_version > p->driver_version))
        snprintf(buf, cap, "CUDA was never initialised after it: the runtime gave up on this "
                 "driver (the runtime's cudaErrorInsufficientDriver)");
    else
        return 0;
    return 1;
}

void ev_finish(cp_proc *p, ev_state *s, cp_report *rep, const cp_check *c)
{
    char v1[32], v2[32], why[512], eg[160] = "";
    int64_t drv = p->driver_version, rt = p->runtime_version;
    /* Refusals only count when they asked for more than the driver has. */
    if (drv > 0 && s->asked_max <= (uint64_t)drv)
        s->refused = s->missing = 0;
    int newer = (rt > 0 && drv > 0 && rt > drv) || s->refused || s->missing;
    if (!newer && !s->old_code)
        return;
    int needed = ev_needed(p, s, why, sizeof why);
    ev_version(v1, sizeof v1, drv);
    ev_version(v2, sizeof v2, rt ? rt : (int64_t)s->asked_max);
    cp_finding *f;
    if (needed)
        f = cp_finding_new(rep, c, p, "the driver (CUDA %s) is older than the CUDA runtime "
                           "(CUDA %s)", drv ? v1 : "?", v2);
    else
        f = cp_finding_new(rep, c, p, "the CUDA runtime or bindings (CUDA %s) are newer than "
                           "the driver (CUDA %s): nothing failed because of it", v2,
                           drv ? v1 : "?");
    if (!f)
        return;
    if (s->n_syms)
        snprintf(eg, sizeof eg, " (e.g. %s)", s->syms[0]);
    if (s->refused)
        cp_finding_line(f, "%llu driver function lookup%s asked for a newer version than the "
                        "driver has%s.", (unsigned long long)s->refused,
                        s->refused == 1 ? "" : "s", s->missing ? "" : eg);
    if (s->missing)
        cp_finding_line(f, "%llu lookup%s asked for functions this driver does not have%s: "
                        "newer than the driver.", (unsigned long long)s->missing,
                        s->missing == 1 ? "" : "s", eg);
    if (needed) {
        cp_finding_line(f, "What failed because of it: %s.", why);
        cp_finding_line(f, "Fix: upgrade the NVIDIA driver, install the CUDA forward "
                        "compatibility package (cuda-compat) for this runtime, or use a "
                        "build of the program for CUDA %s or older.", v1);
    } else {
        f->sev = CP_SEV_INFO;
        cp_finding_line(f, "Nothing failed because of it: CUDA initialised, and no call failed "
                        "for a function or version this driver lacks. Runtimes and bindings "
                        "look up every function they know at their own version; a lookup "
                        "nothing then needs costs nothing (info).");
        f->fix = "Nothing to fix now; upgrade the driver (or install cuda-compat) before the "
                 "program needs a function this driver lacks.";
    }
    cp_jb_ks(&f->details, "condition", needed ? "driver-too-old" : "driver-older-unneeded");
    cp_jb_ki(&f->details, "driver_version", drv);
    cp_jb_ki(&f->details, "runtime_version", rt);
    cp_jb_ku(&f->details, "lookups_refused", s->refused);
    cp_jb_ku(&f->details, "lookups_missing", s->missing);
    cp_jb_ks(&f->details, "failed_because", needed ? why : NULL);
    f->count = s->refused + s->missing ? s->refused + s->missing : 1;
}
