/*
 * render_svg.c - the timeline charts of the HTML report (render_html.c):
 * per process and device, memory held stacked by holder with the capacity,
 * OOM marks and the shaded ranges of memory-growth and fragmentation
 * findings; per process, the copy lane.  Everything is drawn from the
 * model's bucketed series (cp_series.h), so a chart has at most CP_SER_N
 * steps whatever the trace's length.  Charts of every process share one
 * time axis and one memory scale, so ranks compare at a glance.
 */
#include <stdio.h>
#include <string.h>

#include "cp_series.h"
#include "render_html.h"

#define W 960.0             /* chart width in px */
#define PADL 70.0           /* left margin for the axis labels */

/* Text escaping lives with the charts, the lowest of the two files: the
 * page (render_html.c) draws its charts through this file, never back. */
void cp_html_esc(FILE *o, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", o); break;
        case '<': fputs("&lt;", o); break;
        case '>': fputs("&gt;", o); break;
        case '"': fputs("&quot;", o); break;
        case '\'': fputs("&#39;", o); break;
        default: fputc(*s, o);
        }
    }
}

static const char *const cp_hd_color[CP_HD_N] = {
    "#4e79a7", "#a0cbe8", "#f28e2b", "#59a14f", "#b07aa1", "#9c9c9c",
};
static const char *const cp_cc_color[CP_CC_N] = { "#4e79a7", "#e15759", "#76b7b2" };

const char *cp_html_holder_color(int h)
{
    return h >= 0 && h < CP_HD_N ? cp_hd_color[h] : "#000";
}

const char *cp_html_copy_color(int c)
{
    return c >= 0 && c < CP_CC_N ? cp_cc_color[c] : "#000";
}

/* x of absolute time t. */
static double cp_x(const cp_html *h, uint64_t t)
{
    double f = h->span ? (double)(t > h->T0 ? t - h->T0 : 0) / (double)h->span : 0;
    if (f > 1)
        f = 1;
    return PADL + f * (W - PADL);
}

static uint64_t cp_bucket_t(const cp_series *s, int i)
{
    uint64_t t = s->t0 + (uint64_t)i * s->width;
    return t > s->t_end ? s->t_end : t;
}

/* The y of value v (0 at the bottom) in a chart of height ht over scale. */
static double cp_y(double v, double scale, double top, double ht)
{
    double f = scale > 0 ? v / scale : 0;
    if (f > 1)
        f = 1;
    return top + ht - f * ht;
}

static void cp_axis(const cp_html *h, double top, double ht, const char *label_top,
                    const char *title)
{
    FILE *o = h->o;
    fprintf(o, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
            PADL, top, W - PADL, ht);
    fprintf(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", PADL - 4, top + 10);
    cp_html_esc(o, label_top);
    fprintf(o, "</text><text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">0</text>",
            PADL - 4, top + ht);
    fprintf(o, "<text class=\"ct\" x=\"%.1f\" y=\"%.1f\">", PADL, top - 4);
    cp_html_esc(o, title);
    fprintf(o, "</text>");
}

/* Time ranges of the findings about p.  shade: the tint of memory-growth
 * and fragmentation, drawn before the stacked areas so that it never washes
 * out their colours (over them, the holders' blues turned grey); else every
 * ranged finding's hidden highlight, on top, shown when it is selected. */
static void cp_ranges(const cp_html *h, const cp_proc *p, double top, double ht, int shade)
{
    FILE *o = h->o;
    for (size_t i = 0; i < h->rep->n; i++) {
        const cp_finding *f = h->rep->f[i];
        if ((f->proc && f->proc != p) || (!f->t_from && !f->t_to))
            continue;
        double x0 = cp_x(h, f->t_from), x1 = cp_x(h, f->t_to);
        if (x1 - x0 < 2) {
            x0 -= 1;
            x1 = x0 + 2;
        }
        const char *id = f->check->id;
        if (!shade)
            fprintf(o, "<rect class=\"hl\" data-for=\"finding-%zu\" x=\"%.1f\" y=\"%.1f\" "
                       "width=\"%.1f\" height=\"%.1f\"/>", i, x0, top, x1 - x0, ht);
        else if (strcmp(id, "memory-growth") == 0 || strcmp(id, "fragmentation") == 0)
            fprintf(o, "<rect class=\"range %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%.1f\"><title>%s</title></rect>",
                    id, x0, top, x1 - x0, ht, id);
    }
}

/* The polygon of one holder: its cumulative top along the buckets, back
 * along the cumulative bottom. */
static void cp_layer(const cp_html *h, const cp_series *s, const cp_ser_dev *v, int n, int hd,
                     double top, double ht)
{
    FILE *o = h->o;
    int any = 0;
    for (int i = 0; i < n && !any; i++)
        any = v[i].used && v[i].hold[hd] > 0;
    if (!any)
        return;
    double sc = (double)h->yscale;
    fprintf(o, "<path class=\"area\" fill=\"%s\" d=\"", cp_hd_color[hd]);
    for (int i = 0; i < n; i++) {
        double cum = 0;
        for (int k = 0; k <= hd; k++)
            cum += (double)v[i].hold[k];
        double y = cp_y(cum, sc, top, ht);
        fprintf(o, "%c%.1f %.1fH%.1f", i ? 'L' : 'M', cp_x(h, cp_bucket_t(s, i)), y,
                cp_x(h, cp_bucket_t(s, i + 1)));
    }
    for (int i = n - 1; i >= 0; i--) {
        double cum = 0;
        for (int k = 0; k < hd; k++)
            cum += (double)v[i].hold[k];
        fprintf(o, "L%.1f %.1fH%.1f", cp_x(h, cp_bucket_t(s, i + 1)), cp_y(cum, sc, top, ht),
                cp_x(h, cp_bucket_t(s, i)));
    }
    fprintf(o, "Z\"/>");
}

void cp_svg_memory(const cp_html *h, const cp_proc *p, int d, int chart, double ht)
{
    FILE *o = h->o;
    const cp_series *s = p->series;
    const cp_ser_dev *v = cp_series_dev(s, d);
    int n = cp_series_n(s);
    double top = 16;
    char b1[32], b2[32], title[384], dn[192];
    fprintf(o, "<svg class=\"chart mem\" id=\"chart-%d\" data-chart=\"%d\" width=\"%.0f\" "
               "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">",
            chart, chart, W, ht + 34, W, ht + 34);
    uint64_t cap = p->dev[d].total_mem;
    snprintf(title, sizeof title, "%s, %s: peak %s%s%s", h->proc_label[p->index],
             cp_dev_name(p, d, dn, sizeof dn), cp_fmt_bytes(p->mem[d].peak_total, b1, sizeof b1),
             cap ? " of " : "", cap ? cp_fmt_bytes(cap, b2, sizeof b2) : "");
    cp_axis(h, top, ht, cp_fmt_bytes(h->yscale, b1, sizeof b1), title);
    cp_ranges(h, p, top, ht, 1);
    for (int hd = 0; hd < CP_HD_N; hd++)
        cp_layer(h, s, v, n, hd, top, ht);
    /* The most held in each bucket, as a line over the stack. */
    fprintf(o, "<path class=\"peak\" d=\"");
    for (int i = 0; i < n; i++)
        fprintf(o, "%c%.1f %.1fH%.1f", i ? 'L' : 'M', cp_x(h, cp_bucket_t(s, i)),
                cp_y((double)v[i].max_held, (double)h->yscale, top, ht),
                cp_x(h, cp_bucket_t(s, i + 1)));
    fprintf(o, "\"/>");
    if (cap && cap <= h->yscale) {
        double y = cp_y((double)cap, (double)h->yscale, top, ht);
        fprintf(o, "<line class=\"cap\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">capacity</text>",
                PADL, W, y, y, W - 4, y + 11);
    }
    cp_ranges(h, p, top, ht, 0);
    for (int i = 0; i < s->n_oom; i++) {
        if (s->oom[i].dev != d)
            continue;
        double x = cp_x(h, s->oom[i].ts);
        fprintf(o, "<g class=\"oom\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                   "<path d=\"M%.1f %.1fl-5 -8h10z\"/><title>out of memory: %s requested"
                   "</title></g>", x, x, top, top + ht, x, top + 9.0,
                cp_fmt_bytes(s->oom[i].request, b1, sizeof b1));
    }
    /* The hover cursor (moved by the script). */
    fprintf(o, "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"%.1f\" y2=\"%.1f\"/>", top,
            top + ht);
    fprintf(o, "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\">0 s</text>"
               "<text class=\"ax\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3f s</text>",
            PADL, top + ht + 14, W, top + ht + 14, (double)h->span / 1e9);
    fprintf(o, "</svg>\n");
}

void cp_svg_copies(const cp_html *h, const cp_proc *p, int chart, double ht)
{
    FILE *o = h->o;
    const cp_series *s = p->series;
    int n = cp_series_n(s);
    double top = 16, secs = (double)s->width / 1e9;
    char lab[64], title[320];
    fprintf(o, "<svg class=\"chart copies\" id=\"chart-%d\" data-chart=\"%d\" width=\"%.0f\" "
               "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">",
            chart, chart, W, ht + 20, W, ht + 20);
    snprintf(lab, sizeof lab, "%.0f/s", h->cscale);
    snprintf(title, sizeof title, "%s: copies per second (pinned, pageable, peer); black: "
             "share of time blocked in synchronous copies", h->proc_label[p->index]);
    cp_axis(h, top, ht, lab, title);
    cp_ranges(h, p, top, ht, 1);
    for (int i = 0; i < n; i++) {
        double x0 = cp_x(h, cp_bucket_t(s, i)), x1 = cp_x(h, cp_bucket_t(s, i + 1));
        double cum = 0;
        for (int c = 0; c < CP_CC_N; c++) {
            if (!s->b[i].copies[c])
                continue;
            double rate = (double)s->b[i].copies[c] / secs;
            double y0 = cp_y(cum, h->cscale, top, ht), y1 = cp_y(cum + rate, h->cscale, top, ht);
            fprintf(o, "<rect class=\"bar\" fill=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%.1f\"/>", cp_cc_color[c], x0, y1,
                    x1 - x0 > 0.3 ? x1 - x0 : 0.3, y0 - y1);
            cum += rate;
        }
    }
    fprintf(o, "<path class=\"blocked\" d=\"");
    for (int i = 0; i < n; i++) {
        double frac = (double)s->b[i].blocked_ns / (double)s->width;
        fprintf(o, "%c%.1f %.1fH%.1f", i ? 'L' : 'M', cp_x(h, cp_bucket_t(s, i)),
                cp_y(frac, 1.0, top, ht), cp_x(h, cp_bucket_t(s, i + 1)));
    }
    fprintf(o, "\"/>");
    cp_ranges(h, p, top, ht, 0);
    fprintf(o, "<line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"%.1f\" y2=\"%.1f\"/>", top,
            top + ht);
    fprintf(o, "</svg>\n");
}

double cp_svg_x_origin(void)
{
    return PADL;
}

double cp_svg_width(void)
{
    return W;
}
