/*
 * cp_scache.c - the per-thread call-site cache (see cp_scache.h for why a
 * hit is exact).
 *
 * One table per thread, no lock, no sharing.  The thread's state (its
 * scratch memory for a walk, cp_scache_scratch()) is taken at its first
 * capture, from those of threads that ended when there are some; the table
 * itself is used from the thread's second walk on, when its stack bounds
 * are looked up (a system call): a thread that makes one call pays for
 * neither.  A key destructor hands all of it on at thread exit.
 *
 * A set of eight entries per (stack pointer, hook): stacks that start at
 * the same stack pointer are common (PyTorch's autograd engine calls every
 * operator's backward function from the same frame), and with one entry
 * per stack pointer they evicted each other, so that every capture missed
 * and paid an unwind plus a refill; with four, six such stacks in turn
 * still missed every time (bench_calls' async_fan measures that case).  A
 * forked child inherits its thread's table; the file epoch changes at
 * fork, so every entry misses once there.
 *
 * A miss costs one unw_backtrace, as without the cache: the return-address
 * slots of the new entry are computed from each return address's frame
 * size, learned once per process by a libunwind cursor walk (which reports
 * stack pointers).  Filling every entry from a cursor walk made misses
 * two orders of magnitude dearer than unw_backtrace (libunwind's step
 * path takes a signal-masked lock, two system calls, per frame), which a
 * program whose stacks miss often pays on every allocation; `test_scache
 * bench` measures both and fails when a miss costs over 5x an unwind.
 */
#include "cp_hot.h"
#include "cp_scache.h"

#include "cp_env.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cp_rec.h"
#include "cp_spin.h"

#define CP_SCACHE_ASSOC 8       /* entries per set */
/* Sets: 16 to start with (128 entries, 68 KiB a thread), doubled up to
 * 256 (2,048 entries, 1.1 MiB) while entries of the current file keep
 * being evicted.  A training step repeats its allocation sites in a
 * cycle, and a cycle longer than the table evicts every entry before its
 * next use (bench_calls' async_deep: 300 stack pointers in turn). */
#define CP_SCACHE_BITS_MIN 4
#define CP_SCACHE_BITS_MAX 8
/* Looked at every this many finds: grown when at least a sixteenth of them
 * ended in an eviction.  Cold misses fill empty ways and do not count, so
 * a program whose sites fit stays at the first size. */
#define CP_SCACHE_WINDOW 1024

struct cp_scache_set {
    uint8_t victim;             /* the way to refill next */
    uint8_t mru;                /* the way that hit last */
    struct cp_scache_ent e[CP_SCACHE_ASSOC];
};

/* What the tables did, by kind (CUPROBE_LOG=2 prints the sums at exit). */
enum { SC_FIND, SC_HIT, SC_FILL, SC_REFUSED, SC_EVICT, SC_GROW, SC_PY_MEMO, SC_PY_WALK, SC_N };
static const char *const g_stat_name[SC_N] = { "finds", "hits", "fills", "refused", "evictions",
                                               "growths", "python chains repeated",
                                               "python walks" };

struct cp_scache {
    /* This thread's stack, where the table is used; 0, 0 until the table is
     * armed (scache_arm()), or when the bounds are unknown. */
    uintptr_t stack_lo, stack_hi;
    unsigned bits;                  /* 1 << bits sets */
    uint8_t walked;                 /* a fill was asked before the table was armed */
    uint8_t armed;                  /* scache_arm() ran: set and bounds tried */
    uint8_t scratch_busy;           /* cp_scache_scratch() is handed out */
    uint32_t stat[SC_N];            /* in the current window (SC_FIND counts it) */
    struct cp_scache_set *set;      /* NULL until armed; every entry empty then */
    void *aux;                      /* cp_scache_aux(): freed with the table */
    void *scratch;                  /* cp_scache_scratch(): kept with the table */
    size_t scratch_len;
};

/* Process-wide sums, added a window at a time: no shared line is written
 * per capture. */
static _Atomic uint64_t g_stat[SC_N];

static __thread struct cp_scache *t_cache;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static int g_key_ok;
static __thread int t_forced;       /* per thread: tests force 1 on, 2 off */
static _Atomic int g_on = -1;       /* CUPROBE_STACK_CACHE, read once */

/* Frame size by return address: the distance from the slot a return
 * address sits in to the slot of the next one up, i.e. the caller's frame
 * at that call.  It is a property of the code (the caller's unwind rule
 * there), so it is learned once per process and shared by all threads:
 * write-once keys, open addressing.  0: not learned; -1: not usable (a
 * signal frame, a jump between stacks). */
#define CP_RA_SLOTS 16384   /* power of two; 256 KiB of .bss, touched as used */
#define CP_RA_PROBE 16
#define CP_RA_MAX_FRAME (1u << 20)
static struct {
    _Atomic uintptr_t ra;
    _Atomic int32_t size;
} g_ra[CP_RA_SLOTS];

static unsigned ra_hash(uintptr_t ra)
{
    return (unsigned)(((uint64_t)ra * 0x9e3779b97f4a7c15ull) >> 40) & (CP_RA_SLOTS - 1);
}

static int32_t ra_size(uintptr_t ra)
{
    unsigned h = ra_hash(ra);
    for (unsigned i = 0; i < CP_RA_PROBE; i++, h = (h + 1) & (CP_RA_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&g_ra[h].ra, memory_order_acquire);
        if (k == ra)
            return atomic_load_explicit(&g_ra[h].size, memory_order_acquire);
        if (k == 0)
            return 0;
    }
    return -1;  /* table full around here: never learnable, never walk for it */
}

static void ra_learn(uintptr_t ra, int32_t size)
{
    unsigned h = ra_hash(ra);
    for (unsigned i = 0; i < CP_RA_PROBE; i++, h = (h + 1) & (CP_RA_SLOTS - 1)) {
        uintptr_t k = atomic_load_explicit(&g_ra[h].ra, memory_order_acquire);
        if (k == 0 && atomic_compare_exchange_strong(&g_ra[h].ra, &k, ra))
            k = ra;
        if (k == ra) {
            atomic_store_explicit(&g_ra[h].size, size, memory_order_release);
            return;
        }
    }
}

static void scache_stat_flush(struct cp_scache *c)
{
    /* Counts of 0 (every count of a thread whose table was never armed)
     * leave the shared lines alone: threads that exit together contend. */
    for (int i = 0; i < SC_N; i++) {
        if (c->stat[i])
            atomic_fetch_add_explicit(&g_stat[i], c->stat[i], memory_order_relaxed);
        c->stat[i] = 0;
    }
}

/* Tables of threads that ended, kept for the threads that start next (at
 * most CP_SCACHE_SPARES), every entry empty: a thread that makes a few
 * calls and exits (a data loader's worker, a pool that keeps replacing its
 * threads) would otherwise pay for a zeroed table of 68 KiB or more and a
 * scratch area, their page faults, and the trim of its heap when they are
 * freed.  The lock is only ever tried for a bounded time: a thread never
 * waits for another here. */
#define CP_SCACHE_SPARES 64
static struct cp_scache *g_spare[CP_SCACHE_SPARES];
static unsigned g_spare_n;
static atomic_int g_spare_lock;

/* Tried a bounded number of times (threads that end together contend). */
static int scache_spare_lock(void)
{
    for (unsigned i = 0; i < 256; i++) {
        if (!atomic_load_explicit(&g_spare_lock, memory_order_relaxed) &&
            !atomic_exchange_explicit(&g_spare_lock, 1, memory_order_acquire))
            return 1;
        cp_cpu_relax();
    }
    return 0;
}

static void scache_spare_unlock(void)
{
    atomic_store_explicit(&g_spare_lock, 0, memory_order_release);
}

/* A kept table, or NULL. */
static struct cp_scache *scache_spare_get(void)
{
    struct cp_scache *c = NULL;
    if (!scache_spare_lock())
        return NULL;
    if (g_spare_n)
        c = g_spare[--g_spare_n];
    scache_spare_unlock();
    return c;
}

static void scache_free(void *p)
{
    struct cp_scache *c = p;
    scache_stat_flush(c);
    if (t_cache == c)
        t_cache = NULL;
    /* Its owner's memo of Python walks names this thread's fills. */
    free(c->aux);
    c->aux = NULL;
    /* Emptied here, by a thread that used its table, not by the next
     * thread: most threads that come and go never arm theirs (the spares'
     * tables are empty). */
    if (c->armed && c->set) {
        for (size_t i = 0; i < (size_t)1 << c->bits; i++) {
            c->set[i].victim = c->set[i].mru = 0;
            for (unsigned w = 0; w < CP_SCACHE_ASSOC; w++)
                c->set[i].e[w].sp = 0;
        }
    }
    c->stack_lo = c->stack_hi = 0;
    c->walked = c->armed = c->scratch_busy = 0;
    if (scache_spare_lock()) {
        int kept = g_spare_n < CP_SCACHE_SPARES;
        if (kept)
            g_spare[g_spare_n++] = c;
        scache_spare_unlock();
        if (kept)
            return;
    }
    free(c->scratch);
    free(c->set);
    free(c);
}

static void scache_key_init(void)
{
    g_key_ok = pthread_key_create(&g_key, scache_free) == 0;
}

void cp_scache_enable(int on)
{
    t_forced = on ? 1 : 2;
}

int cp_scache_enabled(void)
{
#if defined(__x86_64__)
    /* On unless CUPROBE_STACK_CACHE=0: a hit gives the stack a full walk
     * would (cp_scache.h), and it takes most of the call sites' cost off
     * a framework's allocation path. */
    if (t_forced)
        return t_forced == 1;
    /* Relaxed: every thread that races here stores the same value. */
    int on = atomic_load_explicit(&g_on, memory_order_relaxed);
    if (on < 0) {
        on = cp_config()->stack_cache;
        atomic_store_explicit(&g_on, on, memory_order_relaxed);
    }
    return on;
#else
    return 0;
#endif
}

static inline unsigned scache_index(const struct cp_scache *c, uintptr_t sp, uintptr_t tag)
{
    uint64_t h = ((uint64_t)sp ^ ((uint64_t)tag << 7)) * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> (64 - c->bits));
}

/* Whether entry e is the walk from (sp, tag) that this stack holds now:
 * every return-address slot it recorded still holds the same value. */
__attribute__((no_sanitize("address", "thread"), always_inline))
static inline int scache_match(const struct cp_scache_ent *e, uintptr_t sp, uintptr_t tag,
                               uint64_t epoch)
{
    if (e->sp != sp || e->tag != tag || e->epoch != epoch)
        return 0;
    const uint8_t *base = (const uint8_t *)(sp - 8);
    for (unsigned i = 0; i < e->n_slots; i++)
        if (*(const uint64_t *)(base + e->off[i]) != e->ret[i])
            return 0;
    return 1;
}

/* The end of a window of finds: its counts go to the sums, and if
 * evictions were frequent in it the table gets twice the sets.  The old
 * entries are dropped, not moved: each costs one unwind to refill, once.
 * On allocation failure the table stays as it is. */
static void scache_window(struct cp_scache *c)
{
    int grow = c->stat[SC_EVICT] >= c->stat[SC_FIND] / 16 && c->bits < CP_SCACHE_BITS_MAX;
    struct cp_scache_set *n = grow ? calloc((size_t)1 << (c->bits + 1), sizeof(*n)) : NULL;
    if (n) {
        free(c->set);
        c->set = n;
        c->bits++;
        c->stat[SC_GROW]++;
    }
    scache_stat_flush(c);
}

/* Reads the caller frames' return-address slots: live stack of this
 * thread, above our own frame, never poisoned; but keep the sanitizers
 * from instrumenting a read they cannot reason about. */
__attribute__((no_sanitize("address", "thread")))
CP_HOT struct cp_scache_ent *cp_scache_find(uintptr_t sp, uintptr_t tag, uint64_t epoch)
{
    struct cp_scache *c = t_cache;
    if (!c || !c->stack_hi)
        return NULL;
    if (++c->stat[SC_FIND] >= CP_SCACHE_WINDOW)
        scache_window(c);
    struct cp_scache_set *set = &c->set[scache_index(c, sp, tag)];
    unsigned first = set->mru;
    /* The way that hit last first: a site called again and again hits at
     * once, as with one entry per set; only stacks that take turns from
     * the same stack pointer pay a look at the other ways, and a look
     * stops at the first slot that differs. */
    struct cp_scache_ent *e = set->e + first;
    if (scache_match(e, sp, tag, epoch)) {
        c->stat[SC_HIT]++;
        return e;
    }
    for (unsigned w = 0; w < CP_SCACHE_ASSOC; w++) {
        if (w != first && scache_match(set->e + w, sp, tag, epoch)) {
            set->mru = (uint8_t)w;
            c->stat[SC_HIT]++;
            return set->e + w;
        }
    }
    return NULL;
}

void **cp_scache_aux(void)
{
    struct cp_scache *c = t_cache;
    return c ? &c->aux : NULL;
}

void cp_scache_count_py(int repeated)
{
    struct cp_scache *c = t_cache;
    if (c)
        c->stat[repeated ? SC_PY_MEMO : SC_PY_WALK]++;
}

unsigned cp_scache_sets(void)
{
    return t_cache && t_cache->set ? 1u << t_cache->bits : 0;
}

/* The entry a new walk from (sp, tag) goes to: an empty one or one of an
 * older file epoch if the set has it, else the set's ways in turn. */
static struct cp_scache_ent *scache_victim(struct cp_scache *c, uintptr_t sp, uintptr_t tag,
                                           uint64_t epoch)
{
    struct cp_scache_set *set = &c->set[scache_index(c, sp, tag)];
    unsigned w = 0;
    while (w < CP_SCACHE_ASSOC && set->e[w].sp && set->e[w].epoch == epoch)
        w++;
    if (w == CP_SCACHE_ASSOC) {
        w = set->victim++ % CP_SCACHE_ASSOC;
        c->stat[SC_EVICT]++;
    }
    set->mru = (uint8_t)w;  /* the stack just walked is the likeliest next */
    return &set->e[w];
}

/* The calling thread's state, taken from the spares (or made) on first
 * use; its table is not armed yet. */
static struct cp_scache *scache_get(void)
{
    struct cp_scache *c = t_cache;
    if (c)
        return c;
    pthread_once(&g_key_once, scache_key_init);
    if (!g_key_ok)
        return NULL;
    c = scache_spare_get();
    if (!c)
        c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    pthread_setspecific(g_key, c);
    t_cache = c;
    return c;
}

/* Arm c's table at the thread's second walk: its sets and its stack's
 * bounds (computed slots are read only inside them; pthread_getattr_np
 * makes a system call).  A thread's first walk fills nothing, so a thread
 * that makes one call pays for neither; one that repeats a site pays one
 * more unwind, once.  @return : 0 when the table may be used. */
static int scache_arm(struct cp_scache *c)
{
    if (c->armed)
        return c->stack_hi ? 0 : -1;
    if (!c->walked) {
        c->walked = 1;
        return -1;
    }
    c->armed = 1;
    if (!c->set) {
        c->bits = CP_SCACHE_BITS_MIN;
        c->set = calloc((size_t)1 << c->bits, sizeof(*c->set));
        if (!c->set)
            return -1;
    }
    pthread_attr_t a;
    void *lo;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) == 0) {
        if (pthread_attr_getstack(&a, &lo, &size) == 0) {
            c->stack_lo = (uintptr_t)lo;
            c->stack_hi = (uintptr_t)lo + size;
        }
        pthread_attr_destroy(&a);
    }
    return c->stack_hi ? 0 : -1;
}

void *cp_scache_scratch(size_t len)
{
    struct cp_scache *c = scache_get();
    if (!c || c->scratch_busy)
        return NULL;
    if (c->scratch_len < len) {
        void *p = aligned_alloc(64, (len + 63) & ~(size_t)63);
        if (!p)
            return NULL;
        free(c->scratch);
        c->scratch = p;
        c->scratch_len = len;
    }
    c->scratch_busy = 1;
    /* Marked before use: a signal handler that captures meanwhile finds it
     * taken and uses its own stack. */
    atomic_signal_fence(memory_order_seq_cst);
    return c->scratch;
}

void cp_scache_scratch_done(void)
{
    struct cp_scache *c = t_cache;
    atomic_signal_fence(memory_order_seq_cst);
    if (c)
        c->scratch_busy = 0;
}

/* Fills on this thread: an entry's serial, so that a memo of Python walks
 * (cp_stack.c) can tell a refilled entry from the walk it was made on. */
static __thread uint64_t t_fills;

/* Store the walk in sp's entry, reading every slot back (sps[i] is the
 * stack pointer frame i's caller has after the return). */
__attribute__((no_sanitize("address", "thread")))
static struct cp_scache_ent *scache_put(struct cp_scache *c, uintptr_t sp, uintptr_t tag,
                                        uint64_t epoch, const uintptr_t *ips,
                                        const uintptr_t *sps, int got, int first, int n_native)
{
    if (got < 2 || got - 1 > CP_SCACHE_FRAMES || sps[1] != sp || first < 1)
        return NULL;
    struct cp_scache_ent *e = scache_victim(c, sp, tag, epoch);
    e->sp = 0;  /* invalid while it is rewritten */
    for (int i = 1; i < got; i++) {
        /* Frame i's return address was pushed just below the stack
         * pointer the caller has after the return.  When it is not there
         * the frame is not an ordinary call (a signal frame...). */
        uintptr_t slot = sps[i] - 8;
        if (slot < sp - 8 || slot - (sp - 8) > UINT32_MAX || slot + 8 > c->stack_hi ||
            *(const uint64_t *)slot != (uint64_t)ips[i])
            return NULL;
        e->off[i - 1] = (uint32_t)(slot - (sp - 8));
        e->ret[i - 1] = (uint64_t)ips[i];
    }
    e->n_slots = (uint16_t)(got - 1);
    e->first = (uint16_t)(first - 1);
    e->n_native = (uint16_t)n_native;
    e->id = 0;
    e->py_key = NULL;
    e->serial = ++t_fills;
    e->tag = tag;
    e->epoch = epoch;
    e->sp = sp;
    return e;
}

struct cp_scache_ent *cp_scache_fill(uintptr_t sp, uintptr_t tag, uint64_t epoch,
                                     const uintptr_t *ips, int got, int first, int n_native,
                                     int *unknown)
{
    uintptr_t sps[CP_SCACHE_FRAMES + 1];
    struct cp_scache *c = scache_get();
    *unknown = 0;
    /* Only on the thread's own stack (not a signal handler's alternate
     * one), and only walks an entry can hold. */
    if (!c || scache_arm(c) < 0 || sp < c->stack_lo || sp >= c->stack_hi || got < 2 ||
        got - 1 > CP_SCACHE_FRAMES)
        return NULL;
    sps[0] = 0;
    sps[1] = sp;
    for (int i = 1; i + 1 < got; i++) {
        int32_t size = ra_size(ips[i]);
        if (size == 0)
            *unknown = 1;
        if (size <= 0)
            return NULL;
        sps[i + 1] = sps[i] + (uint32_t)size;
        if (sps[i + 1] > c->stack_hi)
            return NULL;
    }
    if (*unknown)
        return NULL;
    struct cp_scache_ent *e = scache_put(c, sp, tag, epoch, ips, sps, got, first, n_native);
    c->stat[e ? SC_FILL : SC_REFUSED]++;
    return e;
}

/* The sums of every thread's finished windows and the calling thread's
 * current one, at exit: how well the cache served (CUPROBE_LOG=2). */
__attribute__((destructor)) static void scache_report(void)
{
    char line[320];
    int n = 0;
    if (t_cache)
        scache_stat_flush(t_cache);
    if (!atomic_load_explicit(&g_stat[SC_FIND], memory_order_relaxed))
        return;
    for (int i = 0; i < SC_N && n < (int)sizeof(line); i++)
        n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s %llu", i ? ", " : "",
                      g_stat_name[i],
                      (unsigned long long)atomic_load_explicit(&g_stat[i], memory_order_relaxed));
    cp_log(2, "stack cache: %s", line);
}

__attribute__((no_sanitize("address", "thread")))
void cp_scache_learn(uintptr_t sp, const uintptr_t *ips, const uintptr_t *sps, int got)
{
    struct cp_scache *c = scache_get();
    /* Off this thread's known stack nothing is cached (cp_scache_fill()
     * refuses it first), so nothing is learned or marked either. */
    if (!c || sp < c->stack_lo || sp >= c->stack_hi)
        return;
    if (got < 2 || !sps || sps[1] != sp) {
        /* No stack pointers to learn from: never walk for these again. */
        for (int i = 1; i + 1 < got; i++)
            if (ra_size(ips[i]) == 0)
                ra_learn(ips[i], -1);
        return;
    }
    for (int i = 1; i + 1 < got; i++) {
        uintptr_t d = sps[i + 1] - sps[i];
        /* A frame on the same stack, above this one, whose return address
         * is where the call pushed it; anything else (a signal frame, a
         * jump to another stack) is never cached. */
        int ok = sps[i + 1] > sps[i] && d < CP_RA_MAX_FRAME && sps[i + 1] <= c->stack_hi &&
                 *(const uint64_t *)(sps[i] - 8) == (uint64_t)ips[i];
        ra_learn(ips[i], ok ? (int32_t)d : -1);
    }
}
