/*
 * check_leak_cost.h - what a leak cost in this run (check_leak.c judges it here).
 *
 * Memory never freed is released by the driver with its context or at
 * exit, so a leak costs something only while the run goes on.  It is a
 * warning when it put memory at risk, with the cost stated:
 *   - share: on some device it is at least CP_LEAK_SHARE_DIV-th (1 %) of the
 *     card's capacity or CP_LEAK_FLOOR (64 MiB), whichever is less (pinned host
 *     memory: of the host's RAM): memory the rest of the run could not use;
 *   - repeats: one call site left CP_LEAK_REPEAT (8) or more allocations behind
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

#define CP_LEAK_SHARE_DIV 100
#define CP_LEAK_FLOOR (64ull << 20)
#define CP_LEAK_REPEAT 8
#define CP_LEAK_HOST CP_MAX_DEV          /* the slot of pinned and registered host memory */

/* The last allocation of a device that failed out of memory. */
typedef struct cp_leak_oom {
    uint64_t ts, size;
} cp_leak_oom;

/* Whether a call site's allocations had kernels launched between them:
 * the thread's launch counter at its first allocation, and any other. */
typedef struct cp_leak_work {
    uint64_t first;
    int worked;
} cp_leak_work;

/* The leaked allocations of one finding, by where they were. */
typedef struct cp_leak_cost {
    uint64_t bytes[CP_MAX_DEV + 1];     /* per device; [CP_LEAK_HOST]: host memory */
    uint64_t at_oom[CP_MAX_DEV];        /* of them, allocated before the device's
                                         * last out-of-memory failure */
} cp_leak_cost;

/*! cp_leak_cost_alloc() : note ALLOC record r (after the model) in work (stack
 *  -> cp_leak_work) and oom (CP_MAX_DEV entries). */
void cp_leak_cost_alloc(cp_map *work, cp_leak_oom *oom, const cp_record *r);

/*! cp_leak_cost_add() : count leaked allocation l in c (oom: the devices' last
 *  out-of-memory failures so far). */
void cp_leak_cost_add(cp_leak_cost *c, const cp_live *l, const cp_leak_oom *oom);

/*! cp_leak_cost_judge() : the severity of leak finding f of process p from what
 *  it cost (c, its sites in `sites` (cp_agg_val), work, oom): warning with
 *  a "Cost:" line per reason, or info with one line saying why it cost
 *  nothing; the details say which (`at_risk`).  at_exit: 1 for what was
 *  live at exit, 0 for what was live when its context was destroyed.
 *  @return : 1 for a warning, 0 for info. */
int cp_leak_cost_judge(cp_finding *f, const cp_proc *p, const cp_leak_cost *c, const cp_map *sites,
                  const cp_map *work, const cp_leak_oom *oom, int at_exit);

#endif /* CHECK_LEAK_COST_H */
