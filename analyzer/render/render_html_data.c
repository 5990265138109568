/*
 * render_html_data.c - the page's data block: per chart the model's
 * buckets (cp_series.h: at most CP_SER_N whatever the trace's length), the
 * capacity, the peak, OOM marks and the timelines of the sites its table
 * lists; the findings' times; the site labels.  Times are seconds from the
 * page's start, sizes bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "render_html.h"

static double cp_hd_secs(const cp_html *h, uint64_t t)
{
    return (double)(t > h->T0 ? t - h->T0 : 0) / 1e9;
}

static void cp_hd_mem(cp_html *h, int k, cp_proc *p, int d)
{
    FILE *o = h->o;
    const cp_series *s = p->series;
    const cp_ser_dev *v = cp_series_dev(s, d);
    int n = cp_series_n(s);
    fprintf(o, ",\"max\":[");
    for (int b = 0; b < n; b++)
        fprintf(o, "%s%llu", b ? "," : "", (unsigned long long)v[b].max_held);
    fprintf(o, "],\"hold\":[");
    for (int b = 0; b < n; b++) {
        fprintf(o, "%s[", b ? "," : "");
        for (int j = 0; j < CP_HD_N; j++)
            fprintf(o, "%s%llu", j ? "," : "", (unsigned long long)v[b].hold[j]);
        fputc(']', o);
    }
    fprintf(o, "],\"top\":[");
    for (int b = 0; b < n; b++) {
        fprintf(o, "%s[", b ? "," : "");
        for (int j = 0; j < v[b].n_top; j++)
            fprintf(o, "%s[%llu,%zu]", j ? "," : "", (unsigned long long)v[b].top[j].size,
                    cp_html_site(h, cp_site_label(&p->stacks, v[b].top[j].stack)));
        fputc(']', o);
    }
    fprintf(o, "],\"cap\":%llu,\"peak\":%llu,\"ooms\":[", (unsigned long long)p->dev[d].total_mem,
            (unsigned long long)p->mem[d].peak_total);
    int first = 1;
    for (int i = 0; i < s->n_oom; i++)
        if (s->oom[i].dev == d) {
            fprintf(o, "%s[%.9f,%llu]", first ? "" : ",", cp_hd_secs(h, s->oom[i].ts),
                    (unsigned long long)s->oom[i].request);
            first = 0;
        }
    fprintf(o, "],\"ss\":{");
    first = 1;
    for (size_t i = 0; i < h->n_hl; i++) {
        if (h->hl[i].chart != k)
            continue;
        fprintf(o, "%s\"%zu\":[", first ? "" : ",", h->hl[i].site);
        for (int b = 0; b < n; b++)
            fprintf(o, "%s%llu", b ? "," : "", (unsigned long long)h->hl[i].v[b]);
        fputc(']', o);
        first = 0;
    }
    fputc('}', o);
}

static void cp_hd_copies(cp_html *h, const cp_proc *p)
{
    FILE *o = h->o;
    const cp_series *s = p->series;
    int n = cp_series_n(s);
    fprintf(o, ",\"copies\":[");
    for (int b = 0; b < n; b++) {
        fprintf(o, "%s[", b ? "," : "");
        for (int c = 0; c < CP_CC_N; c++)
            fprintf(o, "%s%llu", c ? "," : "", (unsigned long long)s->b[b].copies[c]);
        fputc(']', o);
    }
    fprintf(o, "],\"blocked\":[");
    for (int b = 0; b < n; b++)
        fprintf(o, "%s%llu", b ? "," : "", (unsigned long long)s->b[b].blocked_ns);
    fputc(']', o);
}

static void cp_hd_chart(cp_html *h, int k)
{
    FILE *o = h->o;
    cp_proc *p = h->rep->procs[h->chart[k].proc];
    const cp_series *s = p->series;
    int d = h->chart[k].dev;
    char b1[32], b2[32], title[512];
    /* The process is the heading's; the device by ordinal and name (its
     * identity is in the environment section). */
    if (d >= 0)
        snprintf(title, sizeof title, "GPU %d%s%s%s: peak %s%s%s", d,
                 p->dev[d].seen ? " (" : "", p->dev[d].seen ? p->dev[d].name : "",
                 p->dev[d].seen ? ")" : "", cp_fmt_bytes(p->mem[d].peak_total, b1, sizeof b1),
                 p->dev[d].total_mem ? " of " : "",
                 p->dev[d].total_mem ? cp_fmt_bytes(p->dev[d].total_mem, b2, sizeof b2) : "");
    else
        snprintf(title, sizeof title, "copies per second (pinned, pageable, peer); black: share "
                 "of time blocked in synchronous copies");
    fprintf(o, "%s{\"kind\":\"%s\",\"proc\":%d,\"dev\":%d,\"label\":", k ? ",\n" : "",
            d >= 0 ? "mem" : "copies", p->index, d);
    cp_html_js_str(o, h->proc_label[p->index]);
    fprintf(o, ",\"title\":");
    cp_html_js_str(o, title);
    fprintf(o, ",\"t0\":%.9f,\"w\":%.9f,\"n\":%d", cp_hd_secs(h, s->t0), (double)s->width / 1e9,
            cp_series_n(s));
    if (d >= 0)
        cp_hd_mem(h, k, p, d);
    else
        cp_hd_copies(h, p);
    fputc('}', o);
}

/* Every finding with a time: its range, or its first site's first record. */
static void cp_hd_findings(cp_html *h)
{
    FILE *o = h->o;
    int first = 1;
    fprintf(o, "],\n\"findings\":[");
    for (size_t i = 0; i < h->rep->n; i++) {
        const cp_finding *f = h->rep->f[i];
        uint64_t a, b;
        if (!cp_finding_when(f, &a, &b))
            continue;
        fprintf(o, "%s{\"id\":\"finding-%zu\",\"check\":\"%s\",\"proc\":%d,\"from\":%.9f,"
                "\"to\":%.9f}", first ? "" : ",", i, f->check->id, f->proc ? f->proc->index : -1,
                cp_hd_secs(h, a), cp_hd_secs(h, b));
        first = 0;
    }
}

void cp_html_data(cp_html *h)
{
    FILE *o = h->o;
    fprintf(o, "<script type=\"application/json\" id=\"cp-data\">{\"span\":%.9f,",
            (double)h->span / 1e9);
    if (h->rep->windowed)
        fprintf(o, "\"start\":%.9f,", (double)h->rep->window.since / 1e9);
    fprintf(o, "\"holders\":[");
    for (int k = 0; k < CP_HD_N; k++) {
        fprintf(o, "%s", k ? "," : "");
        cp_html_js_str(o, cp_holder_name(k));
    }
    fprintf(o, "],\"hcolors\":[");
    for (int k = 0; k < CP_HD_N; k++)
        fprintf(o, "%s\"%s\"", k ? "," : "", cp_html_holder_color(k));
    fprintf(o, "],\"classes\":[");
    for (int c = 0; c < CP_CC_N; c++)
        fprintf(o, "%s\"%s\"", c ? "," : "", cp_copy_class_name(c));
    fprintf(o, "],\"ccolors\":[");
    for (int c = 0; c < CP_CC_N; c++)
        fprintf(o, "%s\"%s\"", c ? "," : "", cp_html_copy_color(c));
    fprintf(o, "],\"marks\":{\"oom\":\"%s\",\"memory-growth\":\"%s\",\"fragmentation\":\"%s\"},"
               "\n\"charts\":[", CP_HTML_OOM_COLOR, CP_HTML_GROWTH_COLOR, CP_HTML_FRAG_COLOR);
    for (int k = 0; k < h->n_chart; k++)
        cp_hd_chart(h, k);
    cp_hd_findings(h);
    fprintf(o, "],\n\"sites\":[");
    for (size_t i = 0; i < h->n_sites; i++) {
        if (i)
            fputc(',', o);
        cp_html_js_str(o, h->sites[i]);
    }
    fprintf(o, "]}</script>\n");
}
