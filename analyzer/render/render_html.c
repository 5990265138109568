/*
 * render_html.c - `report --html FILE`: one self-contained page (no network
 * reference: styles, script and data are inline and the charts are inline
 * SVG, so it opens offline, prints, and tests can read its DOM).
 *
 * Per process that has something to draw, one memory chart per device that
 * held memory and a copy lane when it copied; the processes with nothing to
 * draw (shells, launchers, compile workers) share one line.  The script
 * (render_page_js.c) draws the charts from the data block
 * (render_html_data.c) in the window the user chose: each chart's memory
 * scale fits what its process held in that window, with the card's capacity
 * a line when it is near and a mark at the top when it is far; dragging
 * across a chart zooms every chart to that window, selecting a finding zooms
 * to its time, and the window and the finding are kept in the URL fragment.
 * Then the call-site tables and PyTorch's segments at OOMs
 * (render_html_sites.c) and the findings with the text report's content.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_series.h"
#include "render_html.h"
#include "cp_items.h"

static const char cp_css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;background:#fff}"
    "h1{font-size:20px}h2{font-size:17px;margin-top:28px}h3{font-size:15px;margin:14px 0 4px}"
    "svg.chart{display:block;width:100%;margin:2px 0;user-select:none;cursor:crosshair}"
    ".frame{fill:#fafafa;stroke:#ccc}.grid{stroke:#e4e4e4}"
    ".ax{font-size:10px;fill:#555}.ct{font-size:11px;fill:#333}"
    ".peak{fill:none;stroke:#333;stroke-width:.8}.cap{stroke:" CP_HTML_OOM_COLOR
    ";stroke-dasharray:5 3}.capoff{font-size:10px;fill:" CP_HTML_OOM_COLOR "}"
    ".blocked{fill:none;stroke:#000;stroke-width:1}.range{opacity:.85}"
    ".hl{fill:#1f77b4;opacity:.18;pointer-events:none}"
    ".sitehl{fill:#000;fill-opacity:.18;stroke:#000;stroke-width:1.2}"
    ".oom line{stroke:" CP_HTML_OOM_COLOR ";stroke-width:1.5}.oom path{fill:" CP_HTML_OOM_COLOR "}"
    ".cursor{stroke:#000;stroke-width:.5}.brush{fill:#1f77b4;opacity:.15}"
    ".legend span{display:inline-block;margin-right:14px;font-size:12px}"
    ".legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}"
    "#bar{position:sticky;top:0;background:#fff;padding:6px 0;border-bottom:1px solid #ddd;"
    "z-index:2;font-size:13px}#bar button{margin-left:8px}"
    "#tip{position:fixed;display:none;background:#fff;border:1px solid #999;padding:6px 8px;"
    "font-size:12px;max-width:520px;box-shadow:0 2px 6px #0003;pointer-events:none;z-index:3}"
    ".finding{border-left:4px solid #888;padding:4px 10px;margin:10px 0;cursor:pointer}"
    ".finding.error{border-color:" CP_HTML_OOM_COLOR "}.finding.warning{border-color:#e8a200}"
    ".finding.info{border-color:#1f77b4}.finding.selected{background:#eef5ff}"
    ".finding .sev{font-weight:bold;text-transform:uppercase;font-size:12px}"
    ".finding pre{white-space:pre-wrap;margin:4px 0;font-size:12.5px}"
    ".sites td{padding:0 8px 0 0;font-size:12.5px;vertical-align:top}"
    ".sites-table{border-collapse:collapse;font-size:12.5px;margin:4px 0 12px}"
    ".sites-table th{cursor:pointer;text-align:left;border-bottom:1px solid #999;padding:2px 8px;"
    "white-space:nowrap}.sites-table td{padding:1px 8px;border-bottom:1px solid #eee}"
    ".sites-table .num{text-align:right;white-space:nowrap}"
    ".sites-table tr.on td{background:#eef5ff}"
    "svg.segments{display:block;width:100%;max-width:1000px}.seg{fill:#f4f4f4;stroke:#999}"
    ".alloc{fill:#1f77b4}.hole{fill:#fff;stroke:" CP_HTML_OOM_COLOR ";stroke-width:.6}"
    ".sw{display:inline-block;width:11px;height:11px;vertical-align:-1px}"
    ".sw.alloc{background:#1f77b4}.sw.hole{background:#fff;border:1px solid "
    CP_HTML_OOM_COLOR "}.when{color:#666;font-size:12px}";

/* --- what the page draws --------------------------------------------------------------- */

static int cp_has_mem(const cp_proc *p, int d)
{
    const cp_ser_dev *v = cp_series_dev(p->series, d);
    for (int b = 0; v && b < cp_series_n(p->series); b++)
        if (v[b].max_held)
            return 1;
    return 0;
}

static int cp_has_copies(const cp_proc *p)
{
    const cp_series *s = p->series;
    for (int b = 0; b < cp_series_n(s); b++)
        if (s->b[b].copies[0] || s->b[b].copies[1] || s->b[b].copies[2] || s->b[b].blocked_ns)
            return 1;
    return 0;
}

/* The charts in page order (per process each device's memory, then its
 * copies), the processes with none, and the time axis they share. */
static int cp_html_layout(cp_html *h)
{
    cp_report *rep = h->rep;
    size_t cap = 0;
    uint64_t t1 = 0;
    h->T0 = UINT64_MAX;
    h->helper = calloc(rep->n_procs ? rep->n_procs : 1, 1);
    if (!h->helper)
        return -ENOMEM;
    for (size_t i = 0; i < rep->n_procs; i++) {
        const cp_proc *p = rep->procs[i];
        const cp_series *s = p->series;
        int n0 = h->n_chart;
        for (int d = 0; s && s->cur >= 0 && d <= s->n_dev; d++) {
            if (d < s->n_dev ? !cp_has_mem(p, d) : !cp_has_copies(p))
                continue;
            if ((size_t)h->n_chart == cap) {
                cap = cap ? 2 * cap : 16;
                cp_chart *c = realloc(h->chart, cap * sizeof *c);
                if (!c)
                    return -ENOMEM;
                h->chart = c;
            }
            h->chart[h->n_chart++] = (cp_chart){ (int)i, d < s->n_dev ? d : -1 };
        }
        h->helper[i] = h->n_chart == n0;
        if (h->n_chart == n0)
            continue;
        if (s->t0 < h->T0)
            h->T0 = s->t0;
        if (s->t_end > t1)
            t1 = s->t_end;
    }
    if (h->T0 == UINT64_MAX)
        h->T0 = 0;
    /* A window's times read as the run's: 12.5 s is 12.5 s after its start. */
    if (rep->windowed)
        h->T0 = rep->window.origin;
    h->span = t1 > h->T0 ? t1 - h->T0 : 1;
    return 0;
}

/* --- sections -------------------------------------------------------------------------- */

static void cp_html_legend(FILE *o)
{
    fprintf(o, "<div class=\"legend\">");
    for (int k = 0; k < CP_HD_N; k++)
        fprintf(o, "<span><i style=\"background:%s\"></i>%s</span>", cp_html_holder_color(k),
                cp_holder_name(k));
    fprintf(o, "<span><i style=\"background:%s\"></i>out of memory</span>"
               "<span><i style=\"background:%s\"></i>memory-growth</span>"
               "<span><i style=\"background:%s\"></i>fragmentation</span>",
            CP_HTML_OOM_COLOR, CP_HTML_GROWTH_COLOR, CP_HTML_FRAG_COLOR);
    for (int c = 0; c < CP_CC_N; c++)
        fprintf(o, "<span><i style=\"background:%s\"></i>%s copies</span>",
                cp_html_copy_color(c), cp_copy_class_name(c));
    fprintf(o, "</div>\n");
}

static void cp_html_charts(const cp_html *h)
{
    FILE *o = h->o;
    int tall = h->n_chart <= 4 ? 182 : 122;
    fprintf(o, "<div id=\"bar\">Window: <span id=\"win\">the whole run</span>"
               "<button id=\"whole\" type=\"button\">Whole run</button> <span class=\"when\">"
               "Drag across a chart to zoom every chart in; double-click one for the whole "
               "run. The address keeps the window.</span></div>\n<h2>Memory over time</h2>\n");
    cp_html_legend(o);
    int prev = -1;
    for (int k = 0; k < h->n_chart; k++) {
        const cp_chart *c = &h->chart[k];
        const cp_proc *p = h->rep->procs[c->proc];
        if (c->proc != prev) {
            fprintf(o, "<h3>");
            cp_html_esc(o, h->proc_label[c->proc]);
            fprintf(o, "</h3>\n");
            prev = c->proc;
        }
        int ht = c->dev >= 0 ? tall : 92;
        fprintf(o, "<svg class=\"chart %s\" id=\"chart-%d\" data-chart=\"%d\" data-proc=\"%d\" "
                   "data-dev=\"%d\" data-h=\"%d\" viewBox=\"0 0 960 %d\" height=\"%d\"",
                c->dev >= 0 ? "mem" : "copies", k, k, c->proc, c->dev, ht, ht, ht);
        if (c->dev >= 0)
            fprintf(o, " data-peak-bytes=\"%llu\" data-cap-bytes=\"%llu\"",
                    (unsigned long long)p->mem[c->dev].peak_total,
                    (unsigned long long)p->dev[c->dev].total_mem);
        fprintf(o, "></svg>\n");
    }
    if (!h->n_chart)
        fprintf(o, "<p class=\"when\">No process held device memory or copied.</p>\n");
    size_t n_help = 0;
    for (size_t i = 0; i < h->rep->n_procs; i++)
        n_help += h->helper[i];
    if (!n_help)
        return;
    fprintf(o, "<p class=\"helpers when\">%zu process%s with nothing to draw (no device memory "
               "held, no copies): ", n_help, n_help == 1 ? "" : "es");
    for (size_t i = 0, k = 0; i < h->rep->n_procs; i++)
        if (h->helper[i]) {
            fprintf(o, "%s", k++ ? "; " : "");
            cp_html_esc(o, h->proc_label[i]);
        }
    fprintf(o, ".</p>\n");
}

static void cp_html_lines(FILE *o, const cp_finding *f, const cp_out_opts *opt)
{
    size_t shown = 0;
    for (size_t k = 0; k < f->n_lines; k++)
        shown += opt->verbose || !cp_item_line(f->lines[k]);
    if (!shown)
        return;
    fprintf(o, "<pre>");
    for (size_t k = 0; k < f->n_lines; k++)
        if (opt->verbose || !cp_item_line(f->lines[k])) {
            cp_html_esc(o, f->lines[k]);
            fputc('\n', o);
        }
    fprintf(o, "</pre>");
}

static void cp_html_fsites(FILE *o, const cp_finding *f)
{
    char b1[32], b2[32];
    if (!f->n_sites)
        return;
    fprintf(o, "<table class=\"sites\">");
    size_t n = f->n_sites < 20 ? f->n_sites : 20;
    for (size_t k = 0; k < n; k++) {
        const cp_site *s = &f->sites[k];
        fprintf(o, "<tr><td>%llux</td><td>%s</td><td>%s</td><td>", (unsigned long long)s->count,
                s->bytes ? cp_fmt_bytes(s->bytes, b1, sizeof b1) : "",
                s->ns ? cp_fmt_ns(s->ns, b2, sizeof b2) : "");
        cp_html_esc(o, s->label);
        if (s->note) {
            fprintf(o, " [");
            cp_html_esc(o, s->note);
            fputc(']', o);
        }
        fprintf(o, "</td></tr>");
    }
    if (f->n_sites > n)
        fprintf(o, "<tr><td colspan=\"4\">... %zu more sites</td></tr>", f->n_sites - n);
    fprintf(o, "</table>");
}

static void cp_html_finding(const cp_html *h, size_t i)
{
    FILE *o = h->o;
    const cp_finding *f = h->rep->f[i];
    uint64_t a, b;
    int when = cp_finding_when(f, &a, &b);
    fprintf(o, "<div class=\"finding %s\" id=\"finding-%zu\" data-check=\"%s\"",
            cp_sev_name(f->sev), i, f->check->id);
    if (when)
        fprintf(o, " data-from=\"%.6f\" data-to=\"%.6f\"",
                (double)(a > h->T0 ? a - h->T0 : 0) / 1e9,
                (double)(b > h->T0 ? b - h->T0 : 0) / 1e9);
    fprintf(o, "><span class=\"sev\">%s</span> [%s] <b>", cp_sev_name(f->sev), f->check->id);
    cp_html_esc(o, f->title);
    fprintf(o, "</b>");
    if (f->proc) {
        char w1[32], w2[32];
        fprintf(o, "<div class=\"when\">");
        cp_html_esc(o, h->proc_label[f->proc->index]);
        if (when && b > a)
            fprintf(o, ", %s to %s", cp_html_when(h, a, w1, sizeof w1),
                    cp_html_when(h, b, w2, sizeof w2));
        else if (when)
            fprintf(o, ", from %s", cp_html_when(h, a, w1, sizeof w1));
        fprintf(o, "</div>");
    }
    if (!f->check->sites_first)
        cp_html_lines(o, f, h->opt);
    cp_html_fsites(o, f);
    if (f->check->sites_first)
        cp_html_lines(o, f, h->opt);
    if (!h->opt->brief) {
        fprintf(o, "<pre><b>Why:</b> ");
        cp_html_esc(o, cp_finding_why(f));
        fprintf(o, "\n<b>Fix:</b> ");
        cp_html_esc(o, cp_finding_fix(f));
        fprintf(o, "</pre>");
    }
    fprintf(o, "</div>\n");
}

static void cp_html_free(cp_html *h)
{
    for (size_t i = 0; h->proc_label && i < h->rep->n_procs; i++)
        free(h->proc_label[i]);
    free(h->proc_label);
    for (size_t i = 0; i < h->n_hl; i++)
        free(h->hl[i].v);
    free(h->hl);
    free(h->helper);
    free(h->chart);
    free(h->sites);
    cp_map_free(&h->site_ix);
}

int cp_out_html(FILE *o, cp_report *rep, const cp_out_opts *opt)
{
    int rc = -ENOMEM;
    cp_html h = { .o = o, .rep = rep, .opt = opt };
    cp_map_init(&h.site_ix, sizeof(size_t));
    h.proc_label = calloc(rep->n_procs ? rep->n_procs : 1, sizeof *h.proc_label);
    if (!h.proc_label || cp_html_layout(&h) != 0)
        goto out;
    for (size_t i = 0; i < rep->n_procs; i++) {
        char buf[256];
        h.proc_label[i] = strdup(cp_proc_label(rep->procs[i], buf, sizeof buf));
        if (!h.proc_label[i])
            goto out;
    }
    size_t n_sev[3] = { 0, 0, 0 };
    for (size_t i = 0; i < rep->n; i++)
        n_sev[rep->f[i]->sev]++;
    fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"viewport\" content=\"width=device-width\">"
               "<title>cuprobe report</title><style>%s</style></head>\n<body>\n", cp_css);
    fprintf(o, "<h1>cuprobe report: %zu trace%s</h1>\n<p>Findings: %zu error%s, %zu warning%s, "
               "%zu info. Hover a chart for what was held then and the largest live "
               "allocations; select a finding to zoom to its time.</p>\n",
            rep->n_procs, rep->n_procs == 1 ? "" : "s", n_sev[2], n_sev[2] == 1 ? "" : "s",
            n_sev[1], n_sev[1] == 1 ? "" : "s", n_sev[0]);
    if (rep->windowed) {
        char w[96];
        fprintf(o, "<p class=\"window\">window: %s (from the earliest process start); "
                   "the charts start from the memory held when it opens</p>\n",
                cp_window_say(&rep->window, w, sizeof w));
    }
    for (size_t i = 0; i < rep->n; i++)
        if (rep->f[i]->top) {
            fprintf(o, "<p><b>");
            cp_html_esc(o, rep->f[i]->title);
            fprintf(o, "</b></p>\n");
        }
    cp_html_charts(&h);
    cp_html_sites(&h);
    cp_html_segments(&h);
    fprintf(o, "<h2>Findings</h2>\n");
    for (size_t i = 0; i < rep->n; i++)
        cp_html_finding(&h, i);
    if (!rep->n)
        fprintf(o, "<p>No problems found.</p>\n");
    fprintf(o, "<div id=\"tip\"></div>\n");
    cp_html_data(&h);
    fprintf(o, "<script>%s</script>\n</body></html>\n", cp_page_js);
    rc = h.err ? -ENOMEM : ferror(o) ? -EIO : 0;
out:
    cp_html_free(&h);
    return rc;
}
