/*
 * cp_analyze.h - one trace in, one part out: a trace read through the model
 * and the checks (one pass), its per-process findings kept apart from every
 * other trace's until the run is put together (cp_report.c).  Several traces
 * are analyzed in parallel, one per core; the parts are the same whichever
 * thread made them, so the report does not depend on the thread count.
 */
#ifndef CP_ANALYZE_H
#define CP_ANALYZE_H

#include "cp_discover.h"
#include "cp_findings.h"
#include "cp_window.h"

/* Called for every record after the model and the checks saw it. */
typedef void (*cp_rec_hook)(void *ctx, cp_proc *p, const cp_record *r);

/* What one process of the run contributes: its model and the findings its
 * checks made on it (before any check looked across processes). */
typedef struct cp_part {
    cp_proc *proc;
    cp_report rep;          /* .f/.n: the findings; no processes */
    int bad;                /* the trace could not be read to its end */
} cp_part;

/* An input that can be read only once (standard input, a pipe): already
 * open, with the bytes read from it to tell a trace from a summary. */
typedef struct cp_stream {
    int fd;                 /* -1: none (the trace is opened by its path) */
    size_t n_head;
    unsigned char head[16]; /* CP_TRACE_PREFIX_BYTES */
} cp_stream;

typedef struct cp_aopts {
    const unsigned char *selected;  /* [i]: run the i-th check of cp_checks() */
    const cp_found *found;  /* may be NULL: how `cuprobe run` saw processes end */
    cp_rec_hook hook;       /* may be NULL; set: one trace at a time, in order */
    void *hook_ctx;
    int progress;           /* draw the bar on a terminal for large inputs (serial only) */
    int jobs;               /* threads; 0: online CPUs, capped by CUPROBE_JOBS */
    int timeline;           /* the whole memory timeline (cp_series): the page, the
                             * summary and the Perfetto export read it; else lean */
    int ledger;             /* keep each process's cp_ledger (stats, diff, the page) */
    cp_stream *streams;     /* NULL, or [i]: files[i] is this stream when its fd
                             * >= 0 (cp_analyze_traces() reads and closes it) */
    const cp_wspan *span;   /* NULL, or per trace the window to read (cp_window.h):
                             * before it the model only, after it nothing */
} cp_aopts;

/*! cp_analyze_jobs() : the number of threads for n traces: jobs when > 0,
 *  else the online CPUs capped by CUPROBE_JOBS (a bad value is reported
 *  once on stderr and ignored); never more than n, at least 1. */
int cp_analyze_jobs(int jobs, size_t n);

/*! cp_analyze_traces() : analyze files[i] into parts[i] for i < n (the
 *  parts zeroed by the caller), on cp_analyze_jobs() threads, one trace per
 *  thread at a time.  parts[i].proc gets index i; the caller renumbers.
 *  @return : 0, or -1 out of memory (what was made is in parts: free it
 *  with cp_part_free). */
int cp_analyze_traces(char **files, size_t n, const cp_aopts *o, cp_part *parts);

/*! cp_part_proc_new() : a process of the model (cp_proc_new()) with an
 *  empty timeline.  @return : it, or NULL when out of memory. */
cp_proc *cp_part_proc_new(const char *file, int index);

/*! cp_part_proc_free() : free p with its timeline, backward passes and
 *  ledger (NULL is fine). */
void cp_part_proc_free(cp_proc *p);

/*! cp_part_free() : free a part's findings and process. */
void cp_part_free(cp_part *pt);

#endif /* CP_ANALYZE_H */
