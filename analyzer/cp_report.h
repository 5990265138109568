/*
 * cp_report.h - `cuprobe-analyze report`: findings a user can act on, from
 * one or more traces (docs/report.md).
 */
#ifndef CP_REPORT_H
#define CP_REPORT_H

/*! cp_report_main() : run `report` with its arguments (argv[0] is
 *  "report").
 *  @return : the process exit status: 0 ok, 3 a finding at or above
 *  --fail-on, 2 usage error or an unreadable, corrupt or truncated trace. */
int cp_report_main(int argc, char **argv);

#include "cp_opts.h"
#include "cp_analyze.h"

/*! cp_report_collect() : read traces files[0..n) through the model and
 *  every check, one pass each in order, calling hook(ctx, p, r) (may be
 *  NULL) on each record; run the checks across processes and prepare rep.
 *  progress: draw the bar on a terminal for large inputs.
 *  @return : 0, 1 when a trace could not be read to its end (its error is
 *  in its process; what decoded is in rep), -1 out of memory.  Release rep
 *  with cp_report_release() in every case. */
int cp_report_collect(char **files, int n, cp_report *rep, cp_rec_hook hook, void *ctx,
                      int progress);

typedef struct cp_collect_opts {
    int checks;             /* run every check (the findings); 0: none */
    int ledger;             /* keep each process's cp_ledger */
    int timeline;           /* the whole memory timeline (cp_series) */
    int progress, symbolize;
    int jobs;               /* 0: the online CPUs (CUPROBE_JOBS caps) */
    cp_rec_hook hook;       /* may be NULL (then traces are read in parallel) */
    void *hook_ctx;
    const cp_filter *filter; /* the processes and the part of the run kept; NULL: all */
    const char *who;        /* the command, starting messages (NULL: "report") */
} cp_collect_opts;

/*! cp_report_collect_with() : cp_report_collect() with the choices of co.
 *  @return : as cp_report_collect(); 2 when a summary could not be read. */
int cp_report_collect_with(char **files, size_t n, const cp_collect_opts *co, cp_report *rep);

/*! cp_report_inputs() : the paths args[0..n) stand for: a directory (and
 *  no argument at all: ".") for the traces of the last run there, each file
 *  once; who starts the messages on stderr.  @return : 0 with *out and
 *  *n_out (free with cp_report_inputs_free()), or -1, said on stderr. */
int cp_report_inputs(char **args, int n, const char *who, char ***out, size_t *n_out);
void cp_report_inputs_free(char **v, size_t n);

/*! cp_report_none_left() : say on stderr (starting with who) that filter f
 *  kept no process of rep: none matched --pid/--rank, or none ran in the
 *  window, whose place in the run rep says. */
void cp_report_none_left(const cp_report *rep, const cp_filter *f, const char *who);

/*! cp_report_release() : free the findings, the processes and the
 *  symboliser's state of a collected report. */
void cp_report_release(cp_report *rep);

#endif /* CP_REPORT_H */
