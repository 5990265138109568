/*
 * cp_merge.c - one finding for the same problem in several processes of a
 * run (cp_report_merge_ranks, cp_findings.h): the ranks named once, what
 * each paid as a range, the costs summed.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_findings.h"

/* Past a number at s: digits (with '.' or ',' between digits) or 0x and hex
 * digits, then a unit after a blank ("2.00 MiB", "12.3 ms"). */
static const char *cp_skip_num(const char *s)
{
    static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "ns", "us", "ms",
                                          "s", NULL };
    if (s[0] == '0' && s[1] == 'x' && isxdigit((unsigned char)s[2])) {
        for (s += 2; isxdigit((unsigned char)*s); s++)
            ;
    } else {
        while (isdigit((unsigned char)*s) ||
               ((*s == '.' || *s == ',') && isdigit((unsigned char)s[1])))
            s++;
    }
    for (int i = 0; *s == ' ' && units[i]; i++) {
        size_t l = strlen(units[i]);
        if (strncmp(s + 1, units[i], l) == 0 && !isalpha((unsigned char)s[1 + l]))
            return s + 1 + l;
    }
    return s;
}

/* Equal once every number is taken out: "rank 3 leaked 4.00 MiB in 2
 * allocations" and "rank 5 leaked 12.00 KiB in 6 allocations" have one
 * shape. */
static int cp_same_shape(const char *a, const char *b)
{
    a = a ? a : "";
    b = b ? b : "";
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            a = cp_skip_num(a);
            b = cp_skip_num(b);
            continue;
        }
        if (*a++ != *b++)
            return 0;
    }
    return *a == *b;
}

static uint64_t cp_hash_byte(uint64_t h, unsigned char c)
{
    return (h ^ c) * 1099511628211ull;
}

static uint64_t cp_hash_str(uint64_t h, const char *s)
{
    for (s = s ? s : ""; *s; s++)
        h = cp_hash_byte(h, (unsigned char)*s);
    return cp_hash_byte(h, 0);
}

/* A hash that strings of one shape (cp_same_shape) share: every number
 * is the same mark. */
static uint64_t cp_hash_shape(uint64_t h, const char *s)
{
    for (s = s ? s : ""; *s;) {
        if (isdigit((unsigned char)*s)) {
            s = cp_skip_num(s);
            h = cp_hash_byte(h, 0xff);
        } else {
            h = cp_hash_byte(h, (unsigned char)*s++);
        }
    }
    return cp_hash_byte(h, 0);
}

static int cp_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* What findings that cp_finding_similar() could fold share: check,
 * severity, fix, explanation, number of sites, the shapes of title,
 * details and lines (a run of lines of one shape counting once), and the
 * set of site labels.  Only findings of one key are compared, so merging
 * costs O(n log n) in findings, not a comparison of every pair. */
static uint64_t cp_finding_key(const cp_finding *f)
{
    uint64_t h = 1469598103934665603ull;
    h = cp_hash_str(h, f->check->id);
    h = cp_hash_byte(h, (unsigned char)f->sev);
    h = cp_hash_byte(h, (unsigned char)f->top);
    h = cp_hash_str(h, cp_finding_fix(f));
    h = cp_hash_str(h, cp_finding_why(f));
    h = cp_hash_shape(h, f->title);
    h = cp_hash_shape(h, f->details.s);
    uint64_t prev = 0;
    for (size_t i = 0; i < f->n_lines; i++) {
        uint64_t l = cp_hash_shape(1469598103934665603ull, f->lines[i]);
        if (i == 0 || l != prev)
            h = (h ^ l) * 1099511628211ull;
        prev = l;
    }
    h = (h ^ f->n_sites) * 1099511628211ull;
    uint64_t lab[64];
    size_t n = f->n_sites < 64 ? f->n_sites : 64;
    for (size_t i = 0; i < n; i++)
        lab[i] = cp_hash_str(1469598103934665603ull, f->sites[i].label);
    qsort(lab, n, sizeof *lab, cp_u64_cmp);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || lab[i] != lab[i - 1])
            h = (h ^ lab[i]) * 1099511628211ull;
    return h;
}

static int cp_site_same(const cp_site *x, const cp_site *y)
{
    return strcmp(x->label ? x->label : "", y->label ? y->label : "") == 0 &&
           cp_same_shape(x->note, y->note);
}

/* The site of f at the same place as s, or NULL. */
static cp_site *cp_site_match(cp_finding *f, const cp_site *s)
{
    for (size_t i = 0; i < f->n_sites; i++)
        if (cp_site_same(&f->sites[i], s))
            return &f->sites[i];
    return NULL;
}

/* Lines of one shape, where a run of lines of one shape ("Leaked N bytes at
 * ADDR", one per allocation) counts as one line. */
static int cp_lines_similar(char *const *a, size_t na, char *const *b, size_t nb)
{
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        if (!cp_same_shape(a[i], b[j]))
            return 0;
        for (i++; i < na && cp_same_shape(a[i], a[i - 1]); i++)
            ;
        for (j++; j < nb && cp_same_shape(b[j], b[j - 1]); j++)
            ;
    }
    return i == na && j == nb;
}

static int cp_lines_equal(char *const *a, size_t na, char *const *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i]) != 0)
            return 0;
    return 1;
}

/* The same problem in two processes, whatever its numbers: same check,
 * severity and fix, titles, lines and details of one shape, and the same
 * call sites (by label).  What each process paid may differ (the same leak
 * site on 8 ranks of different sizes).  A check whose numbers name things
 * (merge_exact) needs them equal. */
static int cp_finding_similar(cp_finding *a, const cp_finding *b)
{
    if (a->check != b->check || a->sev != b->sev || !a->proc || !b->proc || a->top != b->top ||
        a->n_sites != b->n_sites ||
        strcmp(cp_finding_fix(a), cp_finding_fix(b)) != 0 ||
        strcmp(cp_finding_why(a), cp_finding_why(b)) != 0 ||
        !cp_same_shape(a->title, b->title) || !cp_same_shape(a->details.s, b->details.s))
        return 0;
    /* One finding per process in a merge: the caller checks that b's is
     * not among a's. */
    if (a->check->merge_exact &&
        (a->count != b->count || a->bytes != b->bytes || a->ns != b->ns ||
         strcmp(a->title ? a->title : "", b->title ? b->title : "") != 0 ||
         strcmp(a->details.s ? a->details.s : "", b->details.s ? b->details.s : "") != 0 ||
         !cp_lines_equal(a->lines, a->n_lines, b->lines, b->n_lines)))
        return 0;
    if (!cp_lines_similar(a->lines, a->n_lines, b->lines, b->n_lines))
        return 0;
    for (size_t i = 0; i < b->n_sites; i++) {
        const cp_site *s = cp_site_match(a, &b->sites[i]);
        if (!s || (a->check->merge_exact && (s->count != b->sites[i].count ||
                                             s->bytes != b->sites[i].bytes)))
            return 0;
    }
    return 1;
}

/* "2.00 MiB to 8.00 MiB, 20.00 MiB in all" for the numbers v[0..n) of one
 * kind (0 count, 1 bytes, 2 time) into buf. */
static void cp_range(char *buf, size_t cap, int kind, const cp_fnum *v, size_t n)
{
    uint64_t lo = UINT64_MAX, hi = 0, sum = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = kind == 0 ? v[i].count : kind == 1 ? v[i].bytes : v[i].ns;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
        sum += x;
    }
    char a[32], b[32], c[32];
    const char *(*fmt)(uint64_t, char *, size_t) = kind == 1 ? cp_fmt_bytes : cp_fmt_ns;
    if (kind == 0) {
        snprintf(a, sizeof a, "%" PRIu64, lo);
        snprintf(b, sizeof b, "%" PRIu64, hi);
        snprintf(c, sizeof c, "%" PRIu64, sum);
    } else {
        fmt(lo, a, sizeof a);
        fmt(hi, b, sizeof b);
        fmt(sum, c, sizeof c);
    }
    if (lo == hi)
        snprintf(buf, cap, "%s each, %s in all", a, c);
    else
        snprintf(buf, cap, "%s to %s, %s in all", a, b, c);
}

/* The line a merged finding gets: what each process paid, and the sum. */
static void cp_merged_line(cp_finding *f)
{
    size_t n = f->n_more + 1;
    cp_fnum *v = malloc(n * sizeof *v);
    if (!v)
        return;
    v[0] = f->own;
    memcpy(v + 1, f->more_num, f->n_more * sizeof *v);
    static const char *const what[3] = { "count", "bytes", "time" };
    const uint64_t sum[3] = { f->count, f->bytes, f->ns };
    char line[600], part[160];
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        if (!sum[k])
            continue;
        cp_range(part, sizeof part, k, v, n);
        at += (size_t)snprintf(line + at, sizeof line - at, "%s%s %s", at ? "; " : "", what[k],
                               part);
        if (at >= sizeof line)
            break;
    }
    /* First among the lines: it qualifies the title, which is the first
     * process's. */
    int differ = 0;
    for (size_t i = 1; i < n; i++)
        differ |= memcmp(&v[i], &v[0], sizeof v[0]) != 0;
    char whose[64] = "";
    if (differ && f->proc->id.rank >= 0)
        snprintf(whose, sizeof whose, " The title and lines are rank %ld's.", f->proc->id.rank);
    else if (differ)
        snprintf(whose, sizeof whose, " The title and lines are pid %llu's.",
                 (unsigned long long)f->proc->pid);
    size_t before = f->n_lines;
    if (at && at < sizeof line)
        cp_finding_line(f, "Per process (%zu): %s.%s", n, line, whose);
    if (f->n_lines > before) {
        char *l = f->lines[before];
        memmove(f->lines + 1, f->lines, before * sizeof *f->lines);
        f->lines[0] = l;
    }
    free(v);
}

/* Fold b into f: its process joins f's, its numbers add to f's and to the
 * sites of the same label.  @return : 0, or -1 out of memory (nothing
 * changed). */
static int cp_fold(cp_finding *f, const cp_finding *b)
{
    cp_proc **m = realloc(f->more, (f->n_more + 1) * sizeof *m);
    if (!m)
        return -1;
    f->more = m;
    cp_fnum *mn = realloc(f->more_num, (f->n_more + 1) * sizeof *mn);
    if (!mn)
        return -1;
    f->more_num = mn;
    if (!f->n_more)
        f->own = (cp_fnum){ f->count, f->bytes, f->ns };
    f->more[f->n_more] = b->proc;
    f->more_num[f->n_more++] = (cp_fnum){ b->count, b->bytes, b->ns };
    f->count += b->count;
    f->bytes += b->bytes;
    f->ns += b->ns;
    for (size_t i = 0; i < b->n_sites; i++) {
        cp_site *s = cp_site_match(f, &b->sites[i]);
        s->count += b->sites[i].count;
        s->bytes += b->sites[i].bytes;
        s->ns += b->sites[i].ns;
    }
    if (f->t_from && b->t_from && b->t_from < f->t_from)
        f->t_from = b->t_from;
    if (b->t_to > f->t_to)
        f->t_to = b->t_to;
    return 0;
}

typedef struct cp_mkey {
    uint64_t key;
    size_t i;
} cp_mkey;

static int cp_mkey_cmp(const void *a, const void *b)
{
    const cp_mkey *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

void cp_report_merge_ranks(cp_report *rep)
{
    size_t n = rep->n, np = rep->n_procs;
    cp_mkey *k = malloc((n ? n : 1) * sizeof *k);
    unsigned char *gone = calloc(n ? n : 1, 1);
    /* stamp[p->index] == the finding folding now: p's finding is in it. */
    size_t *stamp = calloc(np ? np : 1, sizeof *stamp);
    if (!k || !gone || !stamp)
        goto out;       /* unmerged is still a correct report */
    for (size_t i = 0; i < n; i++)
        k[i] = (cp_mkey){ rep->f[i]->proc ? cp_finding_key(rep->f[i]) : 0, i };
    /* By key, then in report order: within a key, the findings meet in
     * the order of the report, as every one compared with every later
     * one would. */
    qsort(k, n, sizeof *k, cp_mkey_cmp);
    for (size_t x = 0; x < n; x++) {
        cp_finding *f = rep->f[k[x].i];
        if (gone[k[x].i] || !f->proc || (size_t)f->proc->index >= np)
            continue;
        stamp[f->proc->index] = k[x].i + 1;
        for (size_t y = x + 1; y < n && k[y].key == k[x].key; y++) {
            cp_finding *b = rep->f[k[y].i];
            if (gone[k[y].i] || !b->proc || (size_t)b->proc->index >= np ||
                stamp[b->proc->index] == k[x].i + 1)
                continue;
            if (!cp_finding_similar(f, b) || cp_fold(f, b) != 0)
                continue;
            gone[k[y].i] = 1;
            stamp[b->proc->index] = k[x].i + 1;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!gone[i] && rep->f[i]->n_more) {
            cp_merged_line(rep->f[i]);
            cp_finding_sort_sites(rep->f[i]);
        }
    cp_report_drop_marked(rep, gone);
out:
    free(k);
    free(gone);
    free(stamp);
    /* The merged findings weigh what all their processes paid. */
    cp_report_sort(rep);
}
