/*
 * cp_opts.h - the one option grammar of the analyzer's commands
 * (cp_opts.c), read from a table per command:
 *   - options go anywhere among the operands (as GNU getopt permutes them),
 *     `--` ends them, -h/--help prints the usage;
 *   - a value is the next word, or follows a long option's '='
 *     (--since=12.5); numbers are checked against a range, seconds may have
 *     decimals, with one message each naming the option and the value;
 *   - a setting given again takes its last value (GNU tools do, so a
 *     wrapper's defaults can be overridden); a file or a filter given twice
 *     is an error: only one would be written or applied;
 *   - an option that would do nothing in the combination given is an error
 *     naming both options, never silence.  Each command names its outputs
 *     (bits: the text report, the JSON, the page...); an option asks for
 *     some and rules out others, and changes some: when none of those it
 *     changes is made, it does nothing.  Pairs that do not go together, or
 *     one that needs the other, are rules of the table.
 */
#ifndef CP_OPTS_H
#define CP_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an option takes. */
enum cp_arg {
    CP_ARG_NONE = 0,    /* nothing: *(int *)to = (int)lo */
    CP_ARG_STR,         /* a word: *(const char **)to */
    CP_ARG_INT,         /* an integer from lo to hi: *(int *)to */
    CP_ARG_LONG,        /* the same into *(long *)to */
    CP_ARG_SECS,        /* seconds from 0 to CP_OPT_SECS_MAX, decimals allowed
                         * (12.5): *(uint64_t *)to, in nanoseconds */
    CP_ARG_FN,          /* a word that fn reads */
    CP_ARG_MAYBE,       /* NAME=VALUE or NAME [VALUE] (the next word unless it
                         * starts with '-'): *(const char **)to, "" without one */
};

#define CP_OPT_SECS_MAX 1000000000ull   /* 31 years: the ns fit in 64 bits */

/* How often an option may be given. */
enum { CP_OPT_LAST = 0, CP_OPT_ONCE, CP_OPT_EACH };

typedef struct cp_opt {
    const char *name;           /* "--json" */
    const char *alias;          /* "-v", or NULL */
    int arg;                    /* enum cp_arg */
    void *to;
    long lo, hi;                /* NONE: the value set (lo); INT, LONG: the range */
    /* FN: read v into to; 0, or -1 after saying why on stderr ("WHO: ...") */
    int (*fn)(void *to, const char *who, const char *name, const char *v);
    const char *does;           /* what it does, for the messages: "writes the
                                 * report as JSON instead of text" */
    unsigned emits, drops;      /* the outputs it asks for, and rules out */
    unsigned acts;              /* the outputs it changes; 0: all of them */
    int times;                  /* CP_OPT_LAST (a setting), _ONCE (a file, a
                                 * filter), _EACH (each one counts: --check) */
    const char *hint;           /* when it rules out another's output, how to
                                 * get that output (a format with one %s: the
                                 * other's name), or NULL */
} cp_opt;

/* Two options of a command that do not go together (needs 0), or a that
 * does nothing without b (needs 1). */
typedef struct cp_opt_rule {
    const char *a, *b;
    int needs;
    const char *why;            /* apart: the message after "A and B " */
} cp_opt_rule;

typedef struct cp_optset {
    const char *who;            /* "report": starts every message */
    const cp_opt *opt;
    size_t n_opt;               /* at most 64 */
    const cp_opt_rule *rule;
    size_t n_rule;
    unsigned base;              /* the outputs made when no option asks */
    void (*usage)(FILE *);      /* the usage text: --help, an unknown option */
} cp_optset;

/* What the command line said. */
typedef struct cp_optv {
    char **in;                  /* the operands in order (argv's); free(in) */
    int n_in;
    uint64_t given;             /* bit i: opt[i] was given */
    unsigned outputs;           /* base, what options ask for, less what they rule out */
} cp_optv;

/*! cp_opts_parse() : read argv[1..argc) (argv[0] is the command) against s
 *  into v (v->in allocated here, also on failure), setting each option's
 *  target; a file or filter given twice is refused.  Combinations are
 *  cp_opts_check()'s.  @return : 0; 1 after printing the usage for --help
 *  (exit 0); -1 after saying why on stderr (a usage error: exit 2). */
int cp_opts_parse(const cp_optset *s, int argc, char **argv, cp_optv *v);

/*! cp_opts_check() : the rules of s on what v holds, then every option
 *  given that changes none of the outputs made (v->outputs, and extra,
 *  the outputs the values of the options add) is refused, naming the
 *  option that ruled them out.  @return : 0, or -1 after saying why. */
int cp_opts_check(const cp_optset *s, const cp_optv *v, unsigned extra);

/*! cp_opts_read() : cp_opts_parse(), then cp_opts_check() with no extra
 *  outputs.  @return : as cp_opts_parse(). */
int cp_opts_read(const cp_optset *s, int argc, char **argv, cp_optv *v);

/*! cp_opt_long() : v (the value of option opt; NULL when missing) as a
 *  number from lo to hi into *out; else "WHO: OPT takes a number from LO to
 *  HI, not 'V'" on stderr.  @return : 0 or -1. */
int cp_opt_long(const char *who, const char *opt, const char *v, long lo, long hi, long *out);

/*! cp_opt_secs() : v as seconds (digits, then at most one '.' and more
 *  digits: "12", "12.5", ".25"), at most CP_OPT_SECS_MAX, into *ns (digits
 *  past the ninth decimal are dropped).  @return : 0, or -1 when v is no
 *  such number (nothing said). */
int cp_opt_secs(const char *v, uint64_t *ns);

/*! cp_opt_secs_str() : ns as seconds the way cp_opt_secs() reads them,
 *  without trailing zeros ("12.5", "30") into buf.  @return : buf. */
const char *cp_opt_secs_str(uint64_t ns, char *buf, size_t cap);

/* Which processes, and which part of the run, are looked at (--pid,
 * --rank: -1 any; --since, --until: ns from the run's start, the earliest
 * process start of the traces read; CP_FILTER_END: to the end). */
typedef struct cp_filter {
    long pid, rank;
    uint64_t since, until;
} cp_filter;

#define CP_FILTER_END UINT64_MAX
#define CP_FILTER_NONE { -1, -1, 0, CP_FILTER_END }

/*! cp_filter_has_procs() : whether f picks processes (--pid, --rank).
 *  cp_filter_has_window() : whether it cuts the run (--since, --until). */
int cp_filter_has_procs(const cp_filter *f);
int cp_filter_has_window(const cp_filter *f);

/*! cp_filter_keeps() : whether a process of pid and rank (-1: none) passes
 *  f (NULL: no filter). */
int cp_filter_keeps(const cp_filter *f, long pid, long rank);

/*! cp_filter_check() : the window of f is not empty: "WHO: --until U is
 *  not after --since S" on stderr.  @return : 0 or -1. */
int cp_filter_check(const cp_filter *f, const char *who);

/* The table rows of the filter options into f, for the commands that take
 * them (window only: --since and --until; the processes: --pid and
 * --rank).  They change every output but a summary (acts: all but that). */
#define CP_OPT_WINDOW(f, acts_)                                                           \
    { "--since", NULL, CP_ARG_SECS, &(f)->since, 0, 0, NULL,                             \
      "keeps the part of the run after that second", 0, 0, (acts_), CP_OPT_ONCE, NULL }, \
    { "--until", NULL, CP_ARG_SECS, &(f)->until, 0, 0, NULL,                             \
      "keeps the part of the run before that second", 0, 0, (acts_), CP_OPT_ONCE, NULL }
#define CP_OPT_PROCS(f, acts_)                                                            \
    { "--pid", NULL, CP_ARG_LONG, &(f)->pid, 1, 4194304, NULL, "keeps one process",      \
      0, 0, (acts_), CP_OPT_ONCE, NULL },                                                 \
    { "--rank", NULL, CP_ARG_LONG, &(f)->rank, 0, 1048576, NULL,                          \
      "keeps the process of one rank", 0, 0, (acts_), CP_OPT_ONCE, NULL }

/* The rows of the reading commands' switches: --no-progress clears *flag;
 * --no-symbolize clears *flag, for every output (the stats command, whose
 * sites show only in some tables, has its own row). */
#define CP_OPT_NO_PROGRESS(flag)                                                          \
    { "--no-progress", NULL, CP_ARG_NONE, (flag), 0, 0, NULL, "hides the progress bar",  \
      0, 0, 0, 0, NULL }
#define CP_OPT_NO_SYMBOLIZE(flag)                                                         \
    { "--no-symbolize", NULL, CP_ARG_NONE, (flag), 0, 0, NULL,                           \
      "names call sites by module+offset", 0, 0, 0, 0, NULL }

#endif /* CP_OPTS_H */
