/*
 * render_html_util.c - what the parts of the HTML page share: escaping,
 * the legend's colours, the list of site labels the data block carries,
 * times as the page writes them.
 *
 * The colours are pairwise at least CIE76 dE 20 apart, marks included
 * (tests/sh/explore_check.py colors): no two of the legend read alike.
 */
#include <stdlib.h>

#include "render_html.h"
#include "cp_grow.h"

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

void cp_html_js_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&')
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

static const char *const cp_hd_color[CP_HD_N] = {
    "#1f77b4", "#9ecae9", "#9467bd", "#2ca02c", "#8c564b", "#7f7f7f",
};
static const char *const cp_cc_color[CP_CC_N] = { "#17becf", "#e377c2", "#bcbd22" };

const char *cp_html_holder_color(int h)
{
    return h >= 0 && h < CP_HD_N ? cp_hd_color[h] : "#000";
}

const char *cp_html_copy_color(int c)
{
    return c >= 0 && c < CP_CC_N ? cp_cc_color[c] : "#000";
}

const char *cp_html_when(const cp_html *h, uint64_t t, char *buf, size_t cap)
{
    double s = (double)(t > h->T0 ? t - h->T0 : 0) / 1e9;
    if (s >= 1 || s == 0)
        snprintf(buf, cap, "%.3f s", s);
    else if (s >= 1e-3)
        snprintf(buf, cap, "%.3f ms", s * 1e3);
    else
        snprintf(buf, cap, "%.1f µs", s * 1e6);
    return buf;
}

size_t cp_html_site(cp_html *h, const char *label)
{
    int created;
    size_t *v = cp_map_put(&h->site_ix, (uint64_t)(uintptr_t)label, &created);
    if (!v) {
        h->err = 1;
        return 0;
    }
    if (!created)
        return *v - 1;
    if (cp_grow((void **)&h->sites, &h->cap_sites, h->n_sites + 1, sizeof *h->sites, 64) != 0) {
        cp_map_del(&h->site_ix, (uint64_t)(uintptr_t)label, NULL);
        h->err = 1;
        return 0;
    }
    h->sites[h->n_sites] = label;
    *v = ++h->n_sites;
    return h->n_sites - 1;
}
