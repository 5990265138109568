/*
 * render_html_sites.c - the page's call-site tables, as heaptrack shows
 * them, and PyTorch's segments at an OOM, as memory_viz draws them.
 *
 * A memory chart's table lists the sites among the CP_HTML_ROWS that held
 * the most at the device's peak, allocated most often or made the most
 * temporary allocations, and those that held the most at each OOM of the
 * device; each row has every column, so sorting by any of them (the
 * script) compares like with like.  A row's timeline (its sites' most held
 * per bucket, summed over the stacks that share its label) goes to the data
 * block for the script's highlight.
 */
#include <stdlib.h>
#include <string.h>

#include "render_html.h"
#include "cp_grow.h"

#define CP_HTML_ROWS 10         /* rows per ranking */
#define CP_HTML_SEG_W 1000.0    /* the segments picture's width in SVG units */

static int cp_hs_cmp_peak(const void *a, const void *b)
{
    const cp_lg_row *x = *(const cp_lg_row *const *)a, *y = *(const cp_lg_row *const *)b;
    if (x->at_peak != y->at_peak)
        return x->at_peak > y->at_peak ? -1 : 1;
    if (x->n_alloc != y->n_alloc)
        return x->n_alloc > y->n_alloc ? -1 : 1;
    return strcmp(x->label, y->label);
}

static int cp_hs_cmp_alloc(const void *a, const void *b)
{
    const cp_lg_row *x = *(const cp_lg_row *const *)a, *y = *(const cp_lg_row *const *)b;
    return x->n_alloc != y->n_alloc ? (x->n_alloc > y->n_alloc ? -1 : 1)
                                     : strcmp(x->label, y->label);
}

static int cp_hs_cmp_temp(const void *a, const void *b)
{
    const cp_lg_row *x = *(const cp_lg_row *const *)a, *y = *(const cp_lg_row *const *)b;
    return x->n_temp != y->n_temp ? (x->n_temp > y->n_temp ? -1 : 1)
                                   : strcmp(x->label, y->label);
}

/* Mark the first CP_HTML_ROWS of rows[] (sorted by cmp, a non-zero value
 * by val) as shown. */
static void cp_hs_pick(const cp_lg_row **ord, size_t n, int (*cmp)(const void *, const void *),
                       int key, const cp_lg_row *base, unsigned char *show)
{
    if (cmp)
        qsort(ord, n, sizeof *ord, cmp);
    for (size_t i = 0; i < n && i < CP_HTML_ROWS; i++) {
        const cp_lg_row *r = ord[i];
        uint64_t v = key == 0 ? r->at_peak : key == 1 ? r->n_alloc : r->n_temp;
        if (v)
            show[r - base] = 1;
    }
}

/* The bytes the OOM o attributes to label. */
static uint64_t cp_hs_oom_bytes(cp_proc *p, const cp_lg_oom *o, const char *label)
{
    uint64_t sum = 0;
    for (int k = 0; k < o->n_top; k++)
        if (cp_site_label(&p->stacks, o->top[k].stack) == label)
            sum += o->top[k].bytes;
    return sum;
}

/* The timeline of row r (label) on device d: its stacks' summed. */
static void cp_hs_timeline(cp_html *h, int chart, cp_proc *p, int d, const char *label,
                           size_t site)
{
    const cp_ledger *lg = p->ledger;
    int n = cp_series_n(p->series);
    uint64_t *v = NULL;
    for (size_t i = 0; i < lg->n_site; i++) {
        const cp_lg_site *s = &lg->site[i];
        const uint64_t *ser = s->dev == d ? cp_ledger_series(lg, s) : NULL;
        if (!ser || cp_site_label(&p->stacks, s->stack) != label)
            continue;
        if (!v && !(v = calloc((size_t)n, sizeof *v))) {
            h->err = 1;
            return;
        }
        for (int b = 0; b < n; b++)
            v[b] += ser[b];
    }
    if (!v)
        return;
    if (cp_grow((void **)&h->hl, &h->cap_hl, h->n_hl + 1, sizeof *h->hl, 16) != 0) {
        free(v);
        h->err = 1;
        return;
    }
    h->hl[h->n_hl++] = (cp_html_hl){ chart, site, v };
}

static void cp_hs_num(FILE *o, uint64_t v, int bytes)
{
    char b[32];
    fprintf(o, "<td class=\"num\" data-v=\"%llu\">%s</td>", (unsigned long long)v,
            bytes ? cp_fmt_bytes(v, b, sizeof b) : (snprintf(b, sizeof b, "%llu",
                                                             (unsigned long long)v), b));
}

static void cp_hs_table(cp_html *h, int chart, cp_proc *p, int d)
{
    FILE *o = h->o;
    const cp_ledger *lg = p->ledger;
    cp_lg_row *rows;
    /* The sites that allocated (key 1), and in a window (cp_window.h) every
     * one that held memory (key 3): a site may hold what it allocated
     * before the window opened. */
    size_t n = cp_ledger_rows(p, d, p->win_from ? 3 : 1, (size_t)-1, &rows);
    const cp_lg_row **ord = n ? malloc(n * sizeof *ord) : NULL;
    unsigned char *show = n ? calloc(n, 1) : NULL;
    if (!n || !ord || !show)
        goto out;
    for (size_t i = 0; i < n; i++)
        ord[i] = &rows[i];
    cp_hs_pick(ord, n, cp_hs_cmp_alloc, 1, rows, show);
    cp_hs_pick(ord, n, cp_hs_cmp_temp, 2, rows, show);
    cp_hs_pick(ord, n, cp_hs_cmp_peak, 0, rows, show);  /* and stay by the peak */
    const cp_lg_oom *ooms[CP_LG_OOMS];
    int n_oom = 0;
    for (int i = 0; i < lg->n_oom; i++)
        if (lg->oom[i].dev == d)
            ooms[n_oom++] = &lg->oom[i];
    for (int k = 0; k < n_oom; k++)
        for (size_t i = 0; i < n; i++)
            if (cp_hs_oom_bytes(p, ooms[k], rows[i].label))
                show[i] = 1;
    char dn[192], w[32];
    fprintf(o, "<h3>");
    cp_html_esc(o, h->proc_label[p->index]);
    fprintf(o, ", %s: call sites</h3>\n<table class=\"sites-table\" data-chart=\"%d\">"
               "<thead><tr><th data-k=\"s\">Site</th><th class=\"num\">Held at peak</th>"
               "<th class=\"num\">Allocations</th><th class=\"num\">Allocated</th>"
               "<th class=\"num\">Temporary</th>", cp_dev_name(p, d, dn, sizeof dn), chart);
    for (int k = 0; k < n_oom; k++)
        fprintf(o, "<th class=\"num\">At OOM %d (%s)</th>", k + 1,
                cp_html_when(h, ooms[k]->ts, w, sizeof w));
    fprintf(o, "</tr></thead><tbody>\n");
    for (size_t j = 0; j < n; j++) {
        const cp_lg_row *r = ord[j];
        if (!show[r - rows])
            continue;
        size_t site = cp_html_site(h, r->label);
        fprintf(o, "<tr data-site=\"%zu\"><td>", site);
        cp_html_esc(o, r->label);
        fprintf(o, "</td>");
        cp_hs_num(o, r->at_peak, 1);
        cp_hs_num(o, r->n_alloc, 0);
        cp_hs_num(o, r->alloc_bytes, 1);
        cp_hs_num(o, r->n_temp, 0);
        for (int k = 0; k < n_oom; k++)
            cp_hs_num(o, cp_hs_oom_bytes(p, ooms[k], r->label), 1);
        fprintf(o, "</tr>\n");
        cp_hs_timeline(h, chart, p, d, r->label, site);
    }
    fprintf(o, "</tbody></table>\n");
out:
    free(show);
    free(ord);
    free(rows);
}

void cp_html_sites(cp_html *h)
{
    int any = 0;
    for (int k = 0; k < h->n_chart; k++) {
        cp_proc *p = h->rep->procs[h->chart[k].proc];
        if (h->chart[k].dev < 0 || !p->ledger || !p->ledger->n_site)
            continue;
        if (!any)
            fprintf(h->o, "<h2>Call sites</h2>\n<p class=\"when\">Per device: "
                       "the sites that held the most at its peak, allocated most often, made "
                       "the most temporary allocations (freed with no other allocation or free "
                       "in between) and held the most at each out-of-memory error. Click a "
                       "heading to sort; hover a row to see that site's memory on its chart."
                       "</p>\n");
        any = 1;
        cp_hs_table(h, k, p, h->chart[k].dev);
    }
}

/* --- segments ----------------------------------------------------------------------------- */

static void cp_hs_segs(cp_html *h, cp_proc *p, const cp_lg_oom *oom)
{
    FILE *o = h->o;
    char b1[32], b2[32], b3[32], at[32];
    uint64_t big = 1;
    for (int i = 0; i < oom->n_seg; i++)
        if (oom->seg[i].total > big)
            big = oom->seg[i].total;
    double row = 16, lw = 250, bw = CP_HTML_SEG_W - lw - 10, ht = row * oom->n_seg + 4;
    fprintf(o, "<h3>");
    cp_html_esc(o, h->proc_label[p->index]);
    fprintf(o, ", GPU %d: PyTorch's segments at the OOM at %s (request %s)</h3>\n"
               "<p class=\"when\">%d segment%s%s; each bar is a segment, its length its size; "
               "<span class=\"sw alloc\"></span> allocated, <span class=\"sw hole\"></span> "
               "each free block. Where in a segment a block lies is not recorded: the "
               "allocated bytes are drawn together, then the free blocks in address order."
               "</p>\n<svg class=\"segments\" viewBox=\"0 0 %.0f %.0f\">",
            oom->dev, cp_html_when(h, oom->ts, at, sizeof at),
            cp_fmt_bytes(oom->request, b1, sizeof b1), oom->n_seg_all,
            oom->n_seg_all == 1 ? "" : "s",
            oom->n_seg < oom->n_seg_all ? " (the largest shown)" : "", CP_HTML_SEG_W, ht);
    for (int i = 0; i < oom->n_seg; i++) {
        const cp_lg_seg *g = &oom->seg[i];
        double y = 2 + row * i, w = bw * (double)g->total / (double)big;
        uint64_t free_sum = g->total > g->allocated ? g->total - g->allocated : 0;
        fprintf(o, "<g><title>segment 0x%llx: %s, %s allocated, %u free block%s (%s)</title>"
                   "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">0x%llx  %s</text>"
                   "<rect class=\"seg\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                (unsigned long long)g->address, cp_fmt_bytes(g->total, b1, sizeof b1),
                cp_fmt_bytes(g->allocated, b2, sizeof b2), g->n_free_all,
                g->n_free_all == 1 ? "" : "s", cp_fmt_bytes(free_sum, b3, sizeof b3),
                lw - 6, y + row - 5, (unsigned long long)g->address,
                cp_fmt_bytes(g->total, b1, sizeof b1), lw, y, w, row - 3);
        double x = lw, aw = w * (double)g->allocated / (double)(g->total ? g->total : 1);
        fprintf(o, "<rect class=\"alloc\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
                x, y, aw, row - 3);
        x += aw;
        for (uint32_t k = 0; k < g->n_free; k++) {
            double fw = w * (double)g->free[k] / (double)(g->total ? g->total : 1);
            fprintf(o, "<rect class=\"hole\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%.1f\"/>", x, y, fw, row - 3);
            x += fw;
        }
        fprintf(o, "</g>");
    }
    fprintf(o, "</svg>\n");
}

void cp_html_segments(cp_html *h)
{
    int any = 0;
    for (size_t i = 0; i < h->rep->n_procs; i++) {
        cp_proc *p = h->rep->procs[i];
        for (int k = 0; p->ledger && k < p->ledger->n_oom; k++) {
            const cp_lg_oom *oom = &p->ledger->oom[k];
            if (!oom->seg || !oom->n_seg)
                continue;
            if (!any)
                fprintf(h->o, "<h2>Segments at out-of-memory errors</h2>\n");
            any = 1;
            cp_hs_segs(h, p, oom);
        }
    }
}
