/*
 * cp_pystack.c - the calling thread's Python frames, read without the GIL
 * (see cp_pystack.h; issue 4).
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
 * Caching, and why no reference is kept.  Holding a reference (Py_IncRef)
 * needs the GIL, which we must not take.  Instead resolved call sites are
 * cached by (code object address, instruction index), and every hit is
 * re-validated against the live code object: same co_filename, co_qualname
 * and co_linetable pointers, same co_firstlineno, and the same CPython hash
 * (PyASCIIObject.hash, a content hash) of both strings.  A new code object at
 * a reused address would need identical string objects with identical
 * contents and the same line table object to pass, and then it also resolves
 * to the same file, function and line, so the cached answer stays right.
 */
#include "cp_pystack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cp_itab.h"
#include "cp_modules.h"
#include "cp_pylayout.h"
#include "cp_pystr.h"
#include "cp_rec.h"

#define PY_STR_BUF CP_PYSTR_BUF
#define PY_WALK_MAX 128         /* frames per walk */
#define PY_LINETABLE_MAX (1 << 24)
#define SITE_LOG2 15

struct py_site {
    uintptr_t code;
    int32_t lasti;              /* instruction index, in code units */
    int32_t line;
    uintptr_t filename, qualname, linetable;
    int64_t file_hash, func_hash;
    int32_t firstlineno;
    uint32_t file_len, func_len;
    const char *file, *func;
    _Atomic uint64_t file_id, func_id;  /* trace string ids, 0 = not yet */
    /* The frame's trace id and the file epoch its record was last known to
     * be in: a repeated site skips interning (hash and probe) per frame. */
    _Atomic uint64_t frame_id, frame_epoch;
};

struct py_syms {
    void *(*get_tstate)(void);  /* PyGILState_GetThisThreadState */
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
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

static _Atomic(struct py_site *) *g_sites;
static pthread_mutex_t g_site_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_site_count;

static struct cp_itab g_strs = CP_ITAB_INIT("python string", 16);
static struct cp_itab g_frames = CP_ITAB_INIT("python frame", 17);

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
    cp_log(2, "python: CPython %lu.%lu.%lu, layout %s: Python frames on", g_version >> 24,
           (g_version >> 16) & 0xff, (g_version >> 8) & 0xff, g_layout->name);
    atomic_store_explicit(&g_state, 1, memory_order_release);
}

/* @return : 1 when frames can be read, else 0. */
static int py_ready(void)
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

/* ---- the call-site cache ---------------------------------------------- */

static int site_valid(const struct py_site *s, uintptr_t code)
{
    const struct cp_pylayout *L = g_layout;
    uintptr_t fn = rd_ptr(code + (uintptr_t)L->co_filename);
    uintptr_t qn = rd_ptr(code + (uintptr_t)L->co_qualname);
    return fn == s->filename && qn == s->qualname &&
           rd_ptr(code + (uintptr_t)L->co_linetable) == s->linetable &&
           rd_i32(code + (uintptr_t)L->co_firstlineno) == s->firstlineno &&
           rd_i64(fn + (uintptr_t)L->uni_hash) == s->file_hash &&
           rd_i64(qn + (uintptr_t)L->uni_hash) == s->func_hash;
}

static uint64_t site_hash(uintptr_t code, int lasti)
{
    uint64_t h = ((uint64_t)code ^ ((uint64_t)(uint32_t)lasti << 47)) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Resolve (code, lasti) from the live objects.  @return : a new site in
 * arena memory, or NULL when something does not look like CPython's. */
static struct py_site *site_resolve(uintptr_t code, int lasti)
{
    const struct cp_pylayout *L = g_layout;
    struct py_site *s = NULL;
    long flen, qlen;
    int64_t fh = 0, qh = 0, lt_size;
    uintptr_t lt;
    char *mem, *fbuf, *qbuf;

    lt = rd_ptr(code + (uintptr_t)L->co_linetable);
    if (!is_type(lt, g_py.bytes_type))
        return NULL;
    lt_size = rd_i64(lt + (uintptr_t)L->bytes_size);
    if (lt_size < 0 || lt_size > PY_LINETABLE_MAX)
        return NULL;
    /* Heap, not TLS or stack: this is the rare path, and the shim's static
     * TLS and the host's thread stacks are better kept small. */
    fbuf = malloc(2 * PY_STR_BUF);
    if (!fbuf)
        return NULL;
    qbuf = fbuf + PY_STR_BUF;
    flen = cp_pystr_utf8(g_layout, g_py.unicode_type, rd_ptr(code + (uintptr_t)L->co_filename), fbuf, &fh);
    qlen = cp_pystr_utf8(g_layout, g_py.unicode_type, rd_ptr(code + (uintptr_t)L->co_qualname), qbuf, &qh);
    if (flen < 0 || qlen < 0)
        goto out_free;
    mem = cp_itab_alloc(sizeof(*s) + (size_t)flen + (size_t)qlen);
    if (!mem)
        goto out_free;
    s = (struct py_site *)mem;
    memset(s, 0, sizeof(*s));
    s->code = code;
    s->lasti = lasti;
    s->filename = rd_ptr(code + (uintptr_t)L->co_filename);
    s->qualname = rd_ptr(code + (uintptr_t)L->co_qualname);
    s->linetable = lt;
    s->firstlineno = rd_i32(code + (uintptr_t)L->co_firstlineno);
    s->file_hash = fh;
    s->func_hash = qh;
    s->line = cp_pystr_addr2line((const uint8_t *)(lt + (uintptr_t)L->bytes_data), (size_t)lt_size,
                           s->firstlineno, lasti);
    memcpy(mem + sizeof(*s), fbuf, (size_t)flen);
    memcpy(mem + sizeof(*s) + flen, qbuf, (size_t)qlen);
    s->file = mem + sizeof(*s);
    s->file_len = (uint32_t)flen;
    s->func = mem + sizeof(*s) + flen;
    s->func_len = (uint32_t)qlen;
out_free:
    free(fbuf);
    return s;
}

static const struct py_site *site_get(uintptr_t code, int lasti)
{
    _Atomic(struct py_site *) *slots = atomic_load_explicit(
        (_Atomic(_Atomic(struct py_site *) *) *)&g_sites, memory_order_acquire);
    const size_t mask = ((size_t)1 << SITE_LOG2) - 1;
    uint64_t h = site_hash(code, lasti);
    struct py_site *s;
    long slot = -1;

    if (slots) {
        for (size_t i = 0; i <= mask; i++) {
            struct py_site *e = atomic_load_explicit(&slots[(h + i) & mask], memory_order_acquire);
            if (!e)
                break;
            if (e->code == code && e->lasti == lasti && site_valid(e, code))
                return e;
        }
    }
    s = site_resolve(code, lasti);
    if (!s)
        return NULL;
    pthread_mutex_lock(&g_site_lock);
    if (!g_sites) {
        void *m = mmap(NULL, sizeof(*g_sites) << SITE_LOG2, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            goto out_unlock;
        atomic_store_explicit((_Atomic(void *) *)&g_sites, m, memory_order_release);
    }
    /* Same key with stale contents (a new code object at a reused address):
     * replace it; the old site stays readable for whoever holds it. */
    for (size_t i = 0; i <= mask; i++) {
        struct py_site *e = atomic_load_explicit(&g_sites[(h + i) & mask], memory_order_relaxed);
        if (!e || (e->code == code && e->lasti == lasti)) {
            slot = (long)((h + i) & mask);
            if (!e && g_site_count >= (3u << SITE_LOG2) / 4)
                slot = -1;  /* full: answer without caching */
            else if (!e)
                g_site_count++;
            break;
        }
    }
    if (slot >= 0)
        atomic_store_explicit(&g_sites[slot], s, memory_order_release);
out_unlock:
    pthread_mutex_unlock(&g_site_lock);
    return s;
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

static int py_walk_sites(const struct py_site **out, int max)
{
    const struct cp_pylayout *L;
    uintptr_t fr;
    int n = 0, budget;

    if (max <= 0 || !py_ready())
        return 0;
    L = g_layout;
    if (!g_py.is_initialized() || g_py.is_finalizing())
        return 0;
    fr = py_top_frame(L);
    /* Skipped frames count against a budget too, so that a corrupt cycle
     * cannot keep us here. */
    budget = 4 * max + 64;
    for (; fr && n < max && budget > 0; budget--, fr = rd_ptr(fr + (uintptr_t)L->fr_previous)) {
        int owner;
        uintptr_t code, instr;
        intptr_t lasti;
        int64_t ncode;
        const struct py_site *s;

        if (!ptr_ok(fr))
            break;
        owner = *(const signed char *)(fr + (uintptr_t)L->fr_owner);
        if (owner == L->owner_cstack)
            continue;   /* the C-stack entry shim between Python frames */
        code = rd_ptr(fr + (uintptr_t)L->fr_code);
        if (!is_type(code, g_py.code_type))
            continue;
        instr = rd_ptr(fr + (uintptr_t)L->fr_instr);
        lasti = ((intptr_t)instr - (intptr_t)(code + (uintptr_t)L->co_code)) / 2;
        ncode = rd_i64(code + (uintptr_t)L->co_size);
        /* Incomplete frames (pushed, first instruction not run yet) are
         * skipped, as CPython's own tracebacks do. */
        if (lasti < 0 || lasti >= ncode)
            continue;
        if (L->co_firsttraceable >= 0 && owner != L->owner_generator &&
            lasti < rd_i32(code + (uintptr_t)L->co_firsttraceable))
            continue;
        s = site_get(code, (int)lasti);
        if (s)
            out[n++] = s;
    }
    return n;
}

int cp_pystack_walk(cp_pyframe_raw *out, int max)
{
    const struct py_site *sites[PY_WALK_MAX];
    int n = py_walk_sites(sites, max < PY_WALK_MAX ? max : PY_WALK_MAX);
    for (int i = 0; i < n; i++) {
        out[i].file = sites[i]->file;
        out[i].file_len = sites[i]->file_len;
        out[i].func = sites[i]->func;
        out[i].func_len = sites[i]->func_len;
        out[i].line = sites[i]->line;
    }
    return n;
}

/* ---- trace records ------------------------------------------------------ */

static int str_announce(void *ctx, uint64_t id, const void *key, size_t len)
{
    return (void)ctx, cp_rec_put_string(id, key, len);
}

static uint64_t str_intern(const char *s, size_t len)
{
    return cp_itab_intern(&g_strs, s, len, str_announce, NULL);
}

struct py_frame_key { uint64_t file, func, line; };

static int frame_announce(void *ctx, uint64_t id, const void *key, size_t len)
{
    const struct py_site *s = ctx;
    const struct py_frame_key *k = key;
    (void)len;
    /* The strings must be in this file too (again, if it is a new file);
     * lock order: frames -> strings. */
    if (str_intern(s->file, s->file_len) != k->file || str_intern(s->func, s->func_len) != k->func)
        return -1;
    return cp_rec_put_pyframe(id, k->file, k->func, k->line);
}

/* The site's string id, interned on first use (ids never change). */
static uint64_t site_str_id(_Atomic uint64_t *slot, const char *s, size_t len)
{
    uint64_t id = atomic_load_explicit(slot, memory_order_acquire);
    if (!id) {
        id = str_intern(s, len);
        atomic_store_explicit(slot, id, memory_order_release);
    }
    return id;
}

/* Intern resolved sites as trace frame ids.  @return : ids written. */
static int sites_intern(const struct py_site *const *sites, int n, uint64_t *ids)
{
    uint64_t epoch = n ? cp_itab_epoch() : 0;
    int out = 0;
    for (int i = 0; i < n; i++) {
        struct py_site *s = (struct py_site *)sites[i];
        struct py_frame_key k;
        uint64_t id;
        /* Read before the intern: if a new file starts meanwhile, the older
         * epoch is kept and the next use interns (re-announces) again. */
        if (atomic_load_explicit(&s->frame_epoch, memory_order_acquire) == epoch &&
            (id = atomic_load_explicit(&s->frame_id, memory_order_relaxed)) != 0) {
            ids[out++] = id;
            continue;
        }
        k.file = site_str_id(&s->file_id, s->file, s->file_len);
        k.func = site_str_id(&s->func_id, s->func, s->func_len);
        k.line = s->line > 0 ? (uint64_t)s->line : 0;
        if (!k.file || !k.func)
            continue;
        id = cp_itab_intern(&g_frames, &k, sizeof(k), frame_announce, s);
        if (id) {
            /* One site, one key: the id never changes, only the epoch. */
            atomic_store_explicit(&s->frame_id, id, memory_order_relaxed);
            atomic_store_explicit(&s->frame_epoch, epoch, memory_order_release);
            ids[out++] = id;
        }
    }
    return out;
}

int cp_pystack_capture(uint64_t *ids, int max)
{
    const struct py_site *sites[PY_WALK_MAX];
    int n = py_walk_sites(sites, max < PY_WALK_MAX ? max : PY_WALK_MAX);
    return sites_intern(sites, n, ids);
}

/* ---- raw snapshots (the launch ring) ------------------------------------ */

int cp_pystack_raw(cp_pyraw *out, int max)
{
    const struct cp_pylayout *L;
    uintptr_t fr;
    int n = 0, budget;

    if (max <= 0 || atomic_load_explicit(&g_state, memory_order_relaxed) <= 0)
        return 0;
    L = g_layout;
    if (!g_py.is_initialized() || g_py.is_finalizing())
        return 0;
    fr = py_top_frame(L);
    budget = 2 * max + 16;
    for (; fr && n < max && budget > 0; budget--, fr = rd_ptr(fr + (uintptr_t)L->fr_previous)) {
        uintptr_t code;
        if (!ptr_ok(fr))
            break;
        if (*(const signed char *)(fr + (uintptr_t)L->fr_owner) == L->owner_cstack)
            continue;
        code = rd_ptr(fr + (uintptr_t)L->fr_code);
        if (!is_type(code, g_py.code_type))
            continue;
        out[n].code = code;
        out[n].instr = rd_ptr(fr + (uintptr_t)L->fr_instr);
        n++;
    }
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
    const struct py_site *sites[PY_WALK_MAX];
    const struct cp_pylayout *L = g_layout;
    int k = 0;

    if (atomic_load_explicit(&g_state, memory_order_acquire) <= 0)
        return 0;
    for (int i = 0; i < n && k < max && k < PY_WALK_MAX; i++) {
        uintptr_t code = in[i].code, lt, fn, qn;
        intptr_t lasti;
        const struct py_site *s;
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
        s = site_get(code, (int)lasti);
        if (s)
            sites[k++] = s;
    }
    return sites_intern(sites, k, ids);
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
    pthread_mutex_init(&g_site_lock, NULL);
    cp_itab_atfork_child(&g_strs);
    cp_itab_atfork_child(&g_frames);
}
