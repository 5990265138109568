/*
 * cp_findings.h - what checks produce: findings with a severity, a title,
 * explanation lines, structured details (JSON, cp_jwrite.h) and
 * occurrences aggregated by call site; the check interface; the report
 * that collects them.
 */
#ifndef CP_FINDINGS_H
#define CP_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "cp_jwrite.h"
#include "cp_map.h"
#include "cp_model.h"
#include "cp_run.h"
#include "cp_window.h"

enum cp_sev { CP_SEV_INFO = 0, CP_SEV_WARNING = 1, CP_SEV_ERROR = 2 };

/* How a finding's sites are ordered, most important first. */
enum cp_sort { CP_SORT_NS = 0, CP_SORT_BYTES = 1, CP_SORT_COUNT = 2 };

/* --- per-site aggregation -------------------------------------------------------- */

typedef struct cp_agg_val {
    uint64_t count, bytes, ns, first_ts;
    uint64_t stack;
    const char *note;       /* interned, optional */
} cp_agg_val;

/*! cp_agg_add() : add one occurrence to the aggregate of key (usually the
 *  stack id, or stack id mixed with a sub-key the check needs) in map m
 *  (values: cp_agg_val).  @return : the aggregate, or NULL out of memory. */
cp_agg_val *cp_agg_add(cp_map *m, uint64_t key, uint64_t stack, uint64_t bytes, uint64_t ns,
                       uint64_t ts);

/* --- findings ------------------------------------------------------------------------ */

typedef struct cp_site {
    cp_proc *proc;
    uint64_t stack;
    uint64_t count, bytes, ns;
    const char *note;
    const char *label;      /* filled when the report is rendered */
} cp_site;

struct cp_check;

/* What one process paid in a finding: its count, bytes and time. */
typedef struct cp_fnum {
    uint64_t count, bytes, ns;
} cp_fnum;

typedef struct cp_finding {
    const struct cp_check *check;
    int sev;
    cp_proc *proc;          /* NULL for findings about several processes */
    char *title;
    char **lines;
    size_t n_lines;
    cp_jb details;          /* members of the "details" object */
    cp_site *sites;
    size_t n_sites, cap_sites;
    uint64_t count, bytes, ns;
    int sort;               /* enum cp_sort */
    int top;                /* stated first in the report (no-gpu-used) */
    uint64_t tag;           /* the check's own mark (cuda-errors: code | teardown bit) */
    const char *fix;        /* static: this finding's own fix (cp_advice_fix), NULL: the check's */
    const char *why;        /* static: this finding's own explanation, NULL: the check's */
    uint64_t t_from, t_to;  /* when it happened (trace clock, ns); 0, 0 when not one time */
    cp_proc **more;         /* other processes with the same finding (merged ranks) */
    cp_fnum *more_num;      /* what each of them paid (count, bytes, ns are the sums) */
    cp_fnum own;            /* what proc paid, when merged */
    size_t n_more;
} cp_finding;

typedef struct cp_report {
    cp_finding **f;
    size_t n, cap;
    cp_proc **procs;
    size_t n_procs;
    cp_run_ix run;          /* procs by (host, pid, start time): cp_run_build() */
    int all_frames;
    int max_sites;          /* sites shown per finding in text */
    const struct cp_check *const *order;    /* check order (cp_report_prepare) */
    size_t n_order;
    int windowed;           /* only part of the run was read (--since, --until) */
    cp_window window;       /* that part, when windowed */
} cp_report;

/*! cp_finding_new() : a finding of check c about process p (may be NULL),
 *  added to rep, with a printf-style title and the check's severity.
 *  @return : the finding, or NULL when out of memory. */
cp_finding *cp_finding_new(cp_report *rep, const struct cp_check *c, cp_proc *p,
                           const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*! cp_finding_retitle() : replace the title (printf-style): for titles
 *  that state totals known only after the sites were added. */
void cp_finding_retitle(cp_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*! cp_finding_line() : append an explanation line specific to this
 *  occurrence (printf-style). */
void cp_finding_line(cp_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*! cp_finding_site() : add one call site with its totals; note (may be NULL) is copied. */
void cp_finding_site(cp_finding *f, cp_proc *p, uint64_t stack, uint64_t count, uint64_t bytes,
                     uint64_t ns, const char *note);

/*! cp_finding_sites_from() : add every aggregate of map m (cp_agg_val) as a
 *  site, and add their totals to the finding's. */
void cp_finding_sites_from(cp_finding *f, cp_proc *p, const cp_map *m);

/* For cp_finding_of_map(): keep the check's usual severity. */
#define CP_SEV_OF_CHECK (-1)

/*! cp_finding_of_map() : when map m (cp_agg_val) is not empty, a finding of
 *  check c about p with severity sev (or CP_SEV_OF_CHECK), its sites taken
 *  from m (totals added) and ordered by sort (enum cp_sort).  The title is
 *  empty: the caller sets it with cp_finding_retitle() from the totals.
 *  @return : the finding, or NULL when m is empty or out of memory. */
cp_finding *cp_finding_of_map(cp_report *rep, const struct cp_check *c, cp_proc *p, const cp_map *m,
                              int sev, int sort);

/*! cp_report_prepare() : label every site, merge sites with the same label,
 *  sort sites and findings (errors first, then by the position of their
 *  check in order[n_order] (the registry's cp_checks()), then by weight).
 *  Call once before rendering. */
void cp_report_prepare(cp_report *rep, const struct cp_check *const *order, size_t n_order);

/*! cp_finding_sort_sites() : order f's sites by its sort (enum cp_sort),
 *  heaviest first, ties by label. */
void cp_finding_sort_sites(cp_finding *f);

/*! cp_report_sort() : order the findings again as cp_report_prepare() did
 *  (after their numbers changed). */
void cp_report_sort(cp_report *rep);

/*! cp_report_drop() : remove finding i of rep and free it (later ones
 *  move down by one). */
void cp_report_drop(cp_report *rep, size_t i);

/*! cp_report_drop_marked() : remove and free every finding i of rep with
 *  gone[i] set, in one pass; the others keep their order. */
void cp_report_drop_marked(cp_report *rep, const unsigned char *gone);

/*! cp_report_merge_ranks() : after cp_report_prepare(), fold findings of
 *  several processes that differ only in their process and numbers (same
 *  check, severity and fix; title, lines and details equal once numbers are
 *  taken out; the same sites by label) into the first, whose `more` lists
 *  the others and `more_num` what each paid: "ranks 0-7" instead of eight
 *  findings.  Count, bytes, time and the sites' numbers become sums, a line
 *  gives the range per process, and the findings are sorted again by what
 *  they cost in all. */
void cp_report_merge_ranks(cp_report *rep);

/*! cp_report_free() : free the findings (not the processes). */
void cp_report_free(cp_report *rep);

/* --- the check interface ------------------------------------------------------------- */

#define CP_TYPE_BIT(t) ((t) == CP_REC_END ? (1ull << 63) : ((t) < 63 ? 1ull << (t) : 0))

/* The cp_map members of a check's state (n maps in a row from offset off,
 * each with values of val_size bytes): the report sets them up before the
 * first record and frees them after finish, so checks do not repeat it. */
typedef struct cp_state_map {
    size_t off, val_size;
    int n;
} cp_state_map;

/* One map member, or an array of n of them, of state type T with values V. */
#define CP_STATE_MAP(T, member, V) { offsetof(T, member), sizeof(V), 1 }
#define CP_STATE_MAPS(T, member, V, n) { offsetof(T, member), sizeof(V), (n) }

/* The cp_check members describing a state of type T with the map table m. */
#define CP_CHECK_STATE(T, m) .state_size = sizeof(T), .maps = (m), .n_maps = sizeof(m) / sizeof *(m)

typedef struct cp_check {
    const char *id;         /* stable: used by --check and in JSON */
    int sev;                /* enum cp_sev: the usual severity */
    const char *name;       /* a few words */
    const char *explain;    /* one paragraph */
    const char *fix;        /* the concrete fix */
    uint64_t types;         /* CP_TYPE_BIT of each record type it reads */
    uint64_t pre_types;     /* ... and those it must see before the model */
    size_t state_size;      /* zeroed per-trace state handed to rec/finish, 0: none (NULL) */
    const cp_state_map *maps;   /* its cp_map members (CP_CHECK_STATE) */
    size_t n_maps;
    int (*init)(cp_proc *p, void *st);  /* more setup after the maps, may be NULL */
    /* each record of `types`; NULL when it reads none */
    void (*rec)(cp_proc *p, void *st, const cp_record *r);
    /* its findings about one process, after the last record; may be NULL */
    void (*finish)(cp_proc *p, void *st, cp_report *rep);
    void (*done)(void *st);             /* frees what the maps do not cover, may be NULL */
    void (*across)(cp_report *rep);     /* after every trace, may be NULL */
    int merge_exact;        /* its findings of several processes merge only when their
                             * numbers are equal too (the numbers name GPUs, not costs) */
    int sites_first;        /* the text shows its sites before its lines (totals) */
} cp_check;

/*! cp_finding_fix() : the fix to print for f: its own (framework-specific)
 *  or else its check's.  @return : a static string. */
const char *cp_finding_fix(const cp_finding *f);

/*! cp_finding_why() : the explanation to print for f: its own (a helper
 *  process's finding is not the check's problem) or else its check's.
 *  @return : a static string. */
const char *cp_finding_why(const cp_finding *f);

/*! cp_sev_name() : "error", "warning", "info". */
const char *cp_sev_name(int sev);

#endif /* CP_FINDINGS_H */
