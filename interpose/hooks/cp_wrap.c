/*
 * cp_wrap.c - the wrappers, generated from include/cp_api_table.h.
 *
 * Every wrapper has the same shape: find the driver's own function, and if
 * this thread is not already inside cuprobe and tracing is on, time the real
 * call and hand the arguments to the row's hook.  The result and errno the
 * program sees are the driver's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "cp_inflight.h"
#include "cp_rec.h"
#include "cp_resolve.h"
#include "cp_wrap.h"

/* The depth guard: our own driver calls (queries made by hooks) and any
 * driver that calls its exported names internally must not be recorded
 * again.  initial-exec TLS: one %fs-relative load. */
static __thread int cp_tls_depth;

static _Atomic(void *) cp_real[CP_ID_COUNT];

int cp_hook_depth(void)
{
    return cp_tls_depth;
}

static inline int cp_enter(void)
{
    if (cp_tls_depth || !cp_rec_on())
        return 0;
    cp_tls_depth = 1;
    return 1;
}

static inline void cp_leave(const cp_call *c)
{
    cp_tls_depth = 0;
    errno = c->saved_errno;
}

static inline void cp_call_start(cp_call *c, uint32_t id, int mode)
{
    c->api = id;
    c->t0 = mode == CP_M_EV ? cp_now_ns() : 0;
}

static inline void cp_call_stop(cp_call *c, CUresult r, int mode)
{
    c->saved_errno = errno;
    c->res = r;
    c->dur = mode == CP_M_EV ? cp_now_ns() - c->t0 : 0;
}

static CUresult cp_no_real(uint32_t id)
{
    static atomic_int logged;
    if (!atomic_exchange(&logged, 1))
        cp_log(1, "%s: libcuda has no such function; returning CUDA_ERROR_NOT_FOUND",
               cp_api_name(id));
    return CUDA_ERROR_NOT_FOUND;
}

#define CP_CALL_ARGS(...) (&c_ __VA_OPT__(,) __VA_ARGS__)
#define CP_API(name, pfn, mode, hook, params, args)                        \
    typedef CUresult (*cp_fn_##name) params;                               \
    CP_EXPORT CUresult name params;                                        \
    CUresult name params                                                   \
    {                                                                      \
        cp_fn_##name real_ = (cp_fn_##name)cp_real_fn(CP_ID_##name);       \
        if (__builtin_expect(real_ == NULL, 0))                            \
            return cp_no_real(CP_ID_##name);                               \
        if (!cp_enter())                                                   \
            return real_ args;                                             \
        cp_call c_;                                                        \
        cp_call_start(&c_, CP_ID_##name, mode);                            \
        c_.ret = (uintptr_t)__builtin_return_address(0);                   \
        if (mode == CP_M_PRE) {                                            \
            cp_call_stop(&c_, CUDA_SUCCESS, CP_M_LITE);                    \
            cp_hook_##hook CP_CALL_ARGS args;                              \
        }                                                                  \
        CUresult r_ = real_ args;                                          \
        cp_call_stop(&c_, r_, mode);                                       \
        if (mode != CP_M_PRE)                                              \
            cp_hook_##hook CP_CALL_ARGS args;                              \
        else if (r_ != CUDA_SUCCESS)                                       \
            cp_pre_failed(&c_);                                            \
        if (__builtin_expect(cp_inflight_sticky(r_), 0))                   \
            cp_inflight_error(&c_);                                        \
        cp_leave(&c_);                                                     \
        return r_;                                                         \
    }
#define CP_API0(name, pfn, mode, hook)                                     \
    typedef CUresult (*cp_fn_##name)(void);                                \
    CP_EXPORT CUresult name(void);                                         \
    CUresult name(void)                                                    \
    {                                                                      \
        cp_fn_##name real_ = (cp_fn_##name)cp_real_fn(CP_ID_##name);       \
        if (__builtin_expect(real_ == NULL, 0))                            \
            return cp_no_real(CP_ID_##name);                               \
        if (!cp_enter())                                                   \
            return real_();                                                \
        cp_call c_;                                                        \
        cp_call_start(&c_, CP_ID_##name, mode);                            \
        c_.ret = (uintptr_t)__builtin_return_address(0);                   \
        CUresult r_ = real_();                                             \
        cp_call_stop(&c_, r_, mode);                                       \
        cp_hook_##hook(&c_);                                               \
        if (__builtin_expect(cp_inflight_sticky(r_), 0))                   \
            cp_inflight_error(&c_);                                        \
        cp_leave(&c_);                                                     \
        return r_;                                                         \
    }
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0

static const char *const cp_names[CP_ID_COUNT] = {
#define CP_API(name, pfn, mode, hook, params, args) #name,
#define CP_API0(name, pfn, mode, hook) #name,
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0
};

static void *const cp_wrappers[CP_ID_COUNT] = {
#define CP_API(name, pfn, mode, hook, params, args) (void *)name,
#define CP_API0(name, pfn, mode, hook) (void *)name,
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0
};

const char *cp_api_name(uint32_t id)
{
    return id < CP_ID_COUNT ? cp_names[id] : "?";
}

void *cp_wrapper_fn(uint32_t id)
{
    return id < CP_ID_COUNT ? cp_wrappers[id] : NULL;
}

void cp_real_set(uint32_t id, void *real)
{
    if (id < CP_ID_COUNT && real)
        atomic_store_explicit(&cp_real[id], real, memory_order_release);
}

void *cp_real_fn(uint32_t id)
{
    void *p = atomic_load_explicit(&cp_real[id], memory_order_acquire);
    if (__builtin_expect(p != NULL, 1))
        return p;
    /* A PLT caller reached our exported wrapper before any resolver handed
     * out this function: look the exact name up in libcuda itself. */
    p = cp_resolve_in_libcuda(cp_names[id]);
    if (p)
        atomic_store_explicit(&cp_real[id], p, memory_order_release);
    return p;
}

/* Name -> id: open addressing over FNV-1a, built once on first use.  The
 * dlsym hook asks for every symbol any library looks up, so this must be
 * cheap and allocation-free. */
#define CP_HASH_SLOTS 512
static int16_t cp_hash[CP_HASH_SLOTS];
static atomic_int cp_hash_state;

CP_NO_SANITIZE static uint32_t cp_fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

CP_NO_SANITIZE static void cp_hash_build(void)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&cp_hash_state, &expect, 1)) {
        while (atomic_load(&cp_hash_state) != 2)
            ;   /* another thread is building it: a few microseconds */
        return;
    }
    memset(cp_hash, 0xff, sizeof(cp_hash));
    for (int i = 0; i < CP_ID_COUNT; i++) {
        uint32_t h = cp_fnv1a(cp_names[i]) & (CP_HASH_SLOTS - 1);
        while (cp_hash[h] >= 0)
            h = (h + 1) & (CP_HASH_SLOTS - 1);
        cp_hash[h] = (int16_t)i;
    }
    atomic_store(&cp_hash_state, 2);
}

CP_NO_SANITIZE int cp_api_lookup(const char *elf_name)
{
    if (atomic_load_explicit(&cp_hash_state, memory_order_acquire) != 2)
        cp_hash_build();
    uint32_t h = cp_fnv1a(elf_name) & (CP_HASH_SLOTS - 1);
    for (;;) {
        int i = cp_hash[h];
        if (i < 0)
            return -1;
        if (strcmp(cp_names[i], elf_name) == 0)
            return i;
        h = (h + 1) & (CP_HASH_SLOTS - 1);
    }
}
