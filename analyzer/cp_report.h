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

/*! cp_report_release() : free the findings, the processes and the
 *  symboliser's state of a collected report. */
void cp_report_release(cp_report *rep);

#endif /* CP_REPORT_H */
