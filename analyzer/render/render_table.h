/*
 * render_table.h - a table built once and written as aligned text for
 * people or as CSV for programs (render_table.c): `cuprobe stats` and
 * `cuprobe diff` fill their tables here, so the two forms never disagree.
 */
#ifndef RENDER_TABLE_H
#define RENDER_TABLE_H

#include <stdint.h>
#include <stdio.h>

typedef struct cp_tab {
    const char *id;             /* CSV name and --table key: "api", "peak", ... */
    const char *title;          /* the heading of the text form */
    int ncol;
    const char *const *head;    /* ncol column names */
    const char *align;          /* per column 'l' or 'r' */
    char **txt, **raw;          /* nrow * ncol cells: text form, CSV form */
    size_t nrow, cap;
    int err;                    /* out of memory once: cells are missing */
} cp_tab;

/*! cp_tab_init() : an empty table of ncol columns named head[], aligned by
 *  align ("lrr...").  The strings are kept by reference. */
void cp_tab_init(cp_tab *t, const char *id, const char *title, int ncol,
                 const char *const *head, const char *align);

/*! cp_tab_row() : start a row; its cells follow with cp_tab_cell(). */
void cp_tab_row(cp_tab *t);

/*! cp_tab_cell() : the next cell of the current row: txt for people, raw
 *  (NULL: txt) for CSV.  Both are copied. */
void cp_tab_cell(cp_tab *t, const char *txt, const char *raw);

/*! cp_tab_u() / cp_tab_bytes() / cp_tab_ns() : a cell of a count, a size
 *  ("1.50 GiB", raw bytes) or a duration ("12.3 ms", raw ns); none: "-"
 *  and an empty CSV cell. */
void cp_tab_u(cp_tab *t, uint64_t v);
void cp_tab_bytes(cp_tab *t, uint64_t v, int none);
void cp_tab_ns(cp_tab *t, uint64_t v, int none);

/*! cp_tab_text() : the title, the header and the rows, columns aligned.
 *  cp_tab_csv() : a header line and one line per row (RFC 4180 quoting, LF line ends). */
void cp_tab_text(FILE *o, const cp_tab *t);
void cp_tab_csv(FILE *o, const cp_tab *t);

/*! cp_tab_free() : free the cells. */
void cp_tab_free(cp_tab *t);

#endif /* RENDER_TABLE_H */
