/*
 * cp_report_stub.c - weak stand-in for cp_report_main() until the real
 * report (another file defining it) is linked in; the strong one wins.
 */
#include <stdio.h>

#include "cp_report.h"

__attribute__((weak)) int cp_report_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "report: not built yet\n");
    return 2;
}
