/*
 * render_html.h - the self-contained HTML report (render_html.c) and its
 * SVG charts (render_svg.c): shared state of one page.
 */
#ifndef RENDER_HTML_H
#define RENDER_HTML_H

#include <stdio.h>

#include "render.h"

typedef struct cp_html {
    FILE *o;
    cp_report *rep;
    uint64_t T0, span;          /* the time axis every chart shares (trace clock, ns) */
    uint64_t yscale;            /* bytes at the top of every memory chart */
    double cscale;              /* copies per second at the top of every copy lane */
    char **proc_label;          /* per process: "rank 1 on host (pid 42)" */
} cp_html;

/*! cp_html_esc() : s on o with &, <, >, " and ' escaped for HTML and SVG
 *  (render_svg.c). */
void cp_html_esc(FILE *o, const char *s);

/*! cp_svg_memory() : the memory chart of process p, device d: held memory
 *  stacked by holder, the most held, capacity, OOM marks and finding ranges,
 *  as an inline <svg> with id "chart-N" (N = chart) of plot height ht. */
void cp_svg_memory(const cp_html *h, const cp_proc *p, int d, int chart, double ht);

/*! cp_svg_copies() : the copy lane of process p: copies per second by class
 *  and the share of time blocked in synchronous copies. */
void cp_svg_copies(const cp_html *h, const cp_proc *p, int chart, double ht);

/*! cp_html_holder_color() / cp_html_copy_color() : fill of a holder
 *  (enum cp_holder) or copy class (enum cp_copy_class). */
const char *cp_html_holder_color(int h);
const char *cp_html_copy_color(int c);

/*! cp_svg_x_origin() / cp_svg_width() : where the time axis starts and the
 *  chart width, in SVG units (for the page's script). */
double cp_svg_x_origin(void);
double cp_svg_width(void);

#endif /* RENDER_HTML_H */
