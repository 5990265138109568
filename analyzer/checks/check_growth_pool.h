/*
 * check_growth_pool.h - memory-growth inside XLA's own pool, from the
 * framework companion's samples (check_growth_pool.c).
 *
 * XLA takes its pool from the driver at start-up (75% of the card by
 * default) and serves every array from it: the driver sees one allocation
 * and nothing after, so memory kept from step to step shows only in XLA's
 * own numbers.  The companion samples them (jax.periodic, whenever they
 * changed, looked at every 20 ms at first; jax.oom; jax.exit), each with
 * the program's line at that moment; each sample is placed on
 * memory-growth's work axis (kernel launches so far) and the same rule
 * judges the bytes in use (check_growth_window.h).
 */
#ifndef CHECK_GROWTH_POOL_H
#define CHECK_GROWTH_POOL_H

#include "cp_checks.h"

struct cp_gpool;

/*! cp_gpool_add() : when the framework record p has ready is a jax.*
 *  sample, keep its bytes in use (all devices) and the place it names at
 *  work clock w and time ts; *g is made on the first one.  @return : 1
 *  when it was one. */
int cp_gpool_add(struct cp_gpool **g, const cp_proc *p, uint64_t w, uint64_t ts);

/*! cp_gpool_finish() : a memory-growth finding of check (when the samples
 *  rise by the growth rule) about process p into rep, its sites the places
 *  the samples saw the growth at (stacks added to p's); w_end is the work
 *  clock at the end of the trace.  @return : 1 when one was made. */
int cp_gpool_finish(struct cp_gpool *g, cp_proc *p, cp_report *rep, const cp_check *check,
                    uint64_t w_end);

/*! cp_gpool_free() : free g (NULL is fine). */
void cp_gpool_free(struct cp_gpool *g);

#endif /* CHECK_GROWTH_POOL_H */
