/*
 * cp_stack.c - call-site capture (see cp_stack.h): native IPs with libunwind,
 * Python frames from cp_pystack.c, both interned into one stack id.
 *
 * Cost model: unwinding dominates (it grows with the depth), so a
 * repeated site does not unwind: the per-thread cache (cp_scache.c) checks
 * that every return address of the last full walk from the same stack
 * pointer is still in place (a compare a frame) and hands back the
 * interned id.  A new site, or one whose caller changed at any recorded
 * depth, is unwound with unw_backtrace (libunwind's fast trace) and
 * interned, and its entry's slots are placed from frame sizes learned per
 * return address (cp_scache.c); each distinct stack is written once per
 * trace file.
 */
#include "cp_hot.h"
#include "cp_stack.h"

#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cp_env.h"
#include "cp_itab.h"
#include "cp_modules.h"
#include "cp_pystack.h"
#include "cp_rec.h"
#include "cp_scache.h"

#define CP_STACK_MAX_NATIVE 128     /* CUPROBE_STACK_DEPTH's own cap */
#define CP_STACK_MAX_PY 128
#define CP_STACK_SELF_SLACK 8   /* extra frames unwound for the shim's own */

/* Settings, read once: depth and the Python switch come from the shim's
 * configuration (cp_env.c); the Python depth is ours until it moves there. */
struct cp_stack_cfg {
    int depth;          /* CUPROBE_STACK_DEPTH: native frames, 0 = no stacks */
    int python;         /* CUPROBE_PYTHON: 0 = no Python frames */
    int py_depth;       /* CUPROBE_PYTHON_DEPTH: Python frames */
};

static struct cp_stack_cfg g_cfg;
static pthread_once_t g_cfg_once = PTHREAD_ONCE_INIT;
static _Atomic int g_cfg_ready;     /* g_cfg is set (release), no call needed */
/* The executable segment of the shared object this code is linked into
 * (libcuprobe.so), or [0, 0) when it is linked into a program (unit tests). */
static uintptr_t g_self_lo, g_self_hi;

/* Stacks are keyed by [n_native, ip..., n_py, pyframe...] as u64 words. */
static struct cp_itab g_stacks = CP_ITAB_INIT("stack", 18);

static int stack_self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t me = (uintptr_t)&cp_stack_capture;
    (void)size, (void)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || me < lo || me >= lo + ph->p_memsz)
            continue;
        /* The main program has an empty name: nothing of it is "ours". */
        if (info->dlpi_name && info->dlpi_name[0]) {
            g_self_lo = lo;
            g_self_hi = lo + ph->p_memsz;
        }
        return 1;
    }
    return 0;
}

static void stack_cfg_init(void)
{
    const struct cp_config *c = cp_config();
    g_cfg.depth = c->stack_depth < CP_STACK_MAX_NATIVE ? (int)c->stack_depth
                                                       : CP_STACK_MAX_NATIVE;
    g_cfg.python = c->python;
    g_cfg.py_depth = c->python_depth < CP_STACK_MAX_PY ? (int)c->python_depth : CP_STACK_MAX_PY;
    /* Per-thread caches: no lock between threads that unwind at once. */
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    unw_set_cache_size(unw_local_addr_space, 1024, 0);
    dl_iterate_phdr(stack_self_cb, NULL);
    atomic_store_explicit(&g_cfg_ready, 1, memory_order_release);
}

/* Once set, without a call: a call from cp_stack_capture pushes below its
 * large frame, and in a thread's first capture that is a page of stack
 * never touched, a page fault even when stacks are off. */
static inline const struct cp_stack_cfg *stack_cfg(void)
{
    if (!atomic_load_explicit(&g_cfg_ready, memory_order_acquire))
        pthread_once(&g_cfg_once, stack_cfg_init);
    return &g_cfg;
}

#if defined(__SANITIZE_THREAD__)
#define CP_STACK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CP_STACK_TSAN 1
#endif
#endif

/* What one capture works in: the thread's scratch memory
 * (cp_scache_scratch()), or the stack of stack_capture_local() when that
 * is taken.  Not on the capture's own frame: libunwind's cursor and
 * context alone are 2 KiB, and stack pages below what a new thread's
 * program touched cost a page fault each. */
struct stack_work {
    unw_context_t uc;
    unw_cursor_t cursor;
    void *ips[CP_STACK_MAX_NATIVE + 64 + CP_STACK_SELF_SLACK + 1];  /* + stack_capture_local */
    uint64_t key[CP_STACK_MAX_NATIVE + CP_STACK_MAX_PY + 2];
    void *wips[CP_SCACHE_FRAMES + 1];       /* the cursor walk that learns */
    uintptr_t sps[CP_SCACHE_FRAMES + 1];
};

/* A cursor walk that also reports each frame's stack pointer (for the
 * cache; sps may be NULL).  ips[0] is in the caller's own frame (this is
 * inlined), then the return addresses, as unw_backtrace gives them. */
static inline __attribute__((always_inline)) int stack_walk(struct stack_work *w, void **ips,
                                                            uintptr_t *sps, int want)
{
    int n = 0;
    if (unw_getcontext(&w->uc) != 0 || unw_init_local(&w->cursor, &w->uc) != 0)
        return 0;
    do {
        unw_word_t ip, sp = 0;
        if (unw_get_reg(&w->cursor, UNW_REG_IP, &ip) != 0 || !ip)
            break;
        if (sps && unw_get_reg(&w->cursor, UNW_REG_SP, &sp) != 0)
            sps = NULL;     /* no SPs: the walk is not cached */
        if (sps)
            sps[n] = (uintptr_t)sp;
        ips[n++] = (void *)ip;
    } while (n < want && unw_step(&w->cursor) > 0);
    return sps ? n : -n;
}

/* unw_backtrace into w->ips, or under ThreadSanitizer the cursor walk:
 * libunwind's fast path keeps a per-thread cache freed by a pthread key
 * destructor that takes a mutex, and TSan crashes on that lock at thread
 * exit.  Both fill ips the same way: ips[0] in this function's frame, then
 * the return addresses. */
static inline __attribute__((always_inline)) int stack_unwind(struct stack_work *w, int want)
{
#ifdef CP_STACK_TSAN
    int n = stack_walk(w, w->ips, NULL, want);
    return n < 0 ? -n : n;
#else
    return unw_backtrace_in(w->ips, want, &w->cursor, &w->uc);
#endif
}

static int stack_announce(void *ctx, uint64_t id, const void *key, size_t len)
{
    const uint64_t *w = key;
    (void)ctx, (void)len;
    /* The key is n_native, ip[n_native], n_py, pyframe[n_py]
     * (cp_stack_capture). */
    uint64_t n_native = w[0], n_py = w[1 + n_native];
    return cp_rec_put_stack(id, w + 1, n_native, w + 2 + n_native, n_py);
}

/* The kept native frames of a walk into key[1..]: drop `skip` frames and
 * whatever frames of the shim are still on top.  @return : how many were
 * kept; *first is the index in ips of the first. */
static int stack_keep(void *const *ips, int got, int skip, int depth, uint64_t *key, int *first)
{
    int n_native = 0;
    *first = 0;
    for (int i = 1 + skip; i < got && n_native < depth; i++) {
        uintptr_t ip = (uintptr_t)ips[i];
        if (!ip)
            break;
        /* Whatever frames of the shim are still on top after `skip` (the
         * count changes with inlining and sanitizer builds) are dropped:
         * the site is where the program entered cuprobe. */
        if (n_native == 0 && ip - 1 >= g_self_lo && ip - 1 < g_self_hi)
            continue;
        if (n_native == 0)
            *first = i;
        /* A return address points after the call; -1 lands inside the call
         * instruction, so the line is the caller's, not the next one. */
        key[1 + n_native++] = ip - 1;
    }
    return n_native;
}

/* Intern [n_native, ips..., n_py, pyframes...] (key[1..n_native] and the
 * Python ids at key[2 + n_native] already filled). */
static uint64_t stack_intern(uint64_t *key, int n_native, int n_py, int sync_modules,
                             const void **stored)
{
    key[0] = (uint64_t)n_native;
    key[1 + n_native] = (uint64_t)n_py;
    if (n_native == 0 && n_py == 0)
        return 0;
    /* The map must be in the file before a stack that uses its addresses;
     * after the unwind, so a library loaded just now is in it. */
    if (n_native && sync_modules)
        (void)cp_modules_sync();
    return cp_itab_intern_ref(&g_stacks, key, (size_t)(2 + n_native + n_py) * sizeof(uint64_t),
                              stack_announce, NULL, stored);
}

/* Python frames after the n_native native ones, and the interned id. */
static uint64_t stack_finish(const struct cp_stack_cfg *cfg, uint64_t *key, int n_native,
                             int with_python, int *n_py_out)
{
    int n_py = 0;
    if (with_python && cfg->python && cfg->py_depth > 0) {
        n_py = cp_pystack_capture(&key[2 + n_native], cfg->py_depth, NULL, NULL);
        if (n_py < 0)
            n_py = 0;
    }
    *n_py_out = n_py;
    return stack_intern(key, n_native, n_py, 1, NULL);
}

/* Per thread: Python walks by fingerprint (cp_pystack_fp), for the call
 * sites the stack cache knows.  A hit must match the fingerprint, the
 * native walk (the cache entry and its fill serial), the code watcher's
 * epoch and the interning epoch; then the stack id is the one the full
 * walk made.  Direct-mapped, allocated at a thread's first use and freed
 * with the thread's stack cache (cp_scache_aux), so threads that come and
 * go do not leave their tables behind. */
#define PY_MEMO_SLOTS 512
struct py_memo_ent {
    uint64_t fp, serial, memo, epoch, id;
    uintptr_t ent;
};

static struct py_memo_ent *py_memo_slot(uint64_t fp)
{
    void **aux = cp_scache_aux();
    if (!aux)
        return NULL;
    struct py_memo_ent *t = *aux;
    if (__builtin_expect(t == NULL, 0)) {
        t = calloc(PY_MEMO_SLOTS, sizeof(*t));
        if (!t)
            return NULL;
        *aux = t;
    }
    return &t[(fp >> 17) & (PY_MEMO_SLOTS - 1)];
}

/* A cache hit whose id is not known yet, or whose Python frames must be
 * walked: the same native frames as the walk that filled e.  The key is
 * rebuilt from the slots (no module sync: done in this epoch at fill).
 * Out of cp_stack_capture's frame, with its key: a thread gets here from
 * its third capture on.  py: Python frames are wanted, and fp, memo and m
 * are what cp_stack_capture found of them. */
static __attribute__((noinline)) uint64_t stack_hit(const struct cp_stack_cfg *cfg,
                                                   struct cp_scache_ent *e, uint64_t epoch,
                                                   int py, uint64_t fp, uint64_t memo,
                                                   struct py_memo_ent *m)
{
    uint64_t key[CP_STACK_MAX_NATIVE + CP_STACK_MAX_PY + 2];
    uint64_t id, wfp = 0, wmemo = 0;
    const void *stored = NULL;
    size_t len;
    int n_py = py ? cp_pystack_capture(&key[2 + e->n_native], cfg->py_depth, &wfp, &wmemo) : 0;
    if (n_py < 0)
        n_py = 0;
    if (n_py == 0 && e->id)
        return e->id;
    for (int k = 0; k < e->n_native; k++)
        key[1 + k] = e->ret[e->first + k] - 1;
    key[0] = (uint64_t)e->n_native;
    key[1 + e->n_native] = (uint64_t)n_py;
    len = (size_t)(2 + e->n_native + n_py) * sizeof(uint64_t);
    /* The same Python frames as last time here: one memcmp against
     * the interned key instead of hashing ~90 words. */
    int same = n_py && e->py_key && e->py_len == len && memcmp(e->py_key, key, len) == 0;
    id = same ? e->py_id : stack_intern(key, e->n_native, n_py, 0, &stored);
    /* Only a walk that saw the frames the fingerprint was taken of,
     * under the same code-watcher epoch, may answer for it. */
    if (m && id && n_py && wfp == fp && wmemo == memo) {
        m->fp = fp;
        m->ent = (uintptr_t)e;
        m->serial = e->serial;
        m->memo = memo;
        m->epoch = epoch;
        m->id = id;
    }
    if (same)
        return id;
    if (n_py == 0) {
        e->id = id;
    } else if (stored) {
        e->py_key = stored;
        e->py_len = len;
        e->py_id = id;
    }
    return id;
}

/* A capture without the cache, in w: unwind, keep, add Python frames,
 * intern.  Inlined: the walk starts in the caller's frame. */
static inline __attribute__((always_inline)) uint64_t stack_plain(
    struct stack_work *w, const struct cp_stack_cfg *cfg, int skip, int want, int with_python,
    int *got, int *n_native, int *first, int *n_py)
{
    *got = stack_unwind(w, want);
    *n_native = stack_keep(w->ips, *got, skip, cfg->depth, w->key, first);
    return stack_finish(cfg, w->key, *n_native, with_python, n_py);
}

/* The capture when the thread's scratch is taken (a signal handler
 * interrupted one): on this function's stack, without the cache, and one
 * frame deeper than cp_stack_capture (skip and want count it). */
static __attribute__((noinline)) uint64_t stack_capture_local(const struct cp_stack_cfg *cfg,
                                                             int skip, int want, int with_python)
{
    struct stack_work w;
    int got, n_native, first, n_py;
    return stack_plain(&w, cfg, skip, want, with_python, &got, &n_native, &first, &n_py);
}

CP_HOT __attribute__((noinline)) uint64_t cp_stack_capture(int skip, int with_python)
{
    const struct cp_stack_cfg *cfg = stack_cfg();
    struct cp_scache_ent *e = NULL;
    uint64_t epoch = 0;
    int want, got, n_native, n_py, first;

    if (cfg->depth == 0 || !cp_rec_on())
        return 0;   /* nothing could be announced: do not unwind for nothing */
    if (skip < 0)
        skip = 0;
    if (skip > 63)
        skip = 63;
    /* ips[1] is the return address into this function's caller (the hook):
     * the walk starts at its own caller's frame, i.e. us (stack_walk and
     * stack_unwind are inlined), and this function is noinline and not a
     * tail caller, so exactly one frame is ours. */
    want = cfg->depth + skip + 1 + CP_STACK_SELF_SLACK;
    int cached = want <= CP_SCACHE_FRAMES && cp_scache_enabled();
    /* Our CFA (frame pointer + 16: this file is built with frame
     * pointers; cp_scache_put() checks it against libunwind's) and
     * where we return to key the per-thread cache. */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0) + 16;
    uintptr_t tag = (uintptr_t)__builtin_return_address(0) ^ (uintptr_t)skip;
    if (cached) {
        epoch = cp_itab_epoch();
        e = cp_scache_find(sp, tag, epoch);
        if (e) {
            /* Same frames as the walk that filled it: only Python frames
             * can differ. */
            int py = with_python && cfg->python && cfg->py_depth > 0;
            uint64_t fp = 0, memo = 0;
            struct py_memo_ent *m = NULL;
            if (py) {
                /* A repeated Python call chain: its fingerprint (the
                 * frames' own lines only) finds the stack id the last full
                 * walk made, without the two cache lines per frame that a
                 * site lookup reads. */
                int seen = cp_pystack_fp(cfg->py_depth, &fp, &memo);
                if (seen == 0 && e->id)
                    return e->id;
                if (fp && memo && (m = py_memo_slot(fp)) != NULL && m->fp == fp &&
                    m->ent == (uintptr_t)e && m->serial == e->serial && m->memo == memo &&
                    m->epoch == epoch) {
                    cp_scache_count_py(1);
                    return m->id;
                }
                cp_scache_count_py(0);
            } else if (e->id) {
                return e->id;
            }
            return stack_hit(cfg, e, epoch, py, fp, memo, m);
        }
    }
    struct stack_work *w = cp_scache_scratch(sizeof *w);
    if (!w) {
        uint64_t id = stack_capture_local(cfg, skip + 1, want + 1, with_python);
        __asm__ volatile("" ::: "memory");  /* not a tail call: the walk counts our frame */
        return id;
    }
    /* A miss costs what a capture without the cache costs: the fast
     * unwind, then the entry's slots placed by learned frame sizes.
     * Only a return address never seen before pays a cursor walk
     * (once per process: libunwind's step path makes system calls). */
    uint64_t id = stack_plain(w, cfg, skip, want, with_python, &got, &n_native, &first, &n_py);
    if (cached && id && n_native) {
        int unknown = 0;
        e = cp_scache_fill(sp, tag, epoch, (const uintptr_t *)w->ips, got, first, n_native,
                           &unknown);
        if (!e && unknown) {
            int wgot = stack_walk(w, w->wips, w->sps, want);
            int same = (wgot < 0 ? -wgot : wgot) == got;
            for (int k = 1; same && k < got; k++)
                same = w->wips[k] == w->ips[k];
            /* A different walk (it should not happen) teaches nothing
             * and the frames are marked never to be walked for. */
            cp_scache_learn(sp, (const uintptr_t *)w->ips, wgot > 0 && same ? w->sps : NULL,
                            got);
            e = cp_scache_fill(sp, tag, epoch, (const uintptr_t *)w->ips, got, first, n_native,
                               &unknown);
        }
        if (e && n_py == 0)
            e->id = id;
    }
    cp_scache_scratch_done();
    return id;
}

uint64_t cp_stack_intern(const uint64_t *ips, int n_native, const uint64_t *py, int n_py)
{
    uint64_t key[CP_STACK_MAX_NATIVE + CP_STACK_MAX_PY + 2];
    if (n_native < 0 || n_py < 0 || n_native > CP_STACK_MAX_NATIVE || n_py > CP_STACK_MAX_PY ||
        (n_native == 0 && n_py == 0) || !cp_rec_on())
        return 0;
    key[0] = (uint64_t)n_native;
    memcpy(&key[1], ips, (size_t)n_native * sizeof(uint64_t));
    key[1 + n_native] = (uint64_t)n_py;
    memcpy(&key[2 + n_native], py, (size_t)n_py * sizeof(uint64_t));
    if (n_native)
        (void)cp_modules_sync();
    return cp_itab_intern(&g_stacks, key, (size_t)(2 + n_native + n_py) * sizeof(uint64_t),
                          stack_announce, NULL);
}

static void stack_on_new_file(void)
{
    cp_itab_new_file();
    cp_modules_new_file();
}

static void stack_atfork_child(void)
{
    cp_itab_atfork_child(&g_stacks);
    cp_modules_atfork_child();
    cp_pystack_atfork_child();
}

__attribute__((constructor)) static void stack_register(void)
{
    cp_rec_on_new_file(stack_on_new_file);
    pthread_atfork(NULL, NULL, stack_atfork_child);
}
