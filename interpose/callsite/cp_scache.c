/*
 * cp_scache.c - the per-thread call-site cache (see cp_scache.h for why a
 * hit is exact).
 *
 * One direct-mapped table per thread, allocated on the thread's first
 * capture and freed by a key destructor at thread exit: no lock, no
 * sharing.  A forked child inherits its thread's table; the file epoch
 * changes at fork, so every entry misses once there.
 */
#include "cp_scache.h"

#include <pthread.h>
#include <stdlib.h>

#define CP_SCACHE_WAYS 64   /* power of two */

struct cp_scache {
    struct cp_scache_ent e[CP_SCACHE_WAYS];
};

static __thread struct cp_scache *t_cache;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static int g_key_ok;
static __thread int t_forced;       /* per thread: tests force 1 on, 2 off */
static int g_on = -1;               /* CUPROBE_STACK_CACHE, read once */

static void scache_free(void *p)
{
    if (t_cache == p)
        t_cache = NULL;
    free(p);
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
    /* Off unless CUPROBE_STACK_CACHE=1: on GPT-2 under cudaMallocAsync on
     * an H200 the cache's miss path (a frame-by-frame walk recording stack
     * pointers) made the run 2.2x slower than unw_backtrace without it
     * (BENCHMARKS.md section 2b); it stays available to measure and fix. */
    if (t_forced)
        return t_forced == 1;
    if (g_on < 0) {
        const char *v = getenv("CUPROBE_STACK_CACHE");
        g_on = v && v[0] == '1' && v[1] == 0;
    }
    return g_on;
#else
    return 0;
#endif
}

static inline unsigned scache_index(uintptr_t sp, uintptr_t tag)
{
    uint64_t h = ((uint64_t)sp ^ ((uint64_t)tag << 7)) * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 58) & (CP_SCACHE_WAYS - 1);
}

/* Reads the caller frames' return-address slots: live stack of this
 * thread, above our own frame, never poisoned; but keep the sanitizers
 * from instrumenting a read they cannot reason about. */
__attribute__((no_sanitize("address", "thread")))
struct cp_scache_ent *cp_scache_find(uintptr_t sp, uintptr_t tag, uint64_t epoch)
{
    struct cp_scache *c = t_cache;
    if (!c)
        return NULL;
    struct cp_scache_ent *e = &c->e[scache_index(sp, tag)];
    if (e->sp != sp || e->tag != tag || e->epoch != epoch)
        return NULL;
    const uint8_t *base = (const uint8_t *)(sp - 8);
    for (unsigned i = 0; i < e->n_slots; i++)
        if (*(const uint64_t *)(base + e->off[i]) != e->ret[i])
            return NULL;
    return e;
}

__attribute__((no_sanitize("address", "thread")))
struct cp_scache_ent *cp_scache_put(uintptr_t sp, uintptr_t tag, uint64_t epoch,
                                    const uintptr_t *ips, const uintptr_t *sps, int got,
                                    int first, int n_native)
{
    struct cp_scache *c = t_cache;
    if (got < 2 || got - 1 > CP_SCACHE_FRAMES || sps[1] != sp || first < 1)
        return NULL;
    if (!c) {
        pthread_once(&g_key_once, scache_key_init);
        if (!g_key_ok)
            return NULL;
        c = calloc(1, sizeof(*c));
        if (!c)
            return NULL;
        pthread_setspecific(g_key, c);
        t_cache = c;
    }
    struct cp_scache_ent *e = &c->e[scache_index(sp, tag)];
    e->sp = 0;  /* invalid while it is rewritten */
    for (int i = 1; i < got; i++) {
        /* Frame i's return address was pushed just below the stack
         * pointer the caller has after the return.  When it is not there
         * the frame is not an ordinary call (a signal frame...). */
        uintptr_t slot = sps[i] - 8;
        if (slot < sp - 8 || slot - (sp - 8) > UINT32_MAX ||
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
    e->tag = tag;
    e->epoch = epoch;
    e->sp = sp;
    return e;
}
