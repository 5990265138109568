/*
 * check_oom_jax.h - the post-mortem of an out-of-memory error inside XLA's
 * own pool (check_oom_jax.c): JAX's allocator takes its pool from the
 * driver at start-up (75% of the card by default) and serves every array
 * from it, so its OOM is no failed driver call; the companion's jax.oom
 * record gives XLA's numbers (bytes in use, limit, largest free block) and
 * the request, and the verdict comes from those.
 */
#ifndef CHECK_OOM_JAX_H
#define CHECK_OOM_JAX_H

#include "check_oom_ep.h"

/*! cp_oom_jax_pool() : whether episode e is an OOM inside XLA's pool: XLA
 *  raised it with no failed driver call before it.  @return : 1 or 0. */
int cp_oom_jax_pool(const cp_oom_ep *e);

/*! cp_oom_jax_verdict() : the verdict (enum cp_verdict) of an OOM inside
 *  XLA's pool, first match: the request does not fit under the pool's
 *  limit while the card could hold all of it (CP_V_POOL_LIMIT); it does
 *  not fit (CP_V_CAPACITY: the pool is full); the pool has the room but
 *  not in one piece (CP_V_FRAGMENTATION); else CP_V_CAPACITY (the failing
 *  step's own buffers, freed when the error was raised, had filled it).
 *  The reason, one sentence, in why (cap bytes). */
int cp_oom_jax_verdict(const cp_proc *p, const cp_oom_ep *e, char *why, size_t cap);

/*! cp_oom_jax_headline() : the verdict v in words for the title ("the pool
 *  is full", "fragmented pool", "the pool is a fraction of the card: XLA
 *  took 75% at start-up") into buf.  @return : buf. */
const char *cp_oom_jax_headline(const cp_proc *p, const cp_oom_ep *e, int v, char *buf,
                                size_t cap);

/*! cp_oom_jax_lines() : XLA's numbers, how the pool was taken, the error
 *  and the program's line that met it, and XLA's settings in the process,
 *  as lines of f. */
void cp_oom_jax_lines(const cp_proc *p, cp_finding *f, const cp_oom_ep *e);

/*! cp_oom_jax_advice() : advice lines for verdict v, every setting named
 *  one XLA takes (cp_knobs.h). */
void cp_oom_jax_advice(const cp_proc *p, cp_finding *f, const cp_oom_ep *e, int v);

/*! cp_oom_jax_json() : the details' "xla" object. */
void cp_oom_jax_json(const cp_proc *p, cp_finding *f, const cp_oom_ep *e);

#endif /* CHECK_OOM_JAX_H */
