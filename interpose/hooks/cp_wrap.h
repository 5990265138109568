/*
 * cp_wrap.h - the generated wrappers' view of the shim: API ids, the real
 * function table, the per-call state handed to hooks, and every hook's
 * prototype.  All of it is generated from include/cp_api_table.h.
 */
#ifndef CP_WRAP_H
#define CP_WRAP_H

#include <stdint.h>

#include "cp_cuda.h"

#define CP_EXPORT __attribute__((visibility("default")))

/* For code that can run inside a sanitizer's own start-up (its interceptors
 * call dlsym before the sanitizer runtime is ready): never instrumented, so
 * that a sanitizer build of the shim can be preloaded behind the runtime. */
#define CP_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))

/* CP_M_EV: timed, the hook runs after the call.  CP_M_LITE: untimed.
 * CP_M_PRE (frees): the hook runs BEFORE the call, as if it will succeed, so
 * that the record is in the trace before another thread can be handed the
 * same address; a failure is then recorded by cp_pre_failed(). */
enum cp_mode { CP_M_EV = 0, CP_M_LITE = 1, CP_M_PRE = 2 };

/* CP_ID_<elf name>: dense ids, in table order. */
enum cp_api_id {
#define CP_API(name, pfn, mode, hook, params, args) CP_ID_##name,
#define CP_API0(name, pfn, mode, hook) CP_ID_##name,
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0
    CP_ID_COUNT
};

/* What a hook learns about the call it records. */
typedef struct cp_call {
    uint64_t t0;        /* CLOCK_MONOTONIC before the real call; 0 for CP_M_LITE */
    uint64_t dur;       /* ns spent in the real call; 0 for CP_M_LITE */
    uint32_t api;       /* CP_ID_* */
    CUresult res;       /* what the driver returned (and the program gets) */
    int saved_errno;    /* errno right after the real call, restored on return */
    uintptr_t ret;      /* the wrapper's return address: the caller's code */
} cp_call;

/* Hooks run after the real call, with the same arguments, never changing
 * them or the result.  They are written in cp_hooks_*.c. */
#define CP_HOOK_PARAMS(...) (cp_call *c, __VA_ARGS__)
#define CP_API(name, pfn, mode, hook, params, args) void cp_hook_##hook CP_HOOK_PARAMS params;
#define CP_API0(name, pfn, mode, hook) void cp_hook_##hook(cp_call *c);
#include "cp_api_table.h"
#undef CP_API
#undef CP_API0

/* Benchmark builds only (-DCP_SELFTIME, cp_wrap.c): nanoseconds of the
 * event path's parts, summed per thread, read by cuprobe_bench_selftime()
 * after the APIs' rows.  CP_ST_T(v) reads the clock into v;
 * CP_ST_P(part, v) adds the time since v to part. */
#define CP_ST_PART_TABLE(X)                                                 \
    X(CTX, "context") X(SITE, "call-site") X(MAP, "map") X(REC, "record")   \
    X(LCOUNT, "launch-count") X(INFLIGHT, "in-flight") X(XDEV, "xdev-check")
enum cp_st_part_id {
#define CP_ST_X(id, name) CP_ST_##id,
    CP_ST_PART_TABLE(CP_ST_X)
#undef CP_ST_X
    CP_ST_PARTS
};
#ifdef CP_SELFTIME
void cp_st_part(unsigned part, uint64_t t0);
uint64_t cp_st_now(void);
#define CP_ST_T(v) uint64_t v = cp_st_now()
#define CP_ST_P(part, v) cp_st_part(part, v)
#else
#define CP_ST_T(v) ((void)0)
#define CP_ST_P(part, v) ((void)0)
#endif

/*! cp_pre_failed() : a CP_M_PRE call failed after its hook recorded it:
 *  record the failure (a CP_REC_CALL with the driver's result). */
void cp_pre_failed(cp_call *c);

/*! cp_hook_depth() : non-zero while the calling thread is inside a hook. */
int cp_hook_depth(void);

/*! cp_real_fn() : the driver's own function for api id: the pointer a
 *  resolver handed out, else cp_real() (cp_real.h) by exact ELF name.
 *  @return : the pointer, or NULL when libcuda has no such symbol. */
void *cp_real_fn(uint32_t id);

/*! cp_real_set() : remember the driver's pointer for id (from dlsym or
 *  cuGetProcAddress; one real pointer per exact variant). */
void cp_real_set(uint32_t id, void *real);

/* ---- the API table's names and routes (cp_api.c) ---- */

/*! cp_api_routes() : the routes (bit 1 << enum cp_route) by which the
 *  wrapper of api id was handed out so far. */
unsigned cp_api_routes(unsigned id);

/*! cp_api_route_add() : the wrapper of id was handed out by `route`. */
void cp_api_route_add(uint32_t id, int route);

/*! cp_api_name() : the exact ELF name of id. */
const char *cp_api_name(uint32_t id);

/*! cp_api_lookup() : the id of an exact ELF name, or -1 when the table does
 *  not wrap it.  O(1), allocation-free, safe before any initialisation. */
int cp_api_lookup(const char *elf_name);

/*! cp_wrapper_fn() : the address of cuprobe's wrapper for id. */
void *cp_wrapper_fn(uint32_t id);

#endif /* CP_WRAP_H */
