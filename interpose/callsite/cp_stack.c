/*
 * cp_stack.c - call-site capture (see cp_stack.h): native IPs with libunwind,
 * Python frames from cp_pystack.c, both interned into one stack id.
 *
 * Cost model (style.md A4): unwinding dominates, so we use unw_backtrace
 * (libunwind's fast trace with a per-thread cache) with a depth cap, and we
 * write each distinct stack once per trace file; a repeated site costs the
 * unwind plus one hash lookup.
 */
#include "cp_stack.h"

#include <libunwind.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cp_env.h"
#include "cp_itab.h"
#include "cp_modules.h"
#include "cp_pystack.h"
#include "cp_rec.h"

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
}

static const struct cp_stack_cfg *stack_cfg(void)
{
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

/* unw_backtrace, or under ThreadSanitizer a cursor walk: libunwind's fast
 * path keeps a per-thread cache freed by a pthread key destructor that takes
 * a mutex, and TSan crashes on that lock at thread exit.  Both fill ips the
 * same way: ips[0] in this function's frame, then the return addresses. */
static inline __attribute__((always_inline)) int stack_unwind(void **ips, int want)
{
#ifdef CP_STACK_TSAN
    unw_context_t uc;
    unw_cursor_t c;
    int n = 0;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&c, &uc) != 0)
        return 0;
    do {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) != 0 || !ip)
            break;
        ips[n++] = (void *)ip;
    } while (n < want && unw_step(&c) > 0);
    return n;
#else
    return unw_backtrace(ips, want);
#endif
}

static int stack_announce(void *ctx, uint64_t id, const void *key, size_t len)
{
    const uint64_t *w = key;
    size_t n = len / sizeof(uint64_t);
    uint8_t *p;
    (void)ctx;
    /* The key is already the record's field list, minus the id. */
    p = cp_rec_begin(CP_REC_STACK, (n + 1) * CP_VARINT_MAX);
    if (!p)
        return -1;
    p = cp_put_u(p, id);
    for (size_t i = 0; i < n; i++)
        p = cp_put_u(p, w[i]);
    cp_rec_commit(p);
    return 0;
}

__attribute__((noinline)) uint64_t cp_stack_capture(int skip, int with_python)
{
    const struct cp_stack_cfg *cfg = stack_cfg();
    void *ips[CP_STACK_MAX_NATIVE + 64 + CP_STACK_SELF_SLACK];
    uint64_t key[CP_STACK_MAX_NATIVE + CP_STACK_MAX_PY + 2];
    int want, got, n_native = 0, n_py = 0;

    if (cfg->depth == 0 || !cp_rec_on())
        return 0;   /* nothing could be announced: do not unwind for nothing */
    if (skip < 0)
        skip = 0;
    if (skip > 63)
        skip = 63;
    /* ips[1] is the return address into this function's caller (the hook):
     * unw_backtrace starts at its own caller's frame, i.e. us (stack_unwind
     * is inlined), and this function is noinline and not a tail caller, so
     * exactly one frame is ours. */
    want = cfg->depth + skip + 1 + CP_STACK_SELF_SLACK;
    got = stack_unwind(ips, want);
    for (int i = 1 + skip; i < got && n_native < cfg->depth; i++) {
        uintptr_t ip = (uintptr_t)ips[i];
        if (!ip)
            break;
        /* Whatever frames of the shim are still on top after `skip` (the
         * count changes with inlining and sanitizer builds) are dropped:
         * the site is where the program entered cuprobe. */
        if (n_native == 0 && ip - 1 >= g_self_lo && ip - 1 < g_self_hi)
            continue;
        /* A return address points after the call; -1 lands inside the call
         * instruction, so the line is the caller's, not the next one. */
        key[1 + n_native++] = ip - 1;
    }
    key[0] = (uint64_t)n_native;

    if (with_python && cfg->python && cfg->py_depth > 0) {
        n_py = cp_pystack_capture(&key[2 + n_native], cfg->py_depth);
        if (n_py < 0)
            n_py = 0;
    }
    key[1 + n_native] = (uint64_t)n_py;
    if (n_native == 0 && n_py == 0)
        return 0;
    /* The map must be in the file before a stack that uses its addresses;
     * after the unwind, so a library loaded just now is in it. */
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
