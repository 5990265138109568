/*
 * cp_opts.c - option helpers of cp_opts.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_opts.h"

int cp_opt_flag(const char *a, const cp_flag *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a, f[i].name) == 0) {
            *f[i].to = f[i].val;
            return 1;
        }
    return 0;
}

int cp_opt_classify(const char *a, int *opts, const cp_flag *f, size_t n)
{
    if (!*opts || a[0] != '-' || !a[1])
        return CP_OPT_ARG;
    if (strcmp(a, "--") == 0) {
        *opts = 0;
        return CP_OPT_TAKEN;
    }
    if (cp_opt_flag(a, f, n))
        return CP_OPT_TAKEN;
    return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 ? CP_OPT_HELP : CP_OPT_OTHER;
}

int cp_opt_long(const char *who, const char *opt, const char *v, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    long k = v ? strtol(v, &end, 10) : 0;
    if (v && !errno && end != v && !*end && k >= lo && k <= hi) {
        *out = k;
        return 0;
    }
    fprintf(stderr, "%s: %s takes a number from %ld to %ld%s%s%s\n", who, opt, lo, hi,
            v ? ", not '" : "", v ? v : "", v ? "'" : "");
    return -1;
}

int cp_filter_opt(cp_filter *f, const char *who, const char *a, const char *v)
{
    long k;
    if (strcmp(a, "--pid") == 0 || strcmp(a, "--rank") == 0) {
        int pid = a[2] == 'p';
        if (cp_opt_long(who, a, v, pid ? 1 : 0, pid ? 4194304 : 1048576, &k) != 0)
            return -1;
        *(pid ? &f->pid : &f->rank) = k;
        return 1;
    }
    return 0;
}

int cp_filter_keeps(const cp_filter *f, long pid, long rank)
{
    return !f || ((f->pid < 0 || f->pid == pid) && (f->rank < 0 || f->rank == rank));
}
