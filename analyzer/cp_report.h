/*
 * cp_report.h - `cuprobe-analyze report`: the human summary of traces.
 */
#ifndef CP_REPORT_H
#define CP_REPORT_H

/*! cp_report_main() : run `report` with its arguments (argv[0] is
 *  "report").  A weak default in cp_report_stub.c says it is not built.
 *  @return : the process exit status (0 ok, 2 usage or input error). */
int cp_report_main(int argc, char **argv);

#endif /* CP_REPORT_H */
