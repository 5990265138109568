/*
 * cp_opts.c - the option grammar of cp_opts.h: one loop for every command,
 * its table saying what each option takes, how often, and what it changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_opts.h"

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

int cp_opt_secs(const char *v, uint64_t *ns)
{
    uint64_t s = 0, frac = 0, scale = 1000000000ull;
    int digits = 0;
    const char *c = v;
    /* By hand, not strtod: no sign, exponent, hex, inf or locale's comma,
     * and the nanoseconds exact (12.5 is 12500000000, not a float's). */
    for (; *c >= '0' && *c <= '9'; c++, digits++) {
        s = s * 10 + (uint64_t)(*c - '0');
        if (s > CP_OPT_SECS_MAX)
            return -1;
    }
    if (*c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++, digits++)
            if (scale > 1) {
                scale /= 10;
                frac += (uint64_t)(*c - '0') * scale;
            }
    if (*c || !digits || (s == CP_OPT_SECS_MAX && frac))
        return -1;
    *ns = s * 1000000000ull + frac;
    return 0;
}

const char *cp_opt_secs_str(uint64_t ns, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
                     (unsigned long long)(ns % 1000000000u));
    /* As a person writes it: 12.5, 30, 0.001. */
    while (n > 0 && (size_t)n < cap && buf[n - 1] == '0')
        buf[--n] = 0;
    if (n > 0 && (size_t)n < cap && buf[n - 1] == '.')
        buf[--n] = 0;
    return buf;
}

/* --- reading ------------------------------------------------------------------------------ */

static const cp_opt *cp_opt_find(const cp_optset *s, const char *a, size_t len)
{
    for (size_t i = 0; i < s->n_opt; i++) {
        const cp_opt *o = &s->opt[i];
        if ((strlen(o->name) == len && strncmp(a, o->name, len) == 0) ||
            (o->alias && strlen(o->alias) == len && strncmp(a, o->alias, len) == 0))
            return o;
    }
    return NULL;
}

/* Option o's value v (NULL: none followed) into its target.  @return : 0,
 * or -1 after saying why. */
static int cp_opt_take(const cp_optset *s, const cp_opt *o, const char *a, const char *v)
{
    long k;
    switch (o->arg) {
    case CP_ARG_NONE:
        *(int *)o->to = (int)o->lo;
        return 0;
    case CP_ARG_MAYBE:
        *(const char **)o->to = v ? v : "";
        return 0;
    case CP_ARG_STR:
        if (!v || !*v) {
            fprintf(stderr, "%s: %s needs a file name\n", s->who, a);
            return -1;
        }
        *(const char **)o->to = v;
        return 0;
    case CP_ARG_INT:
    case CP_ARG_LONG:
        if (cp_opt_long(s->who, a, v, o->lo, o->hi, &k) != 0)
            return -1;
        if (o->arg == CP_ARG_INT)
            *(int *)o->to = (int)k;
        else
            *(long *)o->to = k;
        return 0;
    case CP_ARG_SECS:
        if (v && cp_opt_secs(v, (uint64_t *)o->to) == 0)
            return 0;
        fprintf(stderr, "%s: %s takes seconds from the run's start, such as 12 or 12.5%s%s%s\n",
                s->who, a, v ? ", not '" : "", v ? v : "", v ? "'" : "");
        return -1;
    default:
        return o->fn(o->to, s->who, a, v);
    }
}

int cp_opts_parse(const cp_optset *s, int argc, char **argv, cp_optv *v)
{
    memset(v, 0, sizeof *v);
    v->in = calloc(argc > 0 ? (size_t)argc : 1, sizeof *v->in);
    /* One bit of v->given per option. */
    if (!v->in || s->n_opt > 64) {
        fprintf(stderr, "%s: %s\n", s->who, v->in ? "more than 64 options" : "out of memory");
        return -1;
    }
    int opts = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!opts || a[0] != '-' || !a[1]) {
            v->in[v->n_in++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            opts = 0;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            s->usage(stdout);
            return 1;
        }
        /* --NAME=VALUE as GNU getopt reads it, for a long option that takes
         * a value. */
        size_t len = strcspn(a, "=");
        const cp_opt *o = cp_opt_find(s, a, len);
        if (a[len] && o && (o->arg == CP_ARG_NONE || a[1] != '-')) {
            fprintf(stderr, "%s: %.*s takes no value ('%s')\n", s->who, (int)len, a, a);
            return -1;
        }
        if (!o) {
            fprintf(stderr, "%s: unknown option '%s'\n", s->who, a);
            s->usage(stderr);
            return -1;
        }
        size_t k = (size_t)(o - s->opt);
        if (o->times == CP_OPT_ONCE && (v->given >> k & 1)) {
            fprintf(stderr, "%s: %s given twice: the second would replace the first (it %s); "
                    "give it once\n", s->who, o->name, o->does);
            return -1;
        }
        v->given |= 1ull << k;
        const char *val = NULL;
        if (a[len])
            val = a + len + 1;
        else if (o->arg == CP_ARG_MAYBE)
            val = i + 1 < argc && argv[i + 1][0] != '-' ? argv[++i] : NULL;
        else if (o->arg != CP_ARG_NONE && i + 1 < argc)
            val = argv[++i];
        if (cp_opt_take(s, o, o->name, val) != 0)
            return -1;
    }
    v->outputs = s->base;
    for (size_t k = 0; k < s->n_opt; k++)
        if (v->given >> k & 1)
            v->outputs |= s->opt[k].emits;
    for (size_t k = 0; k < s->n_opt; k++)
        if (v->given >> k & 1)
            v->outputs &= ~s->opt[k].drops;
    return 0;
}

/* --- combinations ------------------------------------------------------------------------- */

/* Whether the option named name was given (0 when s has none). */
static int cp_opts_given(const cp_optset *s, const cp_optv *v, const char *name)
{
    const cp_opt *o = cp_opt_find(s, name, strlen(name));
    return o && (v->given >> (o - s->opt) & 1);
}

/* The first option given that changes none of the outputs made, said with
 * the option that ruled them out.  @return : 0, or -1 when there was one. */
static int cp_opts_idle(const cp_optset *s, const cp_optv *v, unsigned made)
{
    for (size_t k = 0; k < s->n_opt; k++) {
        const cp_opt *o = &s->opt[k];
        /* What it changes, or (an option that asks for an output) that output. */
        unsigned on = o->emits ? o->emits : o->acts;
        if (!(v->given >> k & 1) || !on || (on & made))
            continue;
        const cp_opt *by = NULL;
        for (size_t j = 0; j < s->n_opt && !by; j++)
            if ((v->given >> j & 1) && j != k && (s->opt[j].drops & on))
                by = &s->opt[j];
        if (!by) {
            fprintf(stderr, "%s: %s does nothing here (%s %s)\n", s->who, o->name, o->name,
                    o->does);
            return -1;
        }
        fprintf(stderr, "%s: %s %s: %s does nothing with it (%s %s)", s->who, by->name,
                by->does, o->name, o->name, o->does);
        if (by->hint && o->emits) {
            fputs("; ", stderr);
            fprintf(stderr, by->hint, o->name);
        }
        fputc('\n', stderr);
        return -1;
    }
    return 0;
}

int cp_opts_check(const cp_optset *s, const cp_optv *v, unsigned extra)
{
    for (size_t r = 0; r < s->n_rule; r++) {
        const cp_opt_rule *u = &s->rule[r];
        int a = cp_opts_given(s, v, u->a), b = cp_opts_given(s, v, u->b);
        if (!a || b == u->needs)
            continue;
        const cp_opt *o = cp_opt_find(s, u->a, strlen(u->a));
        if (u->needs)
            fprintf(stderr, "%s: %s does nothing without %s (%s %s); give %s too\n", s->who,
                    u->a, u->b, u->a, o->does, u->b);
        else
            fprintf(stderr, "%s: %s and %s %s\n", s->who, u->a, u->b, u->why);
        return -1;
    }
    return cp_opts_idle(s, v, v->outputs | extra);
}

int cp_opts_read(const cp_optset *s, int argc, char **argv, cp_optv *v)
{
    int rc = cp_opts_parse(s, argc, argv, v);
    return rc ? rc : cp_opts_check(s, v, 0);
}

/* --- filters ------------------------------------------------------------------------------ */

int cp_filter_has_procs(const cp_filter *f)
{
    return f && (f->pid >= 0 || f->rank >= 0);
}

int cp_filter_has_window(const cp_filter *f)
{
    return f && (f->since > 0 || f->until != CP_FILTER_END);
}

int cp_filter_keeps(const cp_filter *f, long pid, long rank)
{
    return !f || ((f->pid < 0 || f->pid == pid) && (f->rank < 0 || f->rank == rank));
}

int cp_filter_check(const cp_filter *f, const char *who)
{
    char b1[32], b2[32];
    if (f->until == CP_FILTER_END || f->until > f->since)
        return 0;
    fprintf(stderr, "%s: --until %s is not after --since %s: the window would hold nothing\n",
            who, cp_opt_secs_str(f->until, b1, sizeof b1),
            cp_opt_secs_str(f->since, b2, sizeof b2));
    return -1;
}
