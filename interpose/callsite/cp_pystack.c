/*
 * cp_pystack.c - the calling thread's Python frames, read without the GIL
 * (see cp_pystack.h).
 *
 * Safety argument.  We start from PyGILState_GetThisThreadState(), a
 * thread-specific lookup that needs no lock, and only accept a thread state
 * whose thread_id is our own pthread_self(): its frame chain belongs to this
 * thread, and this thread is inside our hook, so no frame can be pushed,
 * popped or freed while we read.  Each frame holds a strong reference to its
 * code object, and a code object holds its file name, qualified name and
 * line table, all immutable; so everything we follow is alive and stable.
 * We never write, never call the C API (no refcounting without the GIL), and
 * check every pointer (non-NULL, aligned, user-space) and every object type
 * (ob_type == &PyCode_Type / &PyUnicode_Type / &PyBytes_Type) before use.
 * Not covered: another thread tearing the interpreter down (Py_FinalizeEx
 * deleting daemon threads' states) between our "finalizing?" check and the
 * walk; the window is a few hundred nanoseconds.
 *
 * Call sites are cached by (code object address, instruction index) in
 * cp_pysite.c, which holds no reference either: its header comment says why
 * a hit is validated against the live code object, and when the
 * code-watcher memo (CPython 3.12+, registered by the companion through
 * cuprobe_py_code_watch below) lets it skip that.  This file keeps the
 * memo's preconditions: one interpreter, not finalising.
 */
#include "cp_hot.h"
#include "cp_pystack.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cp_itab.h"
#include "cp_modules.h"
#include "cp_pyintern.h"
#include "cp_pylayout.h"
#include "cp_pysite.h"
#include "cp_pystr.h"
#include "cp_rec.h"

#define PY_WALK_MAX 128         /* frames per walk */
#define PY_LINETABLE_MAX (1 << 24)

struct py_syms {
    void *(*get_tstate)(void);  /* PyGILState_GetThisThreadState */
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    /* PyInterpreterState_Head / _Main: the memo's "one interpreter" test;
     * optional (without them the memo never starts) */
    void *(*interp_head)(void);
    void *(*interp_main)(void);
    uintptr_t code_type, unicode_type, bytes_type;
};

static struct py_syms g_py;
static const struct cp_pylayout *g_layout;
static struct cp_pylayout g_layout_313;
static unsigned long g_version;
/* 0: no interpreter found yet, 1: ready, -1: unsupported or broken (logged) */
static _Atomic int g_state;
static _Atomic uint64_t g_checked_adds = UINT64_MAX;
static pthread_mutex_t g_init_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- raw reads ------------------------------------------------------- */


static inline int is_type(uintptr_t obj, uintptr_t type)
{
    return ptr_ok(obj) && rd_ptr(obj + (uintptr_t)g_layout->ob_type) == type;
}

/* ---- interpreter discovery -------------------------------------------- */

static void py_disable(const char *why)
{
    if (g_version)
        cp_log(1, "python: CPython %lu.%lu.%lu: %s; no Python frames will be recorded",
               g_version >> 24, (g_version >> 16) & 0xff, (g_version >> 8) & 0xff, why);
    else
        cp_log(1, "python: CPython %s; no Python frames will be recorded", why);
    atomic_store_explicit(&g_state, -1, memory_order_release);
}

/* Look the interpreter up.  Called with g_init_lock held, state 0. */
static void py_probe_locked(void)
{
    const unsigned long *version;
    char why[160];
    void *fin;

    g_py.is_initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (!g_py.is_initialized)
        return;     /* no Python in this process (yet) */
    version = dlsym(RTLD_DEFAULT, "Py_Version");
    if (!version) {
        py_disable("older than 3.11 (no Py_Version) is not supported");
        return;
    }
    g_version = *version;
    g_py.get_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    /* 3.13 made it public as Py_IsFinalizing; 3.11 and 3.12 have the
     * underscore name.  Both read one atomic field, no GIL needed. */
    fin = dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
    if (!fin)
        fin = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    g_py.is_finalizing = (int (*)(void))fin;
    g_py.interp_head = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyInterpreterState_Head");
    g_py.interp_main = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
    g_py.code_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
    g_py.unicode_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_Type");
    g_py.bytes_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyBytes_Type");
    if (!g_py.get_tstate || !g_py.is_finalizing || !g_py.code_type || !g_py.unicode_type ||
        !g_py.bytes_type) {
        py_disable("an interpreter symbol is missing");
        return;
    }
    g_layout = cp_pylayout_select(g_version, dlsym(RTLD_DEFAULT, "_PyRuntime"), &g_layout_313,
                                  why, sizeof(why));
    if (!g_layout) {
        py_disable(why);
        return;
    }
    cp_pysite_setup(g_layout, g_py.unicode_type, g_py.bytes_type);
    cp_log(2, "python: CPython %lu.%lu.%lu, layout %s: Python frames on", g_version >> 24,
           (g_version >> 16) & 0xff, (g_version >> 8) & 0xff, g_layout->name);
    atomic_store_explicit(&g_state, 1, memory_order_release);
}

/* @return : 1 when frames can be read, else 0. */
CP_HOT static int py_ready(void)
{
    int st = atomic_load_explicit(&g_state, memory_order_acquire);
    uint64_t adds;
    if (st)
        return st > 0;
    /* Look again only when a library was loaded since the last look: a
     * process without Python pays one load here, not a dlsym. */
    adds = cp_modules_adds();
    if (atomic_load_explicit(&g_checked_adds, memory_order_relaxed) == adds)
        return 0;
    pthread_mutex_lock(&g_init_lock);
    if (atomic_load_explicit(&g_state, memory_order_relaxed) == 0) {
        py_probe_locked();
        atomic_store_explicit(&g_checked_adds, adds, memory_order_relaxed);
    }
    pthread_mutex_unlock(&g_init_lock);
    return atomic_load_explicit(&g_state, memory_order_acquire) > 0;
}

/* ---- the memo's preconditions ------------------------------------------- */

/* Whether the main interpreter is the only one: new interpreters go to the
 * head of the runtime's list, the main one stays last.  Two plain loads by
 * CPython's own accessors, no lock: a racing creation is seen by the next
 * walk, and meanwhile its code objects are not ours to stamp (see
 * cp_pysite.c). */
static int py_one_interpreter(void)
{
    return g_py.interp_head && g_py.interp_main && g_py.interp_head() == g_py.interp_main();
}

/* Stop the memo when its preconditions fail; a load when they hold. */
static void py_memo_check(int running)
{
    if (!cp_pysite_memo_on())
        return;
    if (!running)
        cp_pysite_memo_stop("the interpreter is finalising or gone");
    else if (!py_one_interpreter())
        cp_pysite_memo_stop("a second interpreter exists");
}

__attribute__((visibility("default"))) int cuprobe_py_code_watch(int on)
{
    if (!on) {
        cp_pysite_memo_stop("the interpreter is exiting");
        return 0;
    }
    if (!py_ready() || g_version < 0x030c0000)
        return -ENOSYS;
    if (!g_py.is_initialized() || g_py.is_finalizing())
        return -ESRCH;
    if (!py_one_interpreter()) {
        cp_pysite_memo_stop("more than one interpreter");
        return -EXDEV;
    }
    return cp_pysite_memo_start();
}

/* The innermost frame of the calling thread's interpreter state, or 0 when
 * this thread never ran Python (or its state is gone).  Only our own
 * thread's state is consistent while we read it. */
static uintptr_t py_top_frame(const struct cp_pylayout *L)
{
    uintptr_t ts = (uintptr_t)g_py.get_tstate();
    if (!ptr_ok(ts) ||
        (unsigned long)rd_ptr(ts + (uintptr_t)L->ts_thread_id) != (unsigned long)pthread_self())
        return 0;
    if (L->ts_cframe >= 0) {
        uintptr_t cf = rd_ptr(ts + (uintptr_t)L->ts_cframe);
        return ptr_ok(cf) ? rd_ptr(cf + (uintptr_t)L->cframe_current_frame) : 0;
    }
    return rd_ptr(ts + (uintptr_t)L->ts_current_frame);
}

/* ---- the walk ---------------------------------------------------------- */

/* The frames this thread's last walk visited, innermost first.  A walk is a
 * chain of dependent loads (a frame's address is in the one before it), and
 * between two events PyTorch and the driver evict the frames from the near
 * caches, so every frame costs a miss after the previous one's.  The next walk finds most
 * frames at the same addresses (the outer ones are the same activations, and
 * a sibling call reuses the same data-stack slots): prefetched together
 * before the walk, their misses overlap.  A hint only: a stale address is
 * never read, and a prefetch cannot fault. */
#define PY_HINT_MAX 64
static __thread uintptr_t t_hint[PY_HINT_MAX];
static __thread unsigned t_hint_n;

static inline void py_hint_prefetch(int max)
{
    unsigned n = t_hint_n < (unsigned)max ? t_hint_n : (unsigned)max;
    for (unsigned i = 0; i < n; i++) {
        /* A frame's fields span two lines (3.12: owner at +70). */
        __builtin_prefetch((const void *)t_hint[i]);
        __builtin_prefetch((const void *)(t_hint[i] + 64));
    }
}

static inline void py_hint_put(unsigned v, uintptr_t fr)
{
    if (v < PY_HINT_MAX)
        t_hint[v] = fr;
}

/* A walk that visited v frames; a short one (a launch's few innermost
 * frames) keeps the deeper hints of the last long one. */
static inline void py_hint_end(unsigned v, int whole)
{
    if (v > PY_HINT_MAX)
        v = PY_HINT_MAX;
    if (whole || v > t_hint_n)
        t_hint_n = v;
}

/* A walk's fingerprint: the mix starts at PY_FP_SEED, takes each frame
 * (py_fp_add) and ends with py_fp_end.  cp_pystack_fp() and py_walk_sites()
 * must compute it alike. */
#define PY_FP_SEED 0x243F6A8885A308D3ull

/* One frame into a walk's fingerprint (a 64-bit mix; see cp_pystack_fp). */
static inline uint64_t py_fp_add(uint64_t h, uintptr_t code, uintptr_t instr, int generator)
{
    h = (h ^ code) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 31) ^ instr ^ (uint64_t)generator) * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
}

/* A walk's fingerprint from its mix h over n frames (n > 0): never 0, which
 * means "none". */
static inline uint64_t py_fp_end(uint64_t h, int n)
{
    return (h ^ (uint64_t)n) | 1;
}

/* A walk's start: the calling thread's innermost frame, or 0 when there is
 * nothing to walk.  *memo: the code watcher's epoch, read once per walk,
 * after our frames' code objects were made (cp_pysite.c says why that is
 * enough); 0 when off. */
static uintptr_t py_walk_start(uint64_t *memo)
{
    *memo = 0;
    if (!py_ready())
        return 0;
    if (!g_py.is_initialized() || g_py.is_finalizing()) {
        py_memo_check(0);
        return 0;
    }
    py_memo_check(1);
    *memo = cp_pysite_memo();
    return py_top_frame(g_layout);
}

CP_HOT int cp_pystack_fp(int max, uint64_t *fp, uint64_t *memo)
{
    const struct cp_pylayout *L;
    uint64_t h = PY_FP_SEED;
    uintptr_t fr;
    int n = 0, budget;
    unsigned v = 0;

    *fp = 0;
    *memo = 0;
    if (max <= 0 || !py_ready())
        return 0;
    if (max > PY_WALK_MAX)
        max = PY_WALK_MAX;
    /* None of py_walk_start()'s calls into libpython (each a few cold
     * lines of its code and data): a fingerprint only finds what a full
     * walk stored, and a full walk stores only under a memo it saw on with
     * one interpreter, initialised and not finalising.  The memo stays on
     * (cp_pysite_memo() != 0) only until the companion's atexit or a walk
     * that sees a second interpreter or the end, and a hit needs the
     * epoch unchanged: no code object died, so every address holds the
     * object the full walk saw.  This thread's own frames stay readable
     * while it runs, as for the full walk. */
    py_hint_prefetch(max);
    *memo = cp_pysite_memo();
    L = g_layout;   /* read after py_ready() said it is set */
    fr = py_top_frame(L);
    if (!fr)
        return 0;
    if (!*memo)
        return -1;  /* no watcher: a fingerprint would prove nothing */
    /* The walk below, minus everything it reads of code objects: the
     * frames' own lines only (the interpreter just used them).  It stops
     * where py_walk_sites() stops when that one took every frame. */
    budget = 4 * max + 64;
    for (; fr && n < max && budget > 0; budget--, fr = rd_ptr(fr + (uintptr_t)L->fr_previous)) {
        int owner;
        if (!ptr_ok(fr))
            break;
        py_hint_put(v++, fr);
        owner = *(const signed char *)(fr + (uintptr_t)L->fr_owner);
        if (owner == L->owner_cstack)
            continue;
        h = py_fp_add(h, rd_ptr(fr + (uintptr_t)L->fr_code), rd_ptr(fr + (uintptr_t)L->fr_instr),
                      owner == L->owner_generator);
        n++;
    }
    py_hint_end(v, 1);
    if (budget <= 0)
        return -1;
    *fp = n ? py_fp_end(h, n) : 0;
    return n;
}

/* The walk.  *fp (when fp is not NULL): the fingerprint cp_pystack_fp()
 * gives for the same frames, when this walk took every frame it met (then
 * the frames alone decide its result, as long as none of their code
 * objects died: see cp_pystack_fp), else 0. */
static int py_walk_sites(const struct cp_pysite **out, int max, uint64_t *fp, uint64_t *memo_out)
{
    const struct cp_pylayout *L;
    uintptr_t fr;
    uint64_t memo, h = PY_FP_SEED;
    int n = 0, budget, all = 1;
    unsigned v = 0;

    if (fp)
        *fp = 0;
    if (memo_out)
        *memo_out = 0;
    if (max <= 0)
        return 0;
    py_hint_prefetch(max);
    fr = py_walk_start(&memo);
    L = g_layout;   /* read after py_ready() (in py_walk_start) said it is set */
    if (memo_out)
        *memo_out = memo;
    /* Skipped frames count against a budget too, so that a corrupt cycle
     * cannot keep us here. */
    budget = 4 * max + 64;
    for (; fr && n < max && budget > 0; budget--, fr = rd_ptr(fr + (uintptr_t)L->fr_previous)) {
        int owner, held;
        uintptr_t code, instr;
        intptr_t lasti;
        int64_t ncode;
        const struct cp_pysite *s;

        if (!ptr_ok(fr))
            break;
        py_hint_put(v++, fr);
        owner = *(const signed char *)(fr + (uintptr_t)L->fr_owner);
        if (owner == L->owner_cstack)
            continue;   /* the C-stack entry shim between Python frames */
        code = rd_ptr(fr + (uintptr_t)L->fr_code);
        instr = rd_ptr(fr + (uintptr_t)L->fr_instr);
        h = py_fp_add(h, code, instr, owner == L->owner_generator);
        lasti = ((intptr_t)instr - (intptr_t)(code + (uintptr_t)L->co_code)) / 2;
        /* A memo hit: this very code object passed the checks below at this
         * instruction in an earlier walk, so none of them can fail now, and
         * its lines need not be read. */
        if (memo && (s = cp_pysite_memo_get(code, lasti, memo, owner == L->owner_generator))) {
            out[n++] = s;
            continue;
        }
        if (!is_type(code, g_py.code_type)) {
            all = 0;
            continue;
        }
        ncode = rd_i64(code + (uintptr_t)L->co_size);
        /* Incomplete frames (pushed, first instruction not run yet) are
         * skipped, as CPython's own tracebacks do. */
        if (lasti < 0 || lasti >= ncode) {
            all = 0;
            continue;
        }
        if (L->co_firsttraceable >= 0 && owner != L->owner_generator &&
            lasti < rd_i32(code + (uintptr_t)L->co_firsttraceable)) {
            all = 0;
            continue;
        }
        held = CP_PYSITE_HELD | CP_PYSITE_TRACEABLE;
        /* A generator's frame is taken either way; its stamp must say
         * whether the instruction passes the rule for other frames. */
        if (owner == L->owner_generator && memo && L->co_firsttraceable >= 0 &&
            lasti < rd_i32(code + (uintptr_t)L->co_firsttraceable))
            held = CP_PYSITE_HELD;
        s = cp_pysite_get(code, (int)lasti, memo, held);
        if (s)
            out[n++] = s;
        else
            all = 0;
    }
    cp_pysite_tick();
    py_hint_end(v, 1);
    if (fp && all && budget > 0 && n)
        *fp = py_fp_end(h, n);
    return n;
}

int cp_pystack_walk(cp_pyframe_raw *out, int max)
{
    const struct cp_pysite *sites[PY_WALK_MAX];
    int n = py_walk_sites(sites, max < PY_WALK_MAX ? max : PY_WALK_MAX, NULL, NULL);
    for (int i = 0; i < n; i++) {
        out[i].file = sites[i]->file;
        out[i].file_len = sites[i]->file_len;
        out[i].func = sites[i]->func;
        out[i].func_len = sites[i]->func_len;
        out[i].line = sites[i]->line;
    }
    return n;
}

int cp_pystack_capture(uint64_t *ids, int max, uint64_t *fp, uint64_t *memo)
{
    const struct cp_pysite *sites[PY_WALK_MAX];
    int n = py_walk_sites(sites, max < PY_WALK_MAX ? max : PY_WALK_MAX, fp, memo);
    if (n <= 0)
        return 0;   /* nothing to intern; sites is read only where set */
    int got = cp_pyintern_sites(sites, n, ids);
    if (got != n && fp)
        *fp = 0;    /* a frame not interned: not a walk to repeat */
    return got;
}

/* ---- raw snapshots (the launch ring) ------------------------------------ */

int cp_pystack_raw(cp_pyraw *out, int max)
{
    const struct cp_pylayout *L;
    uintptr_t fr;
    int n = 0, budget;
    unsigned v = 0;

    if (max <= 0 || atomic_load_explicit(&g_state, memory_order_relaxed) <= 0)
        return 0;
    py_hint_prefetch(max + 2);
    L = g_layout;
    /* With the code watcher's memo on, the interpreter is initialised and
     * not finalising: the memo starts only in a running interpreter and
     * stops for good at the companion's atexit, which CPython runs before
     * it marks itself finalising.  Two calls into libpython (cold lines of
     * its code and data) saved on every launch. */
    if (!cp_pysite_memo() && (!g_py.is_initialized() || g_py.is_finalizing()))
        return 0;
    fr = py_top_frame(L);
    budget = 2 * max + 16;
    for (; fr && n < max && budget > 0; budget--, fr = rd_ptr(fr + (uintptr_t)L->fr_previous)) {
        uintptr_t code;
        if (!ptr_ok(fr))
            break;
        py_hint_put(v++, fr);
        if (*(const signed char *)(fr + (uintptr_t)L->fr_owner) == L->owner_cstack)
            continue;
        /* Not checked for a code object here: cp_pystack_intern_raw()
         * checks what it resolves (the object may be gone by then anyway),
         * and the check would read a line of every frame's code object on
         * every launch. */
        code = rd_ptr(fr + (uintptr_t)L->fr_code);
        out[n].code = code;
        out[n].instr = rd_ptr(fr + (uintptr_t)L->fr_instr);
        n++;
    }
    py_hint_end(v, 0);
    return n;
}

/* Whether [a, a + n) can be read, without touching it (a code object seen
 * by an earlier launch may have been freed and its arena unmapped since). */
static int py_readable(uintptr_t a, size_t n)
{
    char buf[256];
    struct iovec local = { buf, 0 }, remote = { (void *)a, 0 };
    if (!ptr_ok(a & ~(uintptr_t)7))
        return 0;
    while (n) {
        size_t k = n < sizeof buf ? n : sizeof buf;
        local.iov_len = remote.iov_len = k;
        remote.iov_base = (void *)a;
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)k)
            return 0;
        a += k;
        n -= k;
        if (n > sizeof buf) {       /* first and last chunk are enough */
            a += n - sizeof buf;
            n = sizeof buf;
        }
    }
    return 1;
}

int cp_pystack_intern_raw(const cp_pyraw *in, int n, uint64_t *ids, int max)
{
    const struct cp_pysite *sites[PY_WALK_MAX];
    const struct cp_pylayout *L = g_layout;
    uint64_t memo;
    int k = 0;

    if (atomic_load_explicit(&g_state, memory_order_acquire) <= 0)
        return 0;
    py_memo_check(g_py.is_initialized() && !g_py.is_finalizing());
    memo = cp_pysite_memo();
    for (int i = 0; i < n && k < max && k < PY_WALK_MAX; i++) {
        uintptr_t code = in[i].code, lt, fn, qn;
        intptr_t lasti;
        const struct cp_pysite *s;
        if (!py_readable(code, (size_t)L->co_code) || !is_type(code, g_py.code_type))
            continue;
        fn = rd_ptr(code + (uintptr_t)L->co_filename);
        qn = rd_ptr(code + (uintptr_t)L->co_qualname);
        lt = rd_ptr(code + (uintptr_t)L->co_linetable);
        if (!py_readable(fn, (size_t)L->uni_compact_data) ||
            !py_readable(qn, (size_t)L->uni_compact_data) ||
            !py_readable(lt, (size_t)L->bytes_data) || !is_type(lt, g_py.bytes_type) ||
            rd_i64(lt + (uintptr_t)L->bytes_size) < 0 ||
            rd_i64(lt + (uintptr_t)L->bytes_size) > PY_LINETABLE_MAX ||
            !py_readable(lt + (uintptr_t)L->bytes_data,
                         (size_t)rd_i64(lt + (uintptr_t)L->bytes_size) + 1))
            continue;
        lasti = ((intptr_t)in[i].instr - (intptr_t)(code + (uintptr_t)L->co_code)) / 2;
        if (lasti < 0 || lasti >= rd_i64(code + (uintptr_t)L->co_size))
            continue;
        /* Not held: the frame that ran it may be gone (never stamps; a hit
         * says what the object was when this batch began). */
        s = cp_pysite_get(code, (int)lasti, memo, 0);
        if (s)
            sites[k++] = s;
    }
    cp_pysite_tick();
    return cp_pyintern_sites(sites, k, ids);
}

int cp_pystack_status(void)
{
    if (py_ready())
        return 1;
    return atomic_load_explicit(&g_state, memory_order_acquire) < 0 ? -1 : 0;
}

unsigned long cp_pystack_version(void)
{
    return atomic_load_explicit(&g_state, memory_order_acquire) ? g_version : 0;
}

void cp_pystack_atfork_child(void)
{
    pthread_mutex_init(&g_init_lock, NULL);
    cp_pysite_atfork_child();
    cp_pyintern_atfork_child();
}
