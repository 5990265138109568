/*
 * check_oom_ep.h - an out-of-memory episode as the oom check records it
 * (check_oom.c) and its post-mortems read it (check_oom_verdict.c, and
 * check_oom_jax.c for XLA's pool).
 *
 * An episode starts at a failed allocation and lasts while the program only
 * frees memory and tries again on the same device (PyTorch releases its
 * cached segments and retries once); it ends at the next successful
 * allocation there ("recovered") or at the end of the trace.  An OOM inside
 * a framework's own pool (XLA's, preallocated) starts one with no failed
 * driver call: the companion's record of the error.
 */
#ifndef CHECK_OOM_EP_H
#define CHECK_OOM_EP_H

#include "cp_checks.h"
#include "cp_fw.h"
#include "cp_fw_jax.h"

#define CP_OOM_TOP 5
#define CP_OOM_PROCS 8

/* CP_V_POOL_LIMIT: a framework's pool refused under its own limit while the
 * card had the room (XLA's memory fraction). */
enum cp_verdict {
    CP_V_CAPACITY = 0, CP_V_FRAGMENTATION = 1, CP_V_OTHER_PROCESS = 2, CP_V_POOL_LIMIT = 3,
    CP_V_N
};

typedef struct cp_oom_alloc {
    uint64_t size, stack;
    int kind;
} cp_oom_alloc;

typedef struct cp_oom_ep {
    int open, dev;
    uint64_t request, kind, stack, ts, api;
    const char *api_name;
    int have_oom;
    uint64_t free_b, total_b;
    uint64_t held[CP_HOLD_N], held_total;
    uint64_t n_listed;              /* processes in the OOM record (0: no NVML) */
    uint64_t n_procs, others_used;  /* other processes among them */
    uint64_t pid[CP_OOM_PROCS], used[CP_OOM_PROCS];
    cp_oom_alloc top[CP_OOM_TOP];         /* largest live allocations on dev */
    int n_top;
    cp_oom_alloc site[3];              /* sites holding the most (size = bytes) */
    uint64_t site_count[3];
    int n_site;
    int have_pool;
    uint64_t pool_reserved, pool_used;
    uint64_t released;              /* freed on dev after the first failure */
    unsigned failures;              /* failed attempts in the episode */
    int recovered;
    int have_torch;
    cp_torch_oom torch;
    int have_jax;                   /* XLA raised RESOURCE_EXHAUSTED (a jax.oom record) */
    int jax_dev;                    /* its failing device: index in jax.dev, -1 none */
    cp_jax_oom jax;
} cp_oom_ep;

#endif /* CHECK_OOM_EP_H */
