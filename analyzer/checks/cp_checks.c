/*
 * cp_checks.c - the table of checks, in the order the report lists
 * them (see cp_findings.h: cp_checks()), and the setup and teardown of
 * their per-trace state.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_checks.h"

/* The registry: one line per check (its file defines cp_check_<name>), in
 * the order the report lists their findings. */
#define CP_CHECK_LIST(X) \
    X(nogpu)      /* no-gpu-used */ \
    X(killed)     /* killed */ \
    X(errors)     /* cuda-errors */ \
    X(oom)        /* oom */ \
    X(xdev)       /* cross-device-access */ \
    X(rank)       /* rank-placement */ \
    X(stray)      /* stray-device */ \
    X(fork)       /* fork-after-init */ \
    X(pageable)   /* pageable-async-copy */ \
    X(leak)       /* leak */ \
    X(growth)     /* memory-growth */ \
    X(frag)       /* fragmentation */ \
    X(blocking)   /* blocking-copy */ \
    X(fatal)      /* fatal-error */

#define CP_CHECK_DECL_(name) extern const cp_check cp_check_##name;
CP_CHECK_LIST(CP_CHECK_DECL_)
#define CP_CHECK_PTR_(name) &cp_check_##name,
static const cp_check *const cp_all_checks[] = { CP_CHECK_LIST(CP_CHECK_PTR_) };
#define CP_N_ALL (sizeof cp_all_checks / sizeof *cp_all_checks)
#define CP_CHECK_IDX_(name) CP_CK_##name,
enum { CP_CHECK_LIST(CP_CHECK_IDX_) CP_CK_N };

/* Record types are dispatched by type number: 0..62 as is, END as 63. */
#define CP_N_TYPES 64

/* One call a record type gets: the check's function and its state. */
typedef struct cp_check_call {
    void (*rec)(cp_proc *p, void *st, const cp_record *r);
    void *st;
} cp_check_call;

/* The checks of one trace: their state, and per record type the calls to
 * make before and after the model, each list ending with a NULL rec (the
 * loop runs for every record: no index to look up on the way). */
struct cp_check_run {
    void *state[CP_N_ALL];
    unsigned char live[CP_N_ALL];
    cp_check_call pre[CP_N_TYPES][CP_N_ALL + 1], post[CP_N_TYPES][CP_N_ALL + 1];
    int n_pre[CP_N_TYPES], n_post[CP_N_TYPES];
    uint64_t pre_types, post_types;     /* types with a non-empty list */
};

const cp_check *const *cp_checks(size_t *n)
{
    *n = CP_N_ALL;
    return cp_all_checks;
}

const cp_check *cp_check_find(const char *id)
{
    for (size_t i = 0; i < CP_N_ALL; i++)
        if (strcmp(cp_all_checks[i]->id, id) == 0)
            return cp_all_checks[i];
    return NULL;
}

static void cp_check_end(const cp_check *c, void *st);

/* The i-th map of entry m (a member or an array of them) of state st. */
static cp_map *cp_state_map_at(void *st, const cp_state_map *m, int i)
{
    return (cp_map *)((char *)st + m->off) + i;
}

static int cp_check_start(const cp_check *c, cp_proc *p, void **st)
{
    *st = NULL;
    if (c->state_size) {
        *st = calloc(1, c->state_size);
        if (!*st)
            return -1;
        for (size_t k = 0; k < c->n_maps; k++)
            for (int i = 0; i < c->maps[k].n; i++)
                cp_map_init(cp_state_map_at(*st, &c->maps[k], i), c->maps[k].val_size);
    }
    if (c->init && c->init(p, *st) != 0) {
        cp_check_end(c, *st);
        *st = NULL;
        return -1;
    }
    return 0;
}

static void cp_check_end(const cp_check *c, void *st)
{
    if (c->done)
        c->done(st);
    if (!st)
        return;
    /* Every listed map: freeing one that was never put to is harmless. */
    for (size_t k = 0; k < c->n_maps; k++)
        for (int i = 0; i < c->maps[k].n; i++)
            cp_map_free(cp_state_map_at(st, &c->maps[k], i));
    free(st);
}

cp_check_run *cp_checks_start(cp_proc *p, const unsigned char *selected)
{
    cp_check_run *run = calloc(1, sizeof *run);
    if (!run)
        return NULL;
    for (size_t i = 0; i < CP_N_ALL; i++) {
        if (!selected[i] || cp_check_start(cp_all_checks[i], p, &run->state[i]) != 0)
            continue;
        run->live[i] = 1;
        for (int t = 0; t < CP_N_TYPES; t++) {
            uint64_t bit = 1ull << t;
            cp_check_call c = { cp_all_checks[i]->rec, run->state[i] };
            if (cp_all_checks[i]->pre_types & bit) {
                run->pre[t][run->n_pre[t]++] = c;
                run->pre_types |= bit;
            } else if (cp_all_checks[i]->types & bit) {
                run->post[t][run->n_post[t]++] = c;
                run->post_types |= bit;
            }
        }
    }
    return run;
}

/* Where each check's records go from the dispatch below: its `rec`, or
 * by name the fast parts cp_checks.h lists, which LTO then inlines here
 * (through `rec` it did not, folded to a direct call or not: 7 % of the
 * reader's instructions went to those calls, BENCHMARKS.md 3n). */
#define CP_REC_nogpu cp_check_nogpu.rec
#define CP_REC_killed cp_check_killed.rec
#define CP_REC_errors cp_check_errors_rec
#define CP_REC_oom cp_check_oom_rec
#define CP_REC_xdev cp_check_xdev_rec
#define CP_REC_rank cp_check_rank.rec
#define CP_REC_stray cp_check_stray.rec
#define CP_REC_fork cp_check_fork.rec
#define CP_REC_pageable cp_check_pageable_rec
#define CP_REC_leak cp_check_leak_rec
#define CP_REC_growth cp_check_growth_rec
#define CP_REC_frag cp_check_frag_rec
#define CP_REC_blocking cp_check_blocking_rec
#define CP_REC_fatal cp_check_fatal_rec

/* The checks that read record type `bit` before the model (after_model 0)
 * or after it, called in the registry's order, as the lists of
 * cp_checks_start() call them.  For a constant bit and after_model, the
 * tests fold wherever the check tables are known at compile time (the
 * analyzer's LTO build): only that type's checks stay, called directly,
 * not through a pointer whose target changes from record to record (each
 * such call was a likely mispredicted branch). */
#define CP_CHECK_CALL_(name) \
    if ((after_model ? cp_check_##name.types & ~cp_check_##name.pre_types \
                     : cp_check_##name.pre_types) & bit && run->live[CP_CK_##name]) \
        CP_REC_##name(p, run->state[CP_CK_##name], r);
static inline __attribute__((always_inline)) void
cp_checks_of_type(cp_check_run *run, cp_proc *p, const cp_record *r, int after_model,
                  uint64_t bit)
{
    CP_CHECK_LIST(CP_CHECK_CALL_)
}

void cp_checks_rec(cp_check_run *run, cp_proc *p, const cp_record *r, int after_model)
{
    /* The types of nearly every record of a run, spelled out; the rest
     * through the lists. */
    switch (r->type) {
#define CP_CHECKS_HOT_(type) \
    case type: \
        cp_checks_of_type(run, p, r, after_model, CP_TYPE_BIT(type)); \
        return;
    CP_CHECKS_HOT_(CP_REC_ALLOC)
    CP_CHECKS_HOT_(CP_REC_FREE)
    CP_CHECKS_HOT_(CP_REC_COPY)
    CP_CHECKS_HOT_(CP_REC_MEMSET)
    CP_CHECKS_HOT_(CP_REC_SYNC)
    CP_CHECKS_HOT_(CP_REC_CALL)
    CP_CHECKS_HOT_(CP_REC_LAUNCH_COUNT)
#undef CP_CHECKS_HOT_
    default:
        break;
    }
    int t = r->type == CP_REC_END ? 63 : (r->type < 63 ? (int)r->type : -1);
    if (t < 0)
        return;
    for (const cp_check_call *c = after_model ? run->post[t] : run->pre[t]; c->rec; c++)
        c->rec(p, c->st, r);
}

uint64_t cp_checks_types(const cp_check_run *run, int after_model)
{
    return after_model ? run->post_types : run->pre_types;
}

void cp_checks_finish(cp_check_run *run, cp_proc *p, cp_report *rep)
{
    if (!run)
        return;
    for (size_t i = 0; i < CP_N_ALL; i++) {
        if (!run->live[i])
            continue;
        cp_all_checks[i]->finish(p, run->state[i], rep);
        cp_check_end(cp_all_checks[i], run->state[i]);
    }
    free(run);
}

void cp_checks_discard(cp_check_run *run)
{
    if (!run)
        return;
    for (size_t i = 0; i < CP_N_ALL; i++)
        if (run->live[i])
            cp_check_end(cp_all_checks[i], run->state[i]);
    free(run);
}
