/*
 * cp_opts.h - what the option loops of every subcommand share
 * (cp_opts.c): on/off options set from a table, numbers checked against a
 * range with one message.
 */
#ifndef CP_OPTS_H
#define CP_OPTS_H

#include <stddef.h>

typedef struct cp_flag {
    const char *name;           /* "--json" */
    int *to;                    /* set to val when given */
    int val;
} cp_flag;

/*! cp_opt_flag() : when a names one of f[0..n), set it.  @return : 1 when
 *  it did, else 0. */
int cp_opt_flag(const char *a, const cp_flag *f, size_t n);

/* What cp_opt_classify() found an argument to be. */
enum { CP_OPT_ARG = 0, CP_OPT_TAKEN, CP_OPT_HELP, CP_OPT_OTHER };

/*! cp_opt_classify() : argument a is an operand (CP_OPT_ARG: not an option,
 *  or after `--`), was taken here (CP_OPT_TAKEN: `--`, which clears *opts,
 *  or one of the flags f[0..n), set), asks for help (-h, --help), or is
 *  another option (CP_OPT_OTHER) for the caller. */
int cp_opt_classify(const char *a, int *opts, const cp_flag *f, size_t n);

/*! cp_opt_long() : v (the value of option opt; NULL when missing) as a
 *  number from lo to hi into *out; else "WHO: OPT takes a number from LO to
 *  HI, not 'V'" on stderr.  @return : 0 or -1. */
int cp_opt_long(const char *who, const char *opt, const char *v, long lo, long hi, long *out);

/* Which processes of a run are looked at (--pid, --rank); -1: any. */
typedef struct cp_filter {
    long pid, rank;
} cp_filter;

#define CP_FILTER_NONE { -1, -1 }

/*! cp_filter_opt() : when a is a filter option (--pid PID, --rank N), set
 *  it in f from its value v (NULL when missing).  @return : 1 when taken
 *  (v with it), 0 when a is no filter option, -1 a bad value ("WHO: ..."
 *  on stderr). */
int cp_filter_opt(cp_filter *f, const char *who, const char *a, const char *v);

/*! cp_filter_keeps() : whether a process of pid and rank (-1: none) passes
 *  f (NULL: no filter). */
int cp_filter_keeps(const cp_filter *f, long pid, long rank);

#endif /* CP_OPTS_H */
