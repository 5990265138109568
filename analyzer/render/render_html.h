/*
 * render_html.h - the self-contained HTML report: the page and its
 * sections (render_html.c), the call-site tables and PyTorch's segments at
 * an OOM (render_html_sites.c), the data the page's script draws from
 * (render_html_data.c), the script itself (render_page_js.c) and the
 * escaping and colours they share (render_html_util.c).
 *
 * The charts are drawn by the script from the data block, so that a zoom
 * redraws them with axes and scales that fit the window: the markup holds
 * one empty <svg class="chart"> per chart, in the order of cp_html.chart.
 */
#ifndef RENDER_HTML_H
#define RENDER_HTML_H

#include <stdio.h>

#include "render.h"
#include "cp_ledger.h"

/* One chart of the page: a device's memory, or a process's copy lane. */
typedef struct cp_chart {
    int proc;                   /* index in rep->procs */
    int dev;                    /* the device, -1: the copy lane */
} cp_chart;

/* A site's timeline the tables' rows highlight on their chart. */
typedef struct cp_html_hl {
    int chart;
    size_t site;                /* index in the page's site labels */
    uint64_t *v;                /* cp_series_n() values, owned */
} cp_html_hl;

typedef struct cp_html {
    FILE *o;
    cp_report *rep;
    const cp_out_opts *opt;
    uint64_t T0, span;          /* the time axis every chart shares (trace clock, ns) */
    char **proc_label;          /* per process: "rank 1 on host (pid 42)" */
    unsigned char *helper;      /* per process: no GPU work, folded into one line */
    cp_chart *chart;
    int n_chart;
    /* site labels the data block lists, by index */
    cp_map site_ix;             /* label pointer -> index + 1 */
    const char **sites;
    size_t n_sites, cap_sites;
    cp_html_hl *hl;
    size_t n_hl, cap_hl;
    int err;
} cp_html;

/* --- render_html_util.c ----------------------------------------------------------------- */

/*! cp_html_esc() : s on o with &, <, >, " and ' escaped for HTML and SVG. */
void cp_html_esc(FILE *o, const char *s);

/*! cp_html_js_str() : s on o as a JSON string that is safe inside a
 *  <script> element (no '<', '>' or '&' left as such). */
void cp_html_js_str(FILE *o, const char *s);

/*! cp_html_holder_color() / cp_html_copy_color() : fill of a holder
 *  (enum cp_holder) or copy class (enum cp_copy_class). */
const char *cp_html_holder_color(int h);
const char *cp_html_copy_color(int c);

/* The page's other marks, in the legend and the script alike. */
#define CP_HTML_OOM_COLOR "#d62728"
#define CP_HTML_GROWTH_COLOR "#ffd92f"
#define CP_HTML_FRAG_COLOR "#ff7f0e"

/*! cp_html_site() : the index of label in the page's site list (added when
 *  new; 0 out of memory, with h->err set). */
size_t cp_html_site(cp_html *h, const char *label);

/*! cp_html_when() : t (trace clock, ns) as the time from the page's start
 *  (h->T0; earlier is 0) in the unit the script's axes use for it: "1.007 s",
 *  "12.345 ms", "265.0 µs", so that an event in the first millisecond does
 *  not read as 0.000 s.  @return : buf. */
const char *cp_html_when(const cp_html *h, uint64_t t, char *buf, size_t cap);

/* --- render_html_sites.c ---------------------------------------------------------------- */

/*! cp_html_sites() : the call-site tables of every memory chart (held at the
 *  peak, allocations, temporary allocations, held at each OOM), noting the
 *  rows' timelines in h->hl for the data block. */
void cp_html_sites(cp_html *h);

/*! cp_html_segments() : PyTorch's segments at each OOM where the companion
 *  recorded them, one bar per segment. */
void cp_html_segments(cp_html *h);

/* --- render_html_data.c ----------------------------------------------------------------- */

/*! cp_html_data() : the data block (<script type="application/json">) the
 *  script draws the charts from. */
void cp_html_data(cp_html *h);

/* --- render_page_js.c ------------------------------------------------------------------- */

/*! cp_page_js : the page's script (drawing, hover, zoom, selection, tables). */
extern const char cp_page_js[];

#endif /* RENDER_HTML_H */
