/*
 * cp_front_opts.c - `cuprobe run [OPTIONS] [--] CMD [ARGS...]`: the options
 * end at `--` or at the first word that is not one (CMD's own options are
 * CMD's), and the front end's usage text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_front.h"

void cp_front_usage(FILE *f)
{
    fputs("usage: cuprobe run [OPTIONS] [--] CMD [ARGS...]\n"
          "       cuprobe report TRACE...      what went wrong, with call sites (--help for options;\n"
          "                                    --html FILE also writes a self-contained page)\n"
          "       cuprobe report --summary FILE TRACE...\n"
          "                                    the analysis of these traces, to merge later with\n"
          "                                    cuprobe report FILE... (a multi-node job's traces stay put)\n"
          "       cuprobe export --perfetto FILE TRACE...\n"
          "                                    timeline for ui.perfetto.dev / chrome://tracing\n"
          "       cuprobe stats [TRACE|DIR...] calls, time and memory per API, device and call site\n"
          "       cuprobe diff BASE NEW        peak memory, counts and findings that changed\n"
          "       cuprobe doctor [ARGS...]     check this machine's GPU stack layer by layer\n"
          "       cuprobe dump TRACE...        every record as text\n"
          "       cuprobe version | --help\n"
          "\n"
          "run options:\n"
          "  -o, --output PATTERN  trace file name; %p pid, %h host, %r rank (RANK,\n"
          "                        SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK;\n"
          "                        norank-PID without), %l local rank,\n"
          "                        %t start time YYYYmmdd-HHMMSS, %% a percent sign\n"
          "                        (default: $CUPROBE_OUTPUT, else cuprobe-%p.trace);\n"
          "                        without %p, other processes add .PID to the name\n"
          "  -f, --force-overwrite replace an existing file of the command's own name\n"
          "                        (without -f a taken name is never overwritten: the\n"
          "                        trace gets another, announced on stderr)\n"
          "  --flush-ms N          make the trace durable every N ms (1..10000, default 100)\n"
          "  --no-stacks           record no call stacks (CUPROBE_STACK_DEPTH=0)\n"
          "  --no-python           no Python frames and no framework companion\n"
          "  --attribute           name the line that keeps a framework pool's memory\n"
          "                        (PyTorch's per-block stacks, a CuPy memory hook;\n"
          "                        CUPROBE_ATTRIBUTE=1): memory growth and what a pool\n"
          "                        holds at exit are then reported at that line, not\n"
          "                        where the pool took memory from the driver\n"
          "\n"
          "`cuprobe run` starts CMD with the tracer preloaded and stays as its parent:\n"
          "signals sent to it (TERM, INT, HUP, QUIT, USR1, USR2, WINCH, TSTP, CONT) are\n"
          "passed on.  Every process of CMD's tree that uses CUDA writes its own trace\n"
          "file; CMD itself always does.  At the end one line on stderr says where the\n"
          "traces are (CUPROBE_LOG=0 silences it); `cuprobe report` with no TRACE, or\n"
          "with that directory, reads exactly this run's traces.  Exit status: CMD's\n"
          "own (128+N when it died of signal N, which the front end then dies of too),\n"
          "2 for a usage error, 126 or 127 when CMD could not be started.\n",
          f);
}

static int cp_opt_err(const char *fmt, const char *arg)
{
    fputs("cuprobe: run: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (try cuprobe --help)\n", stderr);
    return -1;
}

/* --flush-ms: a number of milliseconds in 1..10000. */
static int cp_opt_flush(const char *v)
{
    char *end;
    errno = 0;
    long ms = strtol(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || v[0] == '+') {
        fprintf(stderr, "cuprobe: run: --flush-ms: '%s' is not a number of milliseconds\n", v);
        return -1;
    }
    if (ms < 1 || ms > 10000) {
        fprintf(stderr, "cuprobe: run: --flush-ms: %s is outside 1..10000\n", v);
        return -1;
    }
    return 0;
}

/* The value of option a: "--name=VALUE", or the next word. */
static const char *cp_opt_value(int argc, char **argv, int *i, const char *a, size_t nl)
{
    if (a[nl] == '=')
        return a + nl + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

int cp_run_parse(int argc, char **argv, cp_run_opts *o)
{
    memset(o, 0, sizeof *o);
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t nl = strcspn(a, "=");
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == 0)
            break;
        if (strcmp(a, "-o") == 0 || strncmp(a, "--output", nl > 8 ? nl : 8) == 0) {
            /* One name for the traces: a second would silently win over the
             * first.  (A setting, --flush-ms, takes its last value.) */
            if (o->output)
                return cp_opt_err("%s given twice: the traces get one name; give it once", a);
            if (!(o->output = cp_opt_value(argc, argv, &i, a, a[1] == 'o' ? 2 : 8)))
                return cp_opt_err("%s needs a PATTERN", a);
            if (!*o->output)
                return cp_opt_err("%s needs a PATTERN, not ''", a);
        } else if (strncmp(a, "--flush-ms", nl > 10 ? nl : 10) == 0) {
            if (!(o->flush_ms = cp_opt_value(argc, argv, &i, a, 10)))
                return cp_opt_err("%s needs a number", a);
            if (cp_opt_flush(o->flush_ms) < 0)
                return -1;
        } else if (strcmp(a, "-f") == 0 || strcmp(a, "--force-overwrite") == 0) {
            o->force = 1;
        } else if (strcmp(a, "--no-stacks") == 0) {
            o->no_stacks = 1;
        } else if (strcmp(a, "--no-python") == 0) {
            o->no_python = 1;
        } else if (strcmp(a, "--attribute") == 0) {
            o->attribute = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cp_front_usage(stdout);
            return 1;
        } else {
            return cp_opt_err("unknown option '%s'", a);
        }
    }
    if (o->attribute && o->no_python)
        return cp_opt_err("%s", "--attribute needs the framework companion, which "
                                "--no-python turns off");
    if (i >= argc)
        return cp_opt_err("%s", "no command given (cuprobe run [OPTIONS] -- CMD ARGS...)");
    o->cmd = argv + i;
    return 0;
}
