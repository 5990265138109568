/*
 * check_fatal.c - fatal-error: what the run died of, in the seed's terms.
 *
 * Inputs: the companion's "exception" records (uncaught exceptions of the
 * main thread, of worker threads, and KeyboardInterrupt), the fatal signal
 * the shim recorded, and the first sticky asynchronous error with the
 * launches in flight at that moment (check_fatal_async.c).  One finding per
 * process death, explained layer by layer:
 *   device mismatch  the devices in the message, the user's line, where the
 *                    odd tensor probably came from, the devices this process
 *                    allocated on, and the fix;
 *   OOM              joined with the oom check's post-mortem of the same
 *                    moment (its finding gets the exception; no second one);
 *   no CUDA          CPU-only torch, or a failed CUDA initialisation joined
 *                    with what the trace says about each layer;
 *   asynchronous     where it surfaced is not where it happened; the
 *                    launches in flight; the exact rerun command lines;
 *   synchronous      a device that is not visible: the failing call, the
 *                    GPUs the process sees (check_fatal_sync.c); also for a
 *                    process that died with no exception to read (a native
 *                    program's exit or abort) after such a call failed;
 *   worker process   a DataLoader worker's exception re-raised here: the
 *                    worker's line, and CUDA in a forked worker's cause
 *                    (check_fatal_worker.c), always an error;
 *   NCCL             the collective, sequence number, rank and timeout;
 *   anything else    the exception and the user's frame: a warning when
 *                    it ended the process (a crash is never info), else
 *                    info; but after a sticky CUDA error every CUDA call
 *                    fails, and a library raises its own error for it
 *                    (cuBLAS's CUBLAS_STATUS_EXECUTION_FAILED): a process
 *                    that died of an exception naming no CUDA error after
 *                    one in the trace died of that error (asynchronous).
 * Synchronous and asynchronous CUDA errors are told apart by the CUresult
 * the message names (cp_curesult.h's classes), not by its wording.
 * A run that exited 0 after catching everything shows nothing here; a
 * worker thread's death in a run that went on is a warning (GPU errors) or
 * info.  A child that died of SIGTERM sent by a process, whose parent then
 * exited 0, was shut down by it (multiprocessing.Pool's terminate() when
 * its `with` block ends): info (ft_across).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fatal_sync.h"
#include "check_fatal_worker.h"
#include "cp_checks.h"
#include "check_fatal_async.h"
#include "check_fatal_exc.h"

extern const cp_check cp_check_fatal;   /* defined at the end of this file */

#define FT_THREADS 4

/* The tag of a death by SIGTERM that a process sent (kill(), not the
 * kernel), with no GPU error before it: ft_across() looks at the parent. */
#define FT_TAG_TERM_SENT 1

typedef struct cp_ft {
    cp_exc main;                /* the main thread's uncaught exception */
    cp_exc thr[FT_THREADS];     /* worker threads' */
    int n_thr;
    uint64_t n_thr_all;
    int have_sig;               /* a SIGNAL record was read */
    int64_t sig_code;
    uint64_t sig_addr;
    uint64_t oom_failures;      /* failed allocations (CUDA_ERROR_OUT_OF_MEMORY) */
    uint64_t alloc_ts;          /* the last allocation that succeeded */
    cp_async_state async;             /* the first sticky error and its launches */
    cp_sync_state sync;              /* the last synchronous device error */
} cp_ft;

static __attribute__((noinline)) void ft_rec_full(cp_proc *p, void *st, const cp_record *r)
{
    cp_ft *s = st;
    switch (r->type) {
    case CP_REC_FRAMEWORK: {
        if (!p->fw_ready_kind || strcmp(p->fw_ready_kind, "exception") != 0)
            return;
        cp_exc *e = malloc(sizeof *e);
        if (!e || cp_exc_parse(p->fw_ready_json, p->fw_ready_len, e) != 0) {
            free(e);
            return;
        }
        e->ts = r->ts;
        if (strcmp(e->hook, "threading.excepthook") == 0) {
            s->n_thr_all++;
            if (s->n_thr < FT_THREADS)
                s->thr[s->n_thr++] = *e;
        } else if (!s->main.have) {
            s->main = *e;
        }
        free(e);
        return;
    }
    case CP_REC_CALL:
    case CP_REC_CTX:
        cp_sync_rec(p, &s->sync, r);
        return;
    case CP_REC_SIGNAL:
        s->have_sig = 1;
        s->sig_code = r->u.signal.code;
        s->sig_addr = r->u.signal.addr;
        return;
    case CP_REC_ALLOC:
        if (r->ev.result == CUDA_ERROR_OUT_OF_MEMORY)
            s->oom_failures++;
        else if (!r->ev.result)
            s->alloc_ts = r->ts;
        return;
    default:
        cp_async_rec(p, &s->async, r);
        return;
    }
}

/* ALLOC (nearly every record this check reads) without ft_rec_full()'s
 * frame: inlined into the checks' dispatch. */
__attribute__((always_inline)) inline void
cp_check_fatal_rec(cp_proc *p, void *st, const cp_record *r)
{
    if (r->type == CP_REC_ALLOC) {
        if (r->ev.result == CUDA_ERROR_OUT_OF_MEMORY)
            ((cp_ft *)st)->oom_failures++;
        else if (!r->ev.result)
            ((cp_ft *)st)->alloc_ts = r->ts;
        return;
    }
    ft_rec_full(p, st, r);
}

/* "file:line (func)" of a frame. */
static const char *ft_where(const cp_exc_frame *f, char *buf, size_t cap)
{
    if (!f->file[0])
        snprintf(buf, cap, "(no Python frame)");
    else
        snprintf(buf, cap, "%s:%lld (%s)", f->file, (long long)f->line, f->func);
    return buf;
}

/* The source line of a frame, when the file is readable here. */
static int ft_source(const cp_exc_frame *f, char *buf, size_t cap)
{
    FILE *fp = f->file[0] == '/' || f->file[0] == '.' || f->file[0] ? fopen(f->file, "r") : NULL;
    int64_t n = 0;
    int ok = 0;
    if (!fp)
        return 0;
    while (fgets(buf, (int)cap, fp)) {
        if (++n == f->line) {
            char *s = buf + strspn(buf, " \t");
            memmove(buf, s, strlen(s) + 1);
            buf[strcspn(buf, "\r\n")] = 0;
            ok = buf[0] != 0;
            break;
        }
        if (!strchr(buf, '\n'))    /* a longer line: skip its rest */
            for (int c; (c = fgetc(fp)) != EOF && c != '\n';)
                ;
    }
    fclose(fp);
    return ok;
}

/* The frame to blame: the innermost user frame, else where it was raised. */
static const cp_exc_frame *ft_blame(const cp_exc *e)
{
    return e->user.file[0] ? &e->user : &e->raise_at;
}

/* The exception, and b, the frame it is blamed on (ft_blame(), or a
 * worker's), as lines and details. */
static void ft_exc_lines(cp_finding *f, const cp_exc *e, const cp_exc_frame *b)
{
    char w[800], src[256], m[600];
    cp_finding_line(f, "%s: %s", e->type, cp_exc_first_line(e->msg, m, sizeof m));
    if (e->cause[0])
        cp_finding_line(f, "  caused by %s", cp_exc_first_line(e->cause, m, sizeof m));
    cp_finding_line(f, "Your line: %s%s", ft_where(b, w, sizeof w),
                    b == &e->user || b->user ? "" : " (no frame of the program itself)");
    if (ft_source(b, src, sizeof src))
        cp_finding_line(f, "    %s", src);
    if (b == &e->user && e->raise_at.file[0] &&
        (strcmp(e->raise_at.file, b->file) != 0 || e->raise_at.line != b->line))
        cp_finding_line(f, "Raised in: %s", ft_where(&e->raise_at, w, sizeof w));
    cp_jb_ks(&f->details, "exception_type", e->type);
    cp_jb_ks(&f->details, "message", e->msg);
    cp_jb_ks(&f->details, "hook", e->hook);
    cp_jb_ks(&f->details, "thread", e->thread);
    cp_jb_ks(&f->details, "file", b->file);
    cp_jb_ki(&f->details, "line", b->line);
    cp_jb_ks(&f->details, "function", b->func);
    cp_jb_kb(&f->details, "user_frame", b == &e->user || b->user);
}

/* Devices with memory this process allocated, into buf. */
static int ft_alloc_devs(const cp_proc *p, char *buf, size_t cap)
{
    size_t o = 0;
    int n = 0;
    buf[0] = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        char nm[160], b[32];
        if (!p->mem[d].n_alloc)
            continue;
        int w = snprintf(buf + o, cap - o, "%s%s (%llu allocations, peak %s)", n ? ", " : "",
                         cp_dev_name(p, d, nm, sizeof nm), (unsigned long long)p->mem[d].n_alloc,
                         cp_fmt_bytes(p->mem[d].peak_total, b, sizeof b));
        if (w > 0 && (size_t)w < cap - o)
            o += (size_t)w;
        n++;
    }
    return n;
}

static void ft_mismatch(cp_proc *p, cp_finding *f, const cp_exc *e)
{
    char devs[128], arg[64], method[128], alloc[1024];
    int nd = cp_exc_devices(e->msg, devs, sizeof devs);
    cp_exc_mismatch_arg(e->msg, arg, sizeof arg, method, sizeof method);
    int cpu = strstr(devs, "cpu") != NULL;
    if (arg[0])
        cp_finding_line(f, "PyTorch names the argument `%s`%s%s: it is on a different device "
                        "from the other tensors of the operation.", arg,
                        method[0] ? " of " : "", method);
    if (cpu) {
        if (strstr(arg, "target") || strstr(arg, "label") || strstr(arg, "index"))
            cp_finding_line(f, "Likely origin: labels or indices straight from the data "
                            "loader, never moved (a DataLoader yields CPU tensors).");
        else if (!strcmp(arg, "weight") || !strcmp(arg, "bias") || !strcmp(arg, "mat2") ||
                 strstr(method, "addmm") || strstr(method, "linear") ||
                 strstr(method, "convolution") || strstr(method, "embedding"))
            cp_finding_line(f, "Likely origin: a module built (or a parameter added) after "
                            "model.to(device), or a tensor attribute that is not a registered "
                            "buffer, so .to() did not move it.");
        else
            cp_finding_line(f, "Likely origin: a tensor made by a factory function without "
                            "device= (torch.zeros, torch.arange, torch.tensor...: they default "
                            "to the CPU), a label never moved, or a module built before "
                            ".to(device).");
    } else if (nd >= 2) {
        cp_finding_line(f, "Two GPUs meet in one operation: a model on one device and data "
                        "on another, or a process that did not call torch.cuda.set_device() "
                        "for its rank before creating tensors.");
    }
    if (ft_alloc_devs(p, alloc, sizeof alloc))
        cp_finding_line(f, "This process allocated device memory on: %s.", alloc);
    cp_finding_line(f, "Fix: move it to the others' device (x = x.to(logits.device)), pass "
                    "device= to factory functions, call model.to(device) before use%s.",
                    cpu ? "" : ", and torch.cuda.set_device(local_rank) at the start of each "
                    "rank");
    cp_jb_ks(&f->details, "devices", devs);
    cp_jb_ks(&f->details, "argument", arg);
}

/* Which layer failed, from what the trace shows of the driver stack. */
static const char *ft_layer(const cp_proc *p, const cp_exc *e, char *buf, size_t cap)
{
    const char *cvd = cp_proc_env(p, "CUDA_VISIBLE_DEVICES");
    if (e->kind == CP_EXC_NO_CUDA || (e->have_torch && !e->torch_cuda[0]))
        snprintf(buf, cap, "the framework: torch %s is a CPU-only build (torch.version.cuda "
                 "is None); the driver was never asked", e->torch_version[0] ? e->torch_version
                                                                             : "");
    else if (p->lib_kind == CP_LIB_STUB || p->init_fail_result == 34)
        snprintf(buf, cap, "the driver library: the CUDA toolkit's stub libcuda.so was loaded "
                 "instead of the driver's (%s)", p->lib_path ? p->lib_path : "?");
    else if (p->dlopen_seen && !p->dlopen_ok)
        snprintf(buf, cap, "the driver library: libcuda.so.1 could not be loaded (%s): no "
                 "NVIDIA driver, or not on the library path",
                 p->lib_error ? p->lib_error : "not found");
    else if (p->runtime_version > 0 && p->driver_version > 0 &&
             p->runtime_version > p->driver_version)
        snprintf(buf, cap, "the driver version: the driver supports CUDA %lld.%lld, the "
                 "runtime needs %lld.%lld", (long long)p->driver_version / 1000,
                 (long long)(p->driver_version % 1000) / 10, (long long)p->runtime_version / 1000,
                 (long long)(p->runtime_version % 1000) / 10);
    else if (p->init_calls && !p->init_ok)
        snprintf(buf, cap, "driver initialisation: cuInit failed with %s",
                 cp_result_name(p->init_fail_result) ? cp_result_name(p->init_fail_result)
                                                     : "an error");
    else if (p->init_ok && (p->device_count_zero || p->n_dev == 0))
        snprintf(buf, cap, "device visibility: the driver initialised but showed no device%s%s%s",
                 cvd ? " (CUDA_VISIBLE_DEVICES=\"" : "", cvd ? cvd : "", cvd ? "\")" : "");
    else if (!p->dlopen_seen && !p->init_calls)
        snprintf(buf, cap, "unknown: the process never reached the CUDA driver (no libcuda "
                 "load, no cuInit was seen)");
    else
        snprintf(buf, cap, "unknown from the trace: the driver initialised");
    return buf;
}

/* The driver's JIT refused a kernel image (PTX newer than the driver, or
 * a failed PTX compilation): CUDA itself initialised. */
static int ft_ptx(const cp_exc *e)
{
    return e->kind == CP_EXC_INIT && (e->cuda_code == 218 || e->cuda_code == 222);
}

static void ft_nocuda(cp_proc *p, cp_finding *f, const cp_exc *e)
{
    char layer[600];
    cp_finding_line(f, "Layer that failed: %s.", ft_layer(p, e, layer, sizeof layer));
    if (e->have_torch)
        cp_finding_line(f, "torch %s, torch.version.cuda = %s.", e->torch_version,
                        e->torch_cuda[0] ? e->torch_cuda : "None");
    if (p->driver_seen && p->driver_version > 0)
        cp_finding_line(f, "The driver in this run supports CUDA %lld.%lld.",
                        (long long)p->driver_version / 1000,
                        (long long)(p->driver_version % 1000) / 10);
    if (e->kind == CP_EXC_NO_CUDA || (e->have_torch && !e->torch_cuda[0]))
        cp_finding_line(f, "Fix: install a CUDA build of PyTorch (pip install torch "
                        "--index-url https://download.pytorch.org/whl/cuXXX, for a CUDA version "
                        "the driver supports); `cuprobe doctor --python` checks every layer.");
    else if (ft_ptx(e))
        cp_finding_line(f, "Fix: upgrade the NVIDIA driver (or install cuda-compat), or build "
                        "the kernels with a toolkit no newer than the driver's CUDA (numba: its "
                        "NVVM, the cuda-nvcc package; a library: a build with this GPU's "
                        "architecture as compiled code, so no PTX is JIT-compiled).");
    else if (p->lib_kind == CP_LIB_STUB || p->init_fail_result == 34)
        cp_finding_line(f, "Fix: remove the CUDA toolkit's stubs directory from LD_LIBRARY_PATH "
                        "(and the program's rpath) so that the driver's libcuda.so.1 is found; "
                        "`cuprobe doctor` checks every layer.");
    else
        cp_finding_line(f, "Fix: repair the layer named above (`cuprobe doctor` checks the "
                        "hardware, driver, runtime and allocation layers one by one).");
    cp_jb_ks(&f->details, "layer", layer);
    cp_jb_ks(&f->details, "torch_cuda", e->have_torch ? e->torch_cuda : NULL);
}

static void ft_nccl(cp_proc *p, cp_finding *f, const cp_exc *e)
{
    char op[64];
    int64_t seq, rank, tmo;
    cp_exc_nccl(e->msg, op, sizeof op, &seq, &rank, &tmo);
    const char *env_rank = cp_proc_env(p, "RANK");
    if (rank < 0 && env_rank)
        rank = strtoll(env_rank, NULL, 10);
    char seqs[48] = "", ranks[32] = "unknown";
    if (seq >= 0)
        snprintf(seqs, sizeof seqs, ", sequence number %lld", (long long)seq);
    if (rank >= 0)
        snprintf(ranks, sizeof ranks, "%lld", (long long)rank);
    cp_finding_line(f, "Collective: %s%s, on rank %s%s.", op[0] ? op : "unknown", seqs, ranks,
                    tmo >= 0 ? ", timed out" : "");
    if (tmo >= 0)
        cp_finding_line(f, "The watchdog waited %lld ms: another rank never joined this "
                        "collective (it crashed, hung, or is running a different one).",
                        (long long)tmo);
    cp_finding_line(f, "Next: read the other ranks' reports for the rank that died first; rerun "
                    "with NCCL_DEBUG=INFO and TORCH_NCCL_TRACE_BUFFER_SIZE=2000 "
                    "TORCH_NCCL_DUMP_ON_TIMEOUT=1 to get each rank's last collectives.");
    cp_jb_ks(&f->details, "collective", op);
    cp_jb_ki(&f->details, "rank", rank);
    cp_jb_ki(&f->details, "seq", seq);
}

static const char *ft_kind_title(int kind)
{
    switch (kind) {
    case CP_EXC_DEVICE_MISMATCH: return "tensors on different devices in one operation";
    case CP_EXC_OOM: return "out of memory";
    case CP_EXC_NO_CUDA: return "PyTorch without CUDA";
    case CP_EXC_INIT: return "CUDA initialisation failed";
    case CP_EXC_ASYNC: return "an asynchronous CUDA error";
    case CP_EXC_NCCL: return "an NCCL error";
    case CP_EXC_INTERRUPT: return "KeyboardInterrupt";
    case CP_EXC_SYNC: return "a synchronous CUDA error";
    case CP_EXC_WORKER: return "an exception in a worker process";
    default: return NULL;
    }
}

/* An OOM exception: the oom check's post-mortem of this process gets it.
 * @return : 1 when joined. */
static int ft_join_oom(cp_proc *p, cp_report *rep, const cp_exc *e)
{
    char w[800], m[400];
    for (size_t i = rep->n; i-- > 0;) {
        cp_finding *o = rep->f[i];
        if (o->check != &cp_check_oom || o->proc != p || o->sev != CP_SEV_ERROR)
            continue;
        cp_finding_line(o, "The run died of it: %s: %s", e->type,
                        cp_exc_first_line(e->msg, m, sizeof m));
        cp_finding_line(o, "  raised at your line %s", ft_where(ft_blame(e), w, sizeof w));
        cp_jb_ks(&o->details, "fatal_exception", e->type);
        cp_jb_ks(&o->details, "fatal_file", ft_blame(e)->file);
        cp_jb_ki(&o->details, "fatal_line", ft_blame(e)->line);
        return 1;
    }
    return 0;
}

/* The driver-side findings of the same failure say where to look: they
 * stay, as info pointing here (cuda-errors' sticky code, no-gpu-used). */
static void ft_point_here(cp_proc *p, cp_report *rep, const cp_check *c, uint64_t tag)
{
    for (size_t i = 0; i < rep->n; i++) {
        cp_finding *o = rep->f[i];
        if (o->check != c || o->proc != p || (tag && o->tag != tag) || o->sev == CP_SEV_INFO)
            continue;
        o->sev = CP_SEV_INFO;
        o->top = 0;
        cp_finding_line(o, "The run died of it: see fatal-error.");
    }
}

static void ft_exception(cp_proc *p, cp_ft *s, cp_report *rep, const cp_exc *e, int died)
{
    char w[800], rk[48] = "", src[256];
    /* A JIT that refused a kernel image is no failed initialisation. */
    const char *what = ft_ptx(e) ? "a kernel image this driver cannot compile"
                                 : ft_kind_title(e->kind);
    const char *env_rank = cp_proc_env(p, "RANK");
    int gpu = e->kind != CP_EXC_OTHER && e->kind != CP_EXC_INTERRUPT;
    int thread = strcmp(e->hook, "threading.excepthook") == 0;
    const cp_exc_frame *b = ft_blame(e);
    /* A worker's exception is blamed on the worker's line. */
    cp_worker wk;
    int worker = e->kind == CP_EXC_WORKER && cp_worker_parse(e->msg, &wk) == 0;
    if (worker) {
        b = wk.user.file[0] ? &wk.user : &wk.raise_at;
        if (wk.fork_cuda)
            what = "CUDA used in a worker process forked after CUDA was initialised";
    }
    if (e->kind == CP_EXC_OOM && died && ft_join_oom(p, rep, e))
        return;
    if (env_rank)
        snprintf(rk, sizeof rk, " (rank %s)", env_rank);
    char who[160];
    if (thread)
        snprintf(who, sizeof who, ": thread '%s' died", e->thread);
    else
        snprintf(who, sizeof who, " died");
    cp_finding *f = cp_finding_new(rep, &cp_check_fatal, p, "pid %llu%s%s of %s at %s",
                                   (unsigned long long)p->pid, rk, who, what ? what : e->type,
                                   ft_where(b, w, sizeof w));
    if (!f)
        return;
    f->count = 1;
    /* A process that died of any exception crashed: never info (a
     * KeyboardInterrupt stopped it). */
    f->sev = gpu ? (died && !thread ? CP_SEV_ERROR : CP_SEV_WARNING)
                 : died && !thread && e->kind != CP_EXC_INTERRUPT ? CP_SEV_WARNING : CP_SEV_INFO;
    /* A worker process that crashed is an error: its work is lost. */
    if ((thread && died && gpu) || worker)
        f->sev = CP_SEV_ERROR;
    ft_exc_lines(f, e, b);
    cp_jb_ks(&f->details, "kind", what ? what : "other");
    switch (e->kind) {
    case CP_EXC_DEVICE_MISMATCH:
        ft_mismatch(p, f, e);
        break;
    case CP_EXC_OOM:
        cp_finding_line(f, "%llu failed device allocation%s in the trace; PyTorch's allocator "
                        "refused on its own otherwise (a memory fraction limit, or its cache).",
                        (unsigned long long)s->oom_failures, s->oom_failures == 1 ? "" : "s");
        break;
    case CP_EXC_NO_CUDA:
    case CP_EXC_INIT:
        ft_nocuda(p, f, e);
        if (died)
            ft_point_here(p, rep, &cp_check_errors, 0);
        break;
    case CP_EXC_ASYNC:
        if (e->kind_from_trace)
            cp_finding_line(f, "The exception names no CUDA error, but the trace holds one "
                            "before it: after a sticky error every CUDA call fails, and a "
                            "library then raises its own error (cuBLAS: "
                            "CUBLAS_STATUS_EXECUTION_FAILED), so the run died of it.");
        cp_async_explain(p, &s->async, f, 1);
        if (died && s->async.have)
            ft_point_here(p, rep, &cp_check_errors, s->async.code);
        break;
    case CP_EXC_NCCL:
        ft_nccl(p, f, e);
        break;
    case CP_EXC_SYNC:
        cp_sync_explain(p, &s->sync, e, ft_source(b, src, sizeof src) ? src : NULL, f);
        if (died)
            ft_point_here(p, rep, &cp_check_errors, e->cuda_code ? e->cuda_code : s->sync.code);
        break;
    case CP_EXC_WORKER:
        if (worker) {
            cp_worker_explain(p, &wk, f);
            cp_finding_line(f, "PyTorch re-raised it in this process at %s.",
                            ft_where(ft_blame(e), w, sizeof w));
        }
        break;
    default:
        break;
    }
    /* A process that died of a GPU error used no GPU because it died:
     * no-gpu-used says the same thing, so it points here. */
    if (died && !thread && gpu)
        ft_point_here(p, rep, &cp_check_nogpu, 0);
    if (thread)
        cp_finding_line(f, "The exception ended thread '%s' only; the process %s.", e->thread,
                        died ? "died too" : p->complete ? "went on and exited normally"
                                                        : "went on");
}

/* A death with no exception to read (a native program's exit or abort, or
 * the companion off) is the synchronous device error's when that error was
 * the driver's last word: no asynchronous error, and no allocation
 * succeeded after it (a program that got device memory after the failure
 * had dealt with it). */
static int ft_sync_death(const cp_ft *s)
{
    return s->sync.have && !s->async.have && s->sync.ts >= s->alloc_ts;
}

/* Such a death explained by its failing call: the call's site, the GPUs
 * the process sees, the fix; the driver-side findings of the same failure
 * point here. */
static void ft_sync_lines(cp_proc *p, cp_ft *s, cp_report *rep, cp_finding *f)
{
    if (s->sync.stack)
        cp_finding_site(f, p, s->sync.stack, 1, 0, 0, NULL);
    cp_sync_explain(p, &s->sync, NULL, NULL, f);
    ft_point_here(p, rep, &cp_check_errors, s->sync.code);
    ft_point_here(p, rep, &cp_check_nogpu, 0);
}

static void ft_signal(cp_proc *p, cp_ft *s, cp_report *rep)
{
    const char *name = sigabbrev_np((int)p->signo);
    int sync = !s->async.have && ft_sync_death(s);
    const char *at = sync && s->sync.stack ? cp_site_label(&p->stacks, s->sync.stack) : NULL;
    cp_finding *f = cp_finding_new(rep, &cp_check_fatal, p,
                                   "pid %llu died of signal %llu (SIG%s)%s%s%s",
                                   (unsigned long long)p->pid, (unsigned long long)p->signo,
                                   name ? name : "?",
                                   s->async.have ? " after an asynchronous CUDA error"
                                   : sync        ? " after a synchronous CUDA error"
                                                 : "", at ? " at " : "", at ? at : "");
    if (!f)
        return;
    f->count = 1;
    /* si_code <= 0: SI_USER, SI_QUEUE, SI_TKILL...: sent by a process. */
    if (p->signo == SIGTERM && s->have_sig && s->sig_code <= 0 && !s->async.have)
        f->tag = FT_TAG_TERM_SENT;
    cp_jb_ku(&f->details, "signal", p->signo);
    cp_jb_ki(&f->details, "si_code", s->sig_code);
    cp_jb_ku(&f->details, "address", s->sig_addr);
    if (s->sig_addr)
        cp_finding_line(f, "Fault address 0x%llx (si_code %lld): a native crash, in the program "
                        "or a library it loaded.", (unsigned long long)s->sig_addr,
                        (long long)s->sig_code);
    else if (p->signo == SIGABRT)
        cp_finding_line(f, "abort(): a C++ exception nobody caught (std::terminate) or a failed "
                        "assertion in native code; its message is the last thing on stderr.");
    if (s->async.have)
        cp_async_explain(p, &s->async, f, 0);
    else if (sync)
        ft_sync_lines(p, s, rep, f);
}

static void ft_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_ft *s = st;
    /* The main thread's exception is what the interpreter left for
     * sys.excepthook, read at exit; one that ended the run exits 1 (or by
     * SIGINT), so a run that exited 0 did not die of it (an interactive
     * console leaves the exceptions it showed there too). */
    if (s->main.have && p->complete && p->end_reason == CP_END_EXIT && p->end_status == 0)
        s->main.have = 0;
    int died = p->signo || s->main.have ||
               (p->complete && p->end_status != 0 &&
                (p->end_reason == CP_END_EXIT || p->end_reason == CP_END__EXIT ||
                 p->end_reason == CP_END_QUICK_EXIT));
    if (s->main.have && s->main.kind == CP_EXC_OTHER && s->async.have &&
        cp_async_sticky(s->async.code) && s->async.ts <= s->main.ts) {
        s->main.kind = CP_EXC_ASYNC;
        s->main.kind_from_trace = 1;
    }
    if (s->main.have && s->main.kind != CP_EXC_INTERRUPT) {
        ft_exception(p, s, rep, &s->main, 1);
    } else if (p->signo) {
        ft_signal(p, s, rep);
    } else if (s->main.have) {
        ft_exception(p, s, rep, &s->main, 1);
    } else if (died && s->async.have) {
        cp_finding *f = cp_finding_new(rep, &cp_check_fatal, p, "pid %llu died (status %lld) "
                                       "after an asynchronous CUDA error",
                                       (unsigned long long)p->pid, (long long)p->end_status);
        if (f) {
            f->count = 1;
            cp_async_explain(p, &s->async, f, 1);
        }
    } else if (died && ft_sync_death(s)) {
        const char *at = s->sync.stack ? cp_site_label(&p->stacks, s->sync.stack) : NULL;
        cp_finding *f = cp_finding_new(rep, &cp_check_fatal, p, "pid %llu died (status %lld) "
                                       "after a synchronous CUDA error%s%s",
                                       (unsigned long long)p->pid, (long long)p->end_status,
                                       at ? " at " : "", at ? at : "");
        if (f) {
            f->count = 1;
            ft_sync_lines(p, s, rep, f);
        }
    }
    for (int i = 0; i < s->n_thr; i++)
        ft_exception(p, s, rep, &s->thr[i], died && !s->main.have && !p->signo);
}

/* A process that died of a SIGTERM a process sent, whose parent in the
 * run outlived it and then exited 0, was ended by that parent once its
 * work was done: a Pool's workers when the `with` block ends (terminate()),
 * a launcher's when it shuts down.  A parent that went on to succeed lost
 * nothing by it, so it is not what the run died of: info. */
static void ft_across(cp_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        cp_finding *f = rep->f[i];
        const cp_proc *ch = f->proc, *par = ch ? ch->parent : NULL;
        if (f->check != &cp_check_fatal || f->tag != FT_TAG_TERM_SENT || !par ||
            !par->complete || par->end_reason != CP_END_EXIT || par->end_status != 0 ||
            par->t_last < ch->t_last)
            continue;
        f->sev = CP_SEV_INFO;
        cp_finding_line(f, "SIGTERM came from a process (kill), and the parent, pid %llu, "
                        "outlived this one and exited 0: it ended its worker once the work "
                        "was done (multiprocessing.Pool's terminate() at the end of its "
                        "`with` block, a launcher's shutdown), a normal end (info).",
                        (unsigned long long)par->pid);
        cp_jb_ku(&f->details, "ended_by_parent", par->pid);
    }
}

const cp_check cp_check_fatal = {
    .id = "fatal-error",
    .sev = CP_SEV_ERROR,
    .name = "what the run died of",
    .explain = "The exception (or fatal signal) that ended the process, explained: tensors on "
               "two devices, out of memory, PyTorch without CUDA or a failed CUDA "
               "initialisation (which layer), an asynchronous CUDA error (reported by a later "
               "call than the kernel that caused it; the launches in flight are listed), a "
               "synchronous one (a device that is not visible: the GPUs the process sees are "
               "listed), a worker process's exception (its own line; CUDA in a forked "
               "worker), an NCCL error or timeout. Other exceptions are shown with the "
               "program's own line: a warning when one ended the process (a crash is never "
               "info), info otherwise; after a sticky CUDA error in the trace, one that names "
               "none (a library's own error, as cuBLAS's) is that error's.",
    .fix = "Follow the fix stated with the finding.",
    .types = CP_TYPE_BIT(CP_REC_FRAMEWORK) | CP_TYPE_BIT(CP_REC_SIGNAL) |
             CP_TYPE_BIT(CP_REC_ALLOC) | CP_ASYNC_TYPES | FS_TYPES,
    .state_size = sizeof(cp_ft),
    .rec = cp_check_fatal_rec,
    .finish = ft_finish,
    .across = ft_across,
};
