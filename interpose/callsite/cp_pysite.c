/*
 * cp_pysite.c - the Python call-site cache and its code-watcher memo (see
 * cp_pysite.h).
 *
 * Why every hit is validated.  The walker must not take the GIL, so the
 * cache holds no reference to the code objects it describes: a code object
 * can be freed and a new one allocated at the same address.  A hit is
 * therefore checked against the live code object: same co_filename,
 * co_qualname and co_linetable pointers, same co_firstlineno, and the same
 * CPython hash (PyASCIIObject.hash, a content hash) of both strings.  A new
 * code object at a reused address would need identical string objects with
 * identical contents and the same line table object to pass, and then it
 * also resolves to the same file, function and line.  That costs the code
 * object's second line and a line of each string object per frame per
 * event, lines that PyTorch and the driver evict between two events.
 *
 * The memo: why a matching stamp proves the address holds the same code
 * object.  On CPython 3.12+ the companion registers cuprobe_py_code_event()
 * with PyCode_AddWatcher; it moves g_memo's epoch on at every
 * PY_CODE_EVENT_DESTROY.  code_dealloc() fires that event before anything
 * is released (a resurrected object also moves it: harmless), and a code
 * object's memory is returned only through code_dealloc(); so between two
 * reads of the same epoch no watched code object was freed.  A walk reads
 * the epoch once, at its start.  A site is stamped with the epoch read
 * *before* it was validated (or resolved), and only by a walker whose own
 * frame holds a reference to that code object V, so V was alive and
 * described by the site at that moment.  Later, a walker whose frame holds
 * code object W at the same address reads the epoch: if it equals the
 * stamp, V was not freed between the validation and that read, so V still
 * occupied the address then, and W, alive at the same address all along, is
 * V.  The read happens after W's allocation (W's frame was there before the
 * walk began, and the GIL or the allocator orders W's allocation after V's
 * destroy event), so an intervening destroy cannot be missed.  A destroy
 * during a validation leaves the stamp older than the epoch, and the next
 * hit validates again.  cp_pystack_intern_raw() resolves code addresses
 * taken earlier, whose objects may be gone: it may take memo hits (V was
 * alive when its batch began: as good an answer for a code object that may
 * be gone as validation's) but never stamps.
 *
 * The walker's first look (cp_pysite_memo_get).  With the memo on, a walk
 * looks a frame's (code, lasti) up before it reads anything of the code
 * object.  A site stamped with the walk's epoch was checked by a walk that
 * held this very object, at this instruction: a code object, the
 * instruction in range, CPython's traceback rule (lasti >=
 * co_firsttraceable).  None of that can change for the same object, so the
 * frame is taken as the full checks would take it, and the code object's
 * lines are not read at all.  The rule also depends on the frame's owner (a
 * generator's frame is taken whatever its instruction), so the stamp
 * records whether the instruction passes it, and a frame of another owner
 * takes the hit only then.
 *
 * What keeps it safe beyond one interpreter's life (cp_pystack.c enforces):
 *  - Watchers are per interpreter.  The memo starts only when the main
 *    interpreter is the only one, and stops for good as soon as a walk sees
 *    a second one (so no code object of another interpreter, whose destroy
 *    we would not see, is ever stamped).  Not covered: a sub-interpreter
 *    created and ended between two walks that frees a main-interpreter code
 *    object (objects shared across interpreters, a bug in CPython's own
 *    terms); documented in docs/framework.md.
 *  - Finalisation clears the watchers before the last code objects die:
 *    the companion stops the memo at exit (atexit), and a walk that finds
 *    the interpreter finalising or gone stops it too, so a later
 *    Py_Initialize() in the same process starts without a memo.
 *  - fork(): the child inherits the interpreter with its watcher (the
 *    shim is mapped at the same address), the epoch and the stamps, all
 *    describing the same objects at the same addresses: the memo stays
 *    right in the child.
 *
 * Only a stamp that changes is written: sites are shared between threads,
 * and the hot path must not write shared lines.
 */
#include "cp_pysite.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cp_itab.h"
#include "cp_pystr.h"
#include "cp_rec.h"

#define PY_LINETABLE_MAX (1 << 24)
#define SITE_LOG2 15

/* g_memo: bit 0 = off for good, bit 1 = on (the watcher is registered),
 * bits 2+ count destroy events.  One word, so that a hit reads its state and
 * its epoch in one load, and a stamp taken while off can never match. */
#define MEMO_DEAD 1u
#define MEMO_ON 2u
#define MEMO_STEP 4u

static const struct cp_pylayout *g_layout;
static uintptr_t g_unicode_type, g_bytes_type;

static _Atomic(struct cp_pysite *) *g_sites;
static pthread_mutex_t g_site_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned g_site_count;

/* Its own line: written at every code object destroy, read at every hit. */
static _Alignas(64) _Atomic uint64_t g_memo;

/* Counted per thread (one add per lookup), flushed by cp_pysite_tick()
 * every ST_FLUSH walks: no shared write per lookup. */
enum { ST_MEMO_HIT, ST_VALIDATE, ST_RESOLVE, ST_N };
#define ST_FLUSH 64
static _Alignas(64) _Atomic uint64_t g_stat[ST_N];
static __thread uint32_t t_stat[ST_N], t_ticks;

static void stat_flush(void)
{
    for (int i = 0; i < ST_N; i++) {
        if (t_stat[i])
            atomic_fetch_add_explicit(&g_stat[i], t_stat[i], memory_order_relaxed);
        t_stat[i] = 0;
    }
    t_ticks = 0;
}

void cp_pysite_tick(void)
{
    if (++t_ticks >= ST_FLUSH)
        stat_flush();
}

void cp_pysite_setup(const struct cp_pylayout *L, uintptr_t unicode_type, uintptr_t bytes_type)
{
    g_layout = L;
    g_unicode_type = unicode_type;
    g_bytes_type = bytes_type;
}

/* ---- the memo ------------------------------------------------------------ */

int cp_pysite_memo_start(void)
{
    uint64_t e = atomic_fetch_or_explicit(&g_memo, MEMO_ON, memory_order_acq_rel);
    if (e & MEMO_DEAD)
        return -ECANCELED;
    if (!(e & MEMO_ON))
        cp_log(2, "python sites: code watcher on, hits skip validation until a code object dies");
    return 0;
}

void cp_pysite_memo_stop(const char *why)
{
    uint64_t e = atomic_fetch_or_explicit(&g_memo, MEMO_DEAD, memory_order_acq_rel);
    if ((e & (MEMO_ON | MEMO_DEAD)) == MEMO_ON)
        cp_log(2, "python sites: code watcher memo off for good: %s", why);
}

int cp_pysite_memo_on(void)
{
    return (atomic_load_explicit(&g_memo, memory_order_relaxed) & (MEMO_ON | MEMO_DEAD)) == MEMO_ON;
}

uint64_t cp_pysite_memo(void)
{
    uint64_t e = atomic_load_explicit(&g_memo, memory_order_acquire);
    /* Never 0 when on (MEMO_ON is set), so 0 can mean "off". */
    return (e & (MEMO_ON | MEMO_DEAD)) == MEMO_ON ? e : 0;
}

__attribute__((visibility("default"))) int cuprobe_py_code_event(int event, void *code)
{
    (void)code;
    /* Anything but CREATE (0) counts as a death: an event a later CPython
     * adds costs validations, never a wrong answer. */
    if (event != 0)
        atomic_fetch_add_explicit(&g_memo, MEMO_STEP, memory_order_acq_rel);
    return 0;
}

/* ---- the cache ------------------------------------------------------------ */

static int site_valid(const struct cp_pysite *s, uintptr_t code)
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
static struct cp_pysite *site_resolve(uintptr_t code, int lasti)
{
    const struct cp_pylayout *L = g_layout;
    struct cp_pysite *s = NULL;
    long flen, qlen;
    int64_t fh = 0, qh = 0, lt_size;
    uintptr_t lt;
    char *mem, *fbuf, *qbuf;

    lt = rd_ptr(code + (uintptr_t)L->co_linetable);
    if (!ptr_ok(lt) || rd_ptr(lt + (uintptr_t)L->ob_type) != g_bytes_type)
        return NULL;
    lt_size = rd_i64(lt + (uintptr_t)L->bytes_size);
    if (lt_size < 0 || lt_size > PY_LINETABLE_MAX)
        return NULL;
    /* Heap, not TLS or stack: this is the rare path, and the shim's static
     * TLS and the host's thread stacks are better kept small. */
    fbuf = malloc(2 * CP_PYSTR_BUF);
    if (!fbuf)
        return NULL;
    qbuf = fbuf + CP_PYSTR_BUF;
    flen = cp_pystr_utf8(L, g_unicode_type, rd_ptr(code + (uintptr_t)L->co_filename), fbuf, &fh);
    qlen = cp_pystr_utf8(L, g_unicode_type, rd_ptr(code + (uintptr_t)L->co_qualname), qbuf, &qh);
    if (flen < 0 || qlen < 0)
        goto out_free;
    mem = cp_itab_alloc(sizeof(*s) + (size_t)flen + (size_t)qlen);
    if (!mem)
        goto out_free;
    s = (struct cp_pysite *)mem;
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

/* Publish a resolved site under its key.  Same key with stale contents (a
 * new code object at a reused address): replace it; the old site stays
 * readable for whoever holds it.  A full table answers without caching. */
static void site_insert(struct cp_pysite *s, uint64_t h)
{
    const size_t mask = ((size_t)1 << SITE_LOG2) - 1;
    long slot = -1;

    pthread_mutex_lock(&g_site_lock);
    if (!g_sites) {
        void *m = mmap(NULL, sizeof(*g_sites) << SITE_LOG2, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            goto out_unlock;
        atomic_store_explicit((_Atomic(void *) *)&g_sites, m, memory_order_release);
    }
    for (size_t i = 0; i <= mask; i++) {
        struct cp_pysite *e = atomic_load_explicit(&g_sites[(h + i) & mask], memory_order_relaxed);
        if (!e || (e->code == s->code && e->lasti == s->lasti)) {
            slot = (long)((h + i) & mask);
            if (!e && g_site_count >= (3u << SITE_LOG2) / 4)
                slot = -1;
            else if (!e)
                g_site_count++;
            break;
        }
    }
    if (slot >= 0)
        atomic_store_explicit(&g_sites[slot], s, memory_order_release);
out_unlock:
    pthread_mutex_unlock(&g_site_lock);
}

/* The cached site of (code, lasti), whatever its contents, or NULL.  Keys
 * are unique in the table (an insert replaces its key's entry, nothing is
 * ever removed), so the first match is the only one. */
static inline struct cp_pysite *site_find(uintptr_t code, int lasti, uint64_t h)
{
    _Atomic(struct cp_pysite *) *slots = atomic_load_explicit(
        (_Atomic(_Atomic(struct cp_pysite *) *) *)&g_sites, memory_order_acquire);
    const size_t mask = ((size_t)1 << SITE_LOG2) - 1;
    if (!slots)
        return NULL;
    for (size_t i = 0; i <= mask; i++) {
        struct cp_pysite *e = atomic_load_explicit(&slots[(h + i) & mask], memory_order_acquire);
        if (!e || (e->code == code && e->lasti == lasti))
            return e;
    }
    return NULL;
}

const struct cp_pysite *cp_pysite_get(uintptr_t code, int lasti, uint64_t memo, int held)
{
    uint64_t h = site_hash(code, lasti);
    struct cp_pysite *s = site_find(code, lasti, h);

    if (s) {
        if (memo && atomic_load_explicit(&s->memo_epoch, memory_order_relaxed) == memo) {
            t_stat[ST_MEMO_HIT]++;
            return s;
        }
        t_stat[ST_VALIDATE]++;
        if (site_valid(s, code)) {
            /* Here the stamp differs: written only when it changes. */
            if ((held & CP_PYSITE_HELD) && memo) {
                atomic_store_explicit(&s->traceable, !!(held & CP_PYSITE_TRACEABLE),
                                      memory_order_relaxed);
                atomic_store_explicit(&s->memo_epoch, memo, memory_order_release);
            }
            return s;
        }
    }
    t_stat[ST_RESOLVE]++;
    s = site_resolve(code, lasti);
    if (!s)
        return NULL;
    if ((held & CP_PYSITE_HELD) && memo) {
        atomic_init(&s->traceable, !!(held & CP_PYSITE_TRACEABLE));
        atomic_init(&s->memo_epoch, memo);
    }
    site_insert(s, h);
    return s;
}

const struct cp_pysite *cp_pysite_memo_get(uintptr_t code, intptr_t lasti, uint64_t memo,
                                           int generator)
{
    struct cp_pysite *s;
    if (!memo || lasti < 0 || lasti > INT32_MAX)
        return NULL;
    s = site_find(code, (int)lasti, site_hash(code, (int)lasti));
    /* Acquire: the traceable flag written before this stamp. */
    if (!s || atomic_load_explicit(&s->memo_epoch, memory_order_acquire) != memo ||
        (!generator && !atomic_load_explicit(&s->traceable, memory_order_relaxed)))
        return NULL;
    t_stat[ST_MEMO_HIT]++;
    return s;
}

void cp_pysite_stats(struct cp_pysite_stats *out)
{
    stat_flush();
    out->memo_hits = atomic_load_explicit(&g_stat[ST_MEMO_HIT], memory_order_relaxed);
    out->validations = atomic_load_explicit(&g_stat[ST_VALIDATE], memory_order_relaxed);
    out->resolves = atomic_load_explicit(&g_stat[ST_RESOLVE], memory_order_relaxed);
}

/* How the cache served, at exit (CUPROBE_LOG=2): every thread's flushed
 * counts and the exiting thread's own. */
__attribute__((destructor)) static void pysite_report(void)
{
    struct cp_pysite_stats st;
    uint64_t m = atomic_load_explicit(&g_memo, memory_order_relaxed);
    cp_pysite_stats(&st);
    if (!st.memo_hits && !st.validations && !st.resolves)
        return;
    cp_log(2, "python sites: %llu hits without validation, %llu validations, %llu resolved; "
              "code watcher memo %s",
           (unsigned long long)st.memo_hits, (unsigned long long)st.validations,
           (unsigned long long)st.resolves,
           (m & MEMO_DEAD) ? ((m & MEMO_ON) ? "stopped" : "refused")
                           : ((m & MEMO_ON) ? "on" : "never started"));
}

void cp_pysite_atfork_child(void)
{
    pthread_mutex_init(&g_site_lock, NULL);
}
