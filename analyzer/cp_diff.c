/*
 * cp_diff.c - `cuprobe-analyze diff [OPTIONS] BASE NEW` (cp_diff.h).
 *
 * Each side becomes one "cuprobe-stats" document: read as it is when it is
 * one, else analyzed (every check, and the ledger) and written as one in
 * memory, with every site and the findings.  The two documents are then
 * compared: processes matched by their key (rank, else program and
 * position), devices by ordinal, sites by label, findings by check,
 * severity, process and top site.  What is equal is not printed: a run
 * against itself prints nothing.  Times are compared only past a noise
 * floor (CP_DIFF_NS and CP_DIFF_PCT): two runs never block alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cp_diff.h"
#include "cp_jread.h"
#include "cp_opts.h"
#include "cp_report.h"
#include "cp_stats.h"

#define CP_DIFF_SITES 100000        /* sites per device written for a side */
#define CP_DIFF_NS 1000000ull       /* time changes below 1 ms are noise */
#define CP_DIFF_PCT 10              /* ... and below 10% */

typedef struct cp_dside {
    const char *path;
    cp_jdoc *doc;
    const cp_jn *procs, *finds;
} cp_dside;

typedef struct cp_dopts {
    int json, top, symbolize, progress;
    int gate;                   /* 0 none, 1 percent, 2 bytes */
    double gate_pct;
    uint64_t gate_bytes;
    const char *in[2];
} cp_dopts;

/* --- reading a side ------------------------------------------------------------------ */

static char *cp_diff_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        if (f)
            fclose(f);
        return NULL;
    }
    char *t = malloc((size_t)st.st_size + 1);
    *n = t ? fread(t, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (t)
        t[*n] = 0;
    return t;
}

static int cp_diff_is_stats(const char *path)
{
    FILE *f = fopen(path, "r");
    char head[256];
    size_t n = f ? fread(head, 1, sizeof head - 1, f) : 0;
    if (f)
        fclose(f);
    head[n] = 0;
    return strstr(head, "\"cuprobe-stats\"") != NULL;
}

static int cp_diff_parse(cp_dside *s, const char *text, size_t n)
{
    char err[256];
    s->doc = cp_jdoc_parse(text, n, err, sizeof err);
    if (!s->doc) {
        fprintf(stderr, "diff: %s: %s\n", s->path, err);
        return -1;
    }
    const cp_jn *root = cp_jdoc_root(s->doc);
    const cp_jn *schema = cp_jn_get(root, "schema");
    if (!schema || schema->type != CP_J_STR || strcmp(schema->s, "cuprobe-stats") != 0) {
        fprintf(stderr, "diff: %s: not a \"cuprobe-stats\" document\n", s->path);
        return -1;
    }
    s->procs = cp_jn_get(root, "processes");
    s->finds = cp_jn_get(root, "findings");
    return 0;
}

static int cp_diff_load(cp_dside *s, const cp_dopts *o)
{
    if (cp_diff_is_stats(s->path)) {
        size_t n;
        char *t = cp_diff_slurp(s->path, &n);
        if (!t) {
            fprintf(stderr, "diff: cannot read %s: %s\n", s->path, strerror(errno));
            return -1;
        }
        int rc = cp_diff_parse(s, t, n);
        free(t);
        return rc;
    }
    char **files, *arg = (char *)s->path;
    size_t n;
    if (cp_report_inputs(&arg, 1, "diff", &files, &n) != 0)
        return -1;
    cp_collect_opts co = { .who = "diff", .checks = 1, .ledger = 1,
                           .progress = o->progress, .symbolize = o->symbolize };
    cp_report rep;
    int bad = cp_report_collect_with(files, n, &co, &rep);
    int rc = -1;
    if (bad < 0) {
        fprintf(stderr, "diff: out of memory\n");
    } else if (bad == 0 || (bad == 1 && rep.n_procs)) {
        for (size_t i = 0; i < rep.n_procs; i++)
            if (rep.procs[i]->error && !rep.procs[i]->killed)
                fprintf(stderr, "%s\n", rep.procs[i]->error);
        cp_jb b = { 0 };
        cp_stats_doc(&b, &rep, CP_DIFF_SITES, 1);
        rc = b.oom ? -1 : cp_diff_parse(s, b.s, b.n);
        cp_jb_free(&b);
        if (bad)
            rc = -1;
    }
    cp_report_release(&rep);
    cp_report_inputs_free(files, n);
    return rc;
}

/* --- reading the documents ------------------------------------------------------------- */

static uint64_t cp_ju(const cp_jn *o, const char *key)
{
    const cp_jn *v = cp_jn_get(o, key);
    return v && v->type == CP_J_INT && !v->neg ? v->u : 0;
}

static const char *cp_js(const cp_jn *o, const char *key)
{
    const cp_jn *v = cp_jn_get(o, key);
    return v && v->type == CP_J_STR ? v->s : "";
}

static const cp_jn *cp_diff_find(const cp_jn *arr, const char *key, const char *val)
{
    for (size_t i = 0; arr && arr->type == CP_J_ARR && i < arr->n; i++)
        if (strcmp(cp_js(&arr->kid[i], key), val) == 0)
            return &arr->kid[i];
    return NULL;
}

static const cp_jn *cp_diff_dev(const cp_jn *proc, uint64_t ordinal)
{
    const cp_jn *devs = proc ? cp_jn_get(proc, "devices") : NULL;
    for (size_t i = 0; devs && devs->type == CP_J_ARR && i < devs->n; i++)
        if (cp_ju(&devs->kid[i], "ordinal") == ordinal)
            return &devs->kid[i];
    return NULL;
}

static const cp_jn *cp_diff_sites(const cp_jn *dev)
{
    const cp_jn *s = dev ? cp_jn_get(dev, "sites") : NULL;
    return s ? cp_jn_get(s, "peak") : NULL;
}

/* --- printing -------------------------------------------------------------------------- */

static const char *cp_diff_signed(int64_t d, char *buf, size_t cap)
{
    char b[32];
    uint64_t m = d < 0 ? (uint64_t)-d : (uint64_t)d;
    snprintf(buf, cap, "%c%s", d < 0 ? '-' : '+', cp_fmt_bytes(m, b, sizeof b));
    return buf;
}

static const char *cp_diff_pct(uint64_t base, int64_t d, char *buf, size_t cap)
{
    if (!base)
        snprintf(buf, cap, "new");
    else
        snprintf(buf, cap, "%+.0f%%", 100.0 * (double)d / (double)base);
    return buf;
}

/* One site whose memory at the peak changed, for the text and the gate. */
typedef struct cp_dsite {
    const char *label;
    uint64_t base, new_;
} cp_dsite;

static int cp_dsite_cmp(const void *a, const void *b)
{
    const cp_dsite *x = a, *y = b;
    int64_t dx = (int64_t)(x->new_ - x->base), dy = (int64_t)(y->new_ - y->base);
    uint64_t ax = dx < 0 ? (uint64_t)-dx : (uint64_t)dx, ay = dy < 0 ? (uint64_t)-dy : (uint64_t)dy;
    if (ax != ay)
        return ax > ay ? -1 : 1;
    return strcmp(x->label, y->label);
}

/* The sites of two devices (either may be NULL) whose bytes at the peak
 * differ, the largest change first.  @return : their number, *out to free. */
static size_t cp_diff_site_changes(const cp_jn *bd, const cp_jn *nd, cp_dsite **out)
{
    const cp_jn *bs = cp_diff_sites(bd), *ns = cp_diff_sites(nd);
    size_t nb = bs && bs->type == CP_J_ARR ? bs->n : 0, nn = ns && ns->type == CP_J_ARR ? ns->n : 0;
    cp_dsite *v = calloc(nb + nn + 1, sizeof *v);
    size_t k = 0;
    *out = v;
    if (!v)
        return 0;
    for (size_t i = 0; i < nn; i++) {
        const char *l = cp_js(&ns->kid[i], "site");
        const cp_jn *m = cp_diff_find(bs, "site", l);
        v[k] = (cp_dsite){ l, m ? cp_ju(m, "bytes_at_peak") : 0,
                           cp_ju(&ns->kid[i], "bytes_at_peak") };
        if (v[k].base != v[k].new_)
            k++;
    }
    for (size_t i = 0; i < nb; i++) {
        const char *l = cp_js(&bs->kid[i], "site");
        if (!cp_diff_find(ns, "site", l) && cp_ju(&bs->kid[i], "bytes_at_peak"))
            v[k++] = (cp_dsite){ l, cp_ju(&bs->kid[i], "bytes_at_peak"), 0 };
    }
    qsort(v, k, sizeof *v, cp_dsite_cmp);
    return k;
}

typedef struct cp_dstate {
    const cp_dopts *o;
    int changed;                /* something printed */
    int regressed;
    char gate_msg[512];
    cp_jb json;
} cp_dstate;

static void cp_diff_head(cp_dstate *st, const char *proc, uint64_t ordinal, int *said)
{
    if (*said || st->o->json)
        return;
    printf("%s, GPU %llu:\n", proc, (unsigned long long)ordinal);
    *said = 1;
    st->changed = 1;
}

static int cp_diff_over_gate(const cp_dopts *o, uint64_t base, uint64_t new_)
{
    if (!o->gate || new_ <= base)
        return 0;
    uint64_t d = new_ - base;
    if (o->gate == 2)
        return d > o->gate_bytes;
    return !base || 100.0 * (double)d > o->gate_pct * (double)base;
}

static void cp_diff_device(cp_dstate *st, const char *proc, const cp_jn *bd, const cp_jn *nd)
{
    const cp_dopts *o = st->o;
    uint64_t ord = cp_ju(nd ? nd : bd, "ordinal");
    uint64_t bp = bd ? cp_ju(bd, "peak_bytes") : 0, np = nd ? cp_ju(nd, "peak_bytes") : 0;
    uint64_t ba = bd ? cp_ju(bd, "allocations") : 0, na = nd ? cp_ju(nd, "allocations") : 0;
    uint64_t bb = bd ? cp_ju(bd, "blocked_ns") : 0, nb = nd ? cp_ju(nd, "blocked_ns") : 0;
    char b1[32], b2[32], b3[32], b4[32];
    int said = 0;
    cp_dsite *sites;
    size_t ns = cp_diff_site_changes(bd, nd, &sites);
    int64_t dp = (int64_t)(np - bp);
    if (o->json) {
        cp_jb *j = &st->json;
        if (bp == np && ba == na && !ns)
            goto gate;
        cp_jb_open(j, '{');
        cp_jb_ks(j, "process", proc);
        cp_jb_ku(j, "ordinal", ord);
        cp_jb_ku(j, "base_peak_bytes", bp);
        cp_jb_ku(j, "new_peak_bytes", np);
        cp_jb_ku(j, "base_allocations", ba);
        cp_jb_ku(j, "new_allocations", na);
        cp_jb_ku(j, "base_blocked_ns", bb);
        cp_jb_ku(j, "new_blocked_ns", nb);
        cp_jb_key(j, "sites");
        cp_jb_open(j, '[');
        for (size_t i = 0; i < ns && i < (size_t)o->top; i++) {
            cp_jb_open(j, '{');
            cp_jb_ks(j, "site", sites[i].label);
            cp_jb_ku(j, "base_bytes_at_peak", sites[i].base);
            cp_jb_ku(j, "new_bytes_at_peak", sites[i].new_);
            cp_jb_close(j, '}');
        }
        cp_jb_close(j, ']');
        cp_jb_close(j, '}');
        goto gate;
    }
    if (!bd || !nd) {
        cp_diff_head(st, proc, ord, &said);
        printf("  only in %s: peak %s\n", bd ? "BASE" : "NEW",
               cp_fmt_bytes(bd ? bp : np, b1, sizeof b1));
    } else if (bp != np) {
        cp_diff_head(st, proc, ord, &said);
        printf("  peak %s -> %s: %s (%s)\n", cp_fmt_bytes(bp, b1, sizeof b1),
               cp_fmt_bytes(np, b2, sizeof b2), cp_diff_signed(dp, b3, sizeof b3),
               cp_diff_pct(bp, dp, b4, sizeof b4));
    }
    for (size_t i = 0; i < ns && i < (size_t)o->top; i++) {
        cp_diff_head(st, proc, ord, &said);
        int64_t d = (int64_t)(sites[i].new_ - sites[i].base);
        printf("    %s held at the peak (%s -> %s) at %s\n", cp_diff_signed(d, b1, sizeof b1),
               cp_fmt_bytes(sites[i].base, b2, sizeof b2),
               cp_fmt_bytes(sites[i].new_, b3, sizeof b3), sites[i].label);
    }
    if (ns > (size_t)o->top)
        printf("    ... %zu more sites changed\n", ns - (size_t)o->top);
    if (bd && nd && ba != na) {
        cp_diff_head(st, proc, ord, &said);
        printf("  allocations %llu -> %llu (%+lld)\n", (unsigned long long)ba,
               (unsigned long long)na, (long long)(na - ba));
    }
    uint64_t dt = nb > bb ? nb - bb : bb - nb;
    if (bd && nd && dt >= CP_DIFF_NS && dt * 100 >= CP_DIFF_PCT * (bb > nb ? bb : nb)) {
        cp_diff_head(st, proc, ord, &said);
        printf("  blocked in synchronous copies %s -> %s\n", cp_fmt_ns(bb, b1, sizeof b1),
               cp_fmt_ns(nb, b2, sizeof b2));
    }
gate:
    if (!st->regressed && cp_diff_over_gate(o, bp, np)) {
        const char *at = "";
        for (size_t i = 0; i < ns && !*at; i++)
            if (sites[i].new_ > sites[i].base)
                at = sites[i].label;
        snprintf(st->gate_msg, sizeof st->gate_msg, "peak %s (%s)%s%s on GPU %llu of %s",
                 cp_diff_signed(dp, b1, sizeof b1), cp_diff_pct(bp, dp, b2, sizeof b2),
                 *at ? " at " : "", at, (unsigned long long)ord, proc);
        st->regressed = 1;
    }
    free(sites);
}

/* Each process of new against base's of the same key, then base's alone. */
static void cp_diff_procs(cp_dstate *st, const cp_dside *b, const cp_dside *n)
{
    const cp_jn *np = n->procs, *bp = b->procs;
    for (size_t i = 0; np && np->type == CP_J_ARR && i < np->n; i++) {
        const cp_jn *p = &np->kid[i];
        const char *key = cp_js(p, "key");
        const cp_jn *q = cp_diff_find(bp, "key", key);
        const cp_jn *devs = cp_jn_get(p, "devices");
        for (size_t k = 0; devs && devs->type == CP_J_ARR && k < devs->n; k++)
            cp_diff_device(st, key, cp_diff_dev(q, cp_ju(&devs->kid[k], "ordinal")),
                           &devs->kid[k]);
        const cp_jn *qd = q ? cp_jn_get(q, "devices") : NULL;
        for (size_t k = 0; qd && qd->type == CP_J_ARR && k < qd->n; k++)
            if (!cp_diff_dev(p, cp_ju(&qd->kid[k], "ordinal")))
                cp_diff_device(st, key, &qd->kid[k], NULL);
    }
    for (size_t i = 0; bp && bp->type == CP_J_ARR && i < bp->n; i++) {
        const cp_jn *q = &bp->kid[i];
        if (cp_diff_find(np, "key", cp_js(q, "key")))
            continue;
        const cp_jn *qd = cp_jn_get(q, "devices");
        for (size_t k = 0; qd && qd->type == CP_J_ARR && k < qd->n; k++)
            cp_diff_device(st, cp_js(q, "key"), &qd->kid[k], NULL);
    }
}

/* --- findings ------------------------------------------------------------------------- */

static int cp_diff_same_finding(const cp_jn *a, const cp_jn *b)
{
    static const char *const keys[] = { "check", "severity", "process", "site" };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(cp_js(a, keys[i]), cp_js(b, keys[i])) != 0)
            return 0;
    return 1;
}

/* Findings of `from` with no match in `other` (each match used once). */
static void cp_diff_findings_of(cp_dstate *st, const cp_jn *from, const cp_jn *other, char sign)
{
    size_t n = other && other->type == CP_J_ARR ? other->n : 0;
    unsigned char *used = calloc(n + 1, 1);
    if (!used)
        return;
    for (size_t i = 0; from && from->type == CP_J_ARR && i < from->n; i++) {
        const cp_jn *f = &from->kid[i];
        size_t k;
        for (k = 0; k < n && (used[k] || !cp_diff_same_finding(f, &other->kid[k])); k++)
            ;
        if (k < n) {
            used[k] = 1;
            continue;
        }
        const char *site = cp_js(f, "site");
        char b1[32];
        if (st->o->json) {
            cp_jb *j = &st->json;
            cp_jb_open(j, '{');
            cp_jb_ks(j, "change", sign == '+' ? "appeared" : "went away");
            cp_jb_ks(j, "check", cp_js(f, "check"));
            cp_jb_ks(j, "severity", cp_js(f, "severity"));
            cp_jb_ks(j, "process", cp_js(f, "process"));
            cp_jb_ks(j, "title", cp_js(f, "title"));
            cp_jb_ks(j, "site", *site ? site : NULL);
            cp_jb_ku(j, "site_bytes", cp_ju(f, "site_bytes"));
            cp_jb_close(j, '}');
            continue;
        }
        if (!st->changed || st->changed == 1)
            printf("%sfindings (+ only in NEW, - only in BASE):\n", st->changed ? "\n" : "");
        st->changed = 2;
        printf("  %c %s [%s] %s", sign, cp_js(f, "severity"), cp_js(f, "check"),
               cp_js(f, "title"));
        if (*cp_js(f, "process"))
            printf(" (%s)", cp_js(f, "process"));
        if (*site) {
            printf("\n      at %s", site);
            if (cp_ju(f, "site_bytes"))
                printf(": %s", cp_fmt_bytes(cp_ju(f, "site_bytes"), b1, sizeof b1));
        }
        putchar('\n');
    }
    free(used);
}

/* --- main ----------------------------------------------------------------------------- */

/* "10%", "2.5%", "512MiB", "2G", "1073741824". */
static int cp_diff_gate_parse(const char *v, cp_dopts *o)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || x < 0)
        return -1;
    if (strcmp(end, "%") == 0) {
        o->gate = 1;
        o->gate_pct = x;
        return 0;
    }
    static const struct { const char *s; double m; } u[] = {
        { "", 1 }, { "B", 1 }, { "K", 1024.0 }, { "KiB", 1024.0 }, { "M", 1048576.0 },
        { "MiB", 1048576.0 }, { "G", 1073741824.0 }, { "GiB", 1073741824.0 },
        { "T", 1099511627776.0 }, { "TiB", 1099511627776.0 },
    };
    for (size_t i = 0; i < sizeof u / sizeof *u; i++)
        if (strcmp(end, u[i].s) == 0) {
            o->gate = 2;
            o->gate_bytes = (uint64_t)(x * u[i].m);
            return 0;
        }
    return -1;
}

static void cp_diff_usage(FILE *o)
{
    fprintf(o,
            "usage: cuprobe diff [OPTIONS] BASE NEW\n"
            "  BASE, NEW: a trace, a directory (the traces of its last `cuprobe run`), a\n"
            "  report summary (report --summary) or a `cuprobe stats --json` document\n"
            "  prints what changed: peak memory per device and per call site (sites\n"
            "  matched by file:line and function), allocation counts, time blocked in\n"
            "  synchronous copies, findings that appeared or went away; nothing when\n"
            "  the runs agree\n"
            "  --fail-on-regression PCT%%|SIZE\n"
            "                      exit 3 when a device's peak grew by more than PCT\n"
            "                      percent or SIZE bytes (512MiB, 2GiB), saying where\n"
            "  --json              one JSON object (schema \"cuprobe-diff\")\n"
            "  --top N             changed sites listed per device (5)\n"
            "  --no-symbolize      show module+offset instead of function and line\n"
            "  --no-progress       never draw the progress bar\n"
            "Exit status: 0 ok, 3 --fail-on-regression matched, 2 usage error or an\n"
            "unreadable input.\n");
}

/* --fail-on-regression's value. */
static int cp_diff_gate(void *to, const char *who, const char *a, const char *v)
{
    if (v && cp_diff_gate_parse(v, to) == 0)
        return 0;
    fprintf(stderr, "%s: %s takes a percentage (10%%) or a size (512MiB, 2GiB), not '%s'\n",
            who, a, v ? v : "");
    return -1;
}

static int cp_diff_args(int argc, char **argv, cp_dopts *o)
{
    memset(o, 0, sizeof *o);
    o->top = 5;
    o->symbolize = 1;
    o->progress = 1;
    const cp_opt opts[] = {
        { "--json", NULL, CP_ARG_NONE, &o->json, 1, 0, NULL, "writes one JSON object", 0, 0,
          0, 0, NULL },
        { "--fail-on-regression", NULL, CP_ARG_FN, o, 0, 0, cp_diff_gate,
          "sets how much a peak may grow", 0, 0, 0, 0, NULL },
        { "--top", NULL, CP_ARG_INT, &o->top, 1, 100000, NULL,
          "sets the changed sites listed per device", 0, 0, 0, 0, NULL },
        CP_OPT_NO_SYMBOLIZE(&o->symbolize),
        CP_OPT_NO_PROGRESS(&o->progress),
    };
    const cp_optset set = { "diff", opts, sizeof opts / sizeof *opts, NULL, 0, 1,
                            cp_diff_usage };
    cp_optv v;
    int rc = cp_opts_read(&set, argc, argv, &v);
    if (rc > 0) {
        free(v.in);
        exit(0);
    }
    if (rc == 0 && v.n_in > 2) {
        fprintf(stderr, "diff: takes two runs, BASE and NEW ('%s' is a third)\n", v.in[2]);
        rc = -1;
    } else if (rc == 0 && v.n_in != 2) {
        cp_diff_usage(stderr);
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < 2; i++)
        o->in[i] = v.in[i];
    free(v.in);
    return rc;
}

int cp_diff_main(int argc, char **argv)
{
    cp_dopts o;
    if (cp_diff_args(argc, argv, &o) != 0)
        return 2;
    cp_dside side[2] = { { .path = o.in[0] }, { .path = o.in[1] } };
    int rc = 2;
    if (cp_diff_load(&side[0], &o) != 0 || cp_diff_load(&side[1], &o) != 0)
        goto out;
    cp_dstate st = { .o = &o };
    if (o.json) {
        cp_jb_open(&st.json, '{');
        cp_jb_ks(&st.json, "schema", "cuprobe-diff");
        cp_jb_ki(&st.json, "version", 1);
        cp_jb_key(&st.json, "devices");
        cp_jb_open(&st.json, '[');
    }
    cp_diff_procs(&st, &side[0], &side[1]);
    if (o.json) {
        cp_jb_close(&st.json, ']');
        cp_jb_key(&st.json, "findings");
        cp_jb_open(&st.json, '[');
    }
    /* A stats document has no findings: nothing to compare them with. */
    if (side[0].finds && side[1].finds) {
        cp_diff_findings_of(&st, side[1].finds, side[0].finds, '+');
        cp_diff_findings_of(&st, side[0].finds, side[1].finds, '-');
    }
    if (o.json) {
        cp_jb_close(&st.json, ']');
        cp_jb_ks(&st.json, "regression", st.regressed ? st.gate_msg : NULL);
        cp_jb_close(&st.json, '}');
        if (!st.json.oom)
            printf("%s\n", st.json.s);
        cp_jb_free(&st.json);
    }
    fflush(stdout);
    rc = 0;
    if (st.regressed) {
        fprintf(stderr, "diff: regression: %s\n", st.gate_msg);
        rc = 3;
    }
out:
    cp_jdoc_free(side[0].doc);
    cp_jdoc_free(side[1].doc);
    return rc;
}
