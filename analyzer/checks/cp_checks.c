/*
 * cp_checks.c - the table of checks, in the order the report lists
 * them (see cp_findings.h: cp_checks()), and the setup and teardown of
 * their per-trace state.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_checks.h"

/* The registry: one line per check, in the order the report lists their
 * findings.  check_<name>.c defines cp_check_<name>.  The second column is
 * how the dispatch below reaches the check's `rec`: REC through its
 * cp_check, FAST by name (cp_check_<name>_rec(), declared in cp_checks.h),
 * which the analyzer's LTO build inlines into the dispatch; FAST is for
 * the checks that read the common records (allocations, frees, copies,
 * launches), where the cost of a call per record and check shows. */
#define CP_CHECK_LIST(X) \
    X(nogpu,    REC)    /* no-gpu-used */ \
    X(killed,   REC)    /* killed */ \
    X(errors,   FAST)   /* cuda-errors */ \
    X(oom,      FAST)   /* oom */ \
    X(xdev,     FAST)   /* cross-device-access */ \
    X(rank,     REC)    /* rank-placement */ \
    X(stray,    REC)    /* stray-device */ \
    X(fork,     REC)    /* fork-after-init */ \
    X(pageable, FAST)   /* pageable-async-copy */ \
    X(leak,     FAST)   /* leak */ \
    X(growth,   FAST)   /* memory-growth */ \
    X(frag,     FAST)   /* fragmentation */ \
    X(blocking, FAST)   /* blocking-copy */ \
    X(kmsg,     REC)    /* kernel-log */ \
    X(fatal,    FAST)   /* fatal-error */
#define CP_CHECK_REC_REC(name) cp_check_##name.rec
#define CP_CHECK_REC_FAST(name) cp_check_##name##_rec

#define CP_CHECK_DECL_(name, how) extern const cp_check cp_check_##name;
CP_CHECK_LIST(CP_CHECK_DECL_)
#define CP_CHECK_PTR_(name, how) &cp_check_##name,
static const cp_check *const cp_all_checks[] = { CP_CHECK_LIST(CP_CHECK_PTR_) };
#define CP_N_ALL (sizeof cp_all_checks / sizeof *cp_all_checks)
#define CP_CHECK_IDX_(name, how) CP_CK_##name,
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
    cp_checks_fn fns[2][256];   /* cp_checks_fns(): before, after the model */
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
static void cp_checks_fns_init(cp_check_run *run, int all_live);

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
    cp_checks_fns_init(run, memchr(run->live, 0, CP_N_ALL) == NULL);
    return run;
}

/* The checks that read record type `bit` before the model (after_model 0)
 * or after it, called in the registry's order, as the lists of
 * cp_checks_start() call them.  For a constant bit and after_model, the
 * tests fold wherever the check tables are known at compile time (the
 * analyzer's LTO build): only that type's checks stay, called directly,
 * not through a pointer whose target changes from record to record (each
 * such call was a likely mispredicted branch).  Every check of the list
 * must run (cp_checks_fns_init()): no test of live[] for each check and
 * record. */
#define CP_CHECK_CALL_(name, how) \
    if ((after_model ? cp_check_##name.types & ~cp_check_##name.pre_types \
                     : cp_check_##name.pre_types) & bit) \
        CP_CHECK_REC_##how(name)(p, run->state[CP_CK_##name], r);
static inline __attribute__((always_inline)) void
cp_checks_of_type(cp_check_run *run, cp_proc *p, const cp_record *r, int after_model,
                  uint64_t bit)
{
    CP_CHECK_LIST(CP_CHECK_CALL_)
}

/* The types of nearly every record of a run, each with a function of its
 * own before and after the model, used when every check runs.  Not one
 * function with a switch on the type: its frame would hold the registers
 * of every type's inlined checks, while a call through the type's entry
 * of a table predicts as well as the switch's jump.  Only type T's records
 * come to T's functions, so the checks' own tests of r->type fold away. */
#define CP_CHECKS_HOT(X) \
    X(ALLOC, alloc) X(FREE, free) X(COPY, copy) X(MEMSET, memset) X(SYNC, sync) X(CALL, call) \
    X(LAUNCH_COUNT, launch_count)
#define CP_CHECKS_TYPE_IS_(T) \
    if (r->type != CP_REC_##T) \
    __builtin_unreachable()
#define CP_CHECKS_HOT_FN_(T, l) \
    static void cp_checks_pre_##l(cp_check_run *run, cp_proc *p, const cp_record *r) \
    { \
        CP_CHECKS_TYPE_IS_(T); \
        cp_checks_of_type(run, p, r, 0, CP_TYPE_BIT(CP_REC_##T)); \
    } \
    static void cp_checks_post_##l(cp_check_run *run, cp_proc *p, const cp_record *r) \
    { \
        CP_CHECKS_TYPE_IS_(T); \
        cp_checks_of_type(run, p, r, 1, CP_TYPE_BIT(CP_REC_##T)); \
    }
CP_CHECKS_HOT(CP_CHECKS_HOT_FN_)

/* Any type, through the lists of cp_checks_start(). */
static void cp_checks_list(const cp_check_call (*lists)[CP_N_ALL + 1], cp_proc *p,
                           const cp_record *r)
{
    int t = r->type == CP_REC_END ? 63 : (r->type < 63 ? (int)r->type : -1);
    if (t < 0)
        return;
    for (const cp_check_call *c = lists[t]; c->rec; c++)
        c->rec(p, c->st, r);
}

static void cp_checks_pre_any(cp_check_run *run, cp_proc *p, const cp_record *r)
{
    cp_checks_list(run->pre, p, r);
}

static void cp_checks_post_any(cp_check_run *run, cp_proc *p, const cp_record *r)
{
    cp_checks_list(run->post, p, r);
}

/* run's tables of cp_checks_fns(): the lists for the types some check
 * reads, and the hot types' own functions when every check runs (they
 * call each check of their type without looking whether it runs). */
static void cp_checks_fns_init(cp_check_run *run, int all_live)
{
    for (unsigned t = 0; t < 256; t++) {
        uint64_t bit = CP_TYPE_BIT(t);
        run->fns[0][t] = run->pre_types & bit ? cp_checks_pre_any : NULL;
        run->fns[1][t] = run->post_types & bit ? cp_checks_post_any : NULL;
    }
    if (!all_live)
        return;
#define CP_CHECKS_HOT_SET_(T, l) \
    if (run->fns[0][CP_REC_##T]) \
        run->fns[0][CP_REC_##T] = cp_checks_pre_##l; \
    if (run->fns[1][CP_REC_##T]) \
        run->fns[1][CP_REC_##T] = cp_checks_post_##l;
    CP_CHECKS_HOT(CP_CHECKS_HOT_SET_)
}

const cp_checks_fn *cp_checks_fns(const cp_check_run *run, int after_model)
{
    return run->fns[after_model != 0];
}

void cp_checks_finish(cp_check_run *run, cp_proc *p, cp_report *rep)
{
    if (!run)
        return;
    for (size_t i = 0; i < CP_N_ALL; i++) {
        if (!run->live[i])
            continue;
        if (cp_all_checks[i]->finish)
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
