/*
 * check_leak_cost.h - what a leak cost in this run (check_leak.c judges it here).
 *
 * Memory never freed is released by the driver with its context or at
 * exit, so a leak costs something only while the run goes on.  It is a
 * warning when it put memory at risk, with the cost stated:
 *   - share: on some device it is at least LK_SHARE_DIV-th (1 %) of the
 *     card's capacity or LK_FLOOR (64 MiB), whichever is less (pinned host
 *     memory: of the host's RAM): memory the rest of the run could not use;
 *   - repeats: one call site left LK_REPEAT (8) or more allocations behind
 *     and its thread launched kernels between its allocations: a loop that
 *     leaks every iteration, whose cost grows with the run's length (traces
 *     without the launch counter: the count alone);
 *   - oom: an allocation failed out of memory on the device while the
 *     leaked memory was held, and it was at least as large as the request.
 * Otherwise it is info, whose title says it cost nothing in this run.
 */
#ifndef CHECK_LEAK_COST_H
#define CHECK_LEAK_COST_H

#include <stdint.h>

#include "cp_checks.h"

#define LK_SHARE_DIV 100
#define LK_FLOOR (64ull << 20)
#define LK_REPEAT 8
#define LK_HOST CP_MAX_DEV          /* the slot of pinned and registered host memory */

/* The last allocation of a device that failed out of memory. */
typedef struct lk_oom {
    uint64_t ts, size;
} lk_oom;

/* Whether a call site's allocations had kernels launched between them:
 * the thread's launch counter at its first allocation, and any other. */
typedef struct lk_work {
    uint64_t first;
    int worked;
} lk_work;

/* The leaked allocations of one finding, by where they were. */
typedef struct lk_cost {
    uint64_t bytes[CP_MAX_DEV + 1];     /* per device; [LK_HOST]: host memory */
    uint64_t at_oom[CP_MAX_DEV];        /* of them, allocated before the device's
                                         * last out-of-memory failure */
} lk_cost;

/*! lk_cost_alloc() : note ALLOC record r (after the model) in work (stack
 *  -> lk_work) and oom (CP_MAX_DEV entries). */
void lk_cost_alloc(cp_map *work, lk_oom *oom, const cp_record *r);

/*! lk_cost_add() : count leaked allocation l in c (oom: the devices' last
 *  out-of-memory failures so far). */
void lk_cost_add(lk_cost *c, const cp_live *l, const lk_oom *oom);

/*! lk_cost_judge() : the severity of leak finding f of process p from what
 *  it cost (c, its sites in `sites` (cp_agg_val), work, oom): warning with
 *  a "Cost:" line per reason, or info with one line saying why it cost
 *  nothing; the details say which (`at_risk`).  at_exit: 1 for what was
 *  live at exit, 0 for what was live when its context was destroyed.
 *  @return : 1 for a warning, 0 for info. */
int lk_cost_judge(cp_finding *f, const cp_proc *p, const lk_cost *c, const cp_map *sites,
                  const cp_map *work, const lk_oom *oom, int at_exit);

#endif /* CHECK_LEAK_COST_H */
