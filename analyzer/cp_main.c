/*
 * cp_main.c - `cuprobe-analyze SUBCOMMAND ...`: dispatch only.
 */
#include <stdio.h>
#include <string.h>

#include "cp_doctor.h"
#include "cp_dump.h"
#include "cp_export.h"
#include "cp_report.h"
#include "cp_stats.h"
#include "cp_diff.h"
#include "cp_trace.h"

#define CP_ANALYZE_VERSION CP_VERSION   /* the Makefile's VERSION */

static void cp_usage(FILE *f)
{
    fprintf(f,
            "usage: cuprobe COMMAND [ARGS...]\n"
            "\n"
            "commands:\n"
            "  report TRACE...   summary of memory, copies and calls (--html FILE: a page)\n"
            "  export --perfetto FILE [TRACE...]\n"
            "                    Trace Event Format JSON for ui.perfetto.dev\n"
            "  stats TRACE...    calls per API, memory and copies per device, memory by\n"
            "                    call site (--json, --csv)\n"
            "  diff BASE NEW     what changed between two runs (--fail-on-regression)\n"
            "  doctor [ARGS...]  checks of the machine, driver and traces\n"
            "  dump [TRACE...]   every record as one line of text\n"
            "  version           print the version\n"
            "  help              this text\n"
            "\n"
            "A TRACE may be a file or a directory; none: the last `cuprobe run` here.\n"
            "Exit status: 0 ok, 2 usage error or a truncated/corrupt trace.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cp_usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "dump") == 0)
        return cp_dump_main(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cp_report_main(argc - 1, argv + 1);
    if (strcmp(cmd, "export") == 0)
        return cp_export_main(argc - 1, argv + 1);
    if (strcmp(cmd, "stats") == 0)
        return cp_stats_main(argc - 1, argv + 1);
    if (strcmp(cmd, "diff") == 0)
        return cp_diff_main(argc - 1, argv + 1);
    if (strcmp(cmd, "doctor") == 0)
        return cp_doctor_main(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("cuprobe-analyze %s (trace format %u)\n", CP_ANALYZE_VERSION,
               CP_TRACE_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        cp_usage(stdout);
        return 0;
    }
    fprintf(stderr, "cuprobe: unknown command '%s'\n\n", cmd);
    cp_usage(stderr);
    return 2;
}
