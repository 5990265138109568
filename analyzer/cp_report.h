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

#endif /* CP_REPORT_H */
