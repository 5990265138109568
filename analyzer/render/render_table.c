/*
 * render_table.c - tables as text or CSV (render_table.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "render_table.h"
#include "cp_grow.h"
#include "cp_model.h"

void cp_tab_init(cp_tab *t, const char *id, const char *title, int ncol,
                 const char *const *head, const char *align)
{
    memset(t, 0, sizeof *t);
    t->id = id;
    t->title = title;
    t->ncol = ncol;
    t->head = head;
    t->align = align;
}

void cp_tab_row(cp_tab *t)
{
    size_t need = (t->nrow + 1) * (size_t)t->ncol;
    size_t cap = t->cap;
    if (cp_grow((void **)&t->txt, &cap, need, sizeof *t->txt, 64) != 0 ||
        cp_grow((void **)&t->raw, &t->cap, need, sizeof *t->raw, 64) != 0) {
        t->err = ENOMEM;
        return;
    }
    memset(t->txt + t->nrow * (size_t)t->ncol, 0, (size_t)t->ncol * sizeof *t->txt);
    memset(t->raw + t->nrow * (size_t)t->ncol, 0, (size_t)t->ncol * sizeof *t->raw);
    t->nrow++;
}

void cp_tab_cell(cp_tab *t, const char *txt, const char *raw)
{
    if (!t->nrow || t->err)
        return;
    char **row = t->txt + (t->nrow - 1) * (size_t)t->ncol;
    char **rrow = t->raw + (t->nrow - 1) * (size_t)t->ncol;
    int c = 0;
    while (c < t->ncol && row[c])
        c++;
    if (c == t->ncol)
        return;
    row[c] = strdup(txt ? txt : "");
    rrow[c] = strdup(raw ? raw : txt ? txt : "");
    if (!row[c] || !rrow[c])
        t->err = ENOMEM;
}

void cp_tab_u(cp_tab *t, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    cp_tab_cell(t, b, b);
}

/* A cell of v as fmt prints it, v itself for CSV; none: "-" and empty. */
static void cp_tab_fmt(cp_tab *t, uint64_t v, int none,
                       const char *(*fmt)(uint64_t, char *, size_t))
{
    char b[32], r[32];
    snprintf(r, sizeof r, "%llu", (unsigned long long)v);
    cp_tab_cell(t, none ? "-" : fmt(v, b, sizeof b), none ? "" : r);
}

void cp_tab_bytes(cp_tab *t, uint64_t v, int none)
{
    cp_tab_fmt(t, v, none, cp_fmt_bytes);
}

void cp_tab_ns(cp_tab *t, uint64_t v, int none)
{
    cp_tab_fmt(t, v, none, cp_fmt_ns);
}

void cp_tab_text(FILE *o, const cp_tab *t)
{
    size_t w[32] = { 0 };
    int nc = t->ncol < 32 ? t->ncol : 32;
    for (int c = 0; c < nc; c++)
        w[c] = strlen(t->head[c]);
    for (size_t r = 0; r < t->nrow; r++)
        for (int c = 0; c < nc; c++) {
            const char *s = t->txt[r * (size_t)t->ncol + c];
            size_t l = s ? strlen(s) : 0;
            if (l > w[c])
                w[c] = l;
        }
    fprintf(o, "%s\n", t->title);
    for (size_t r = 0; r <= t->nrow; r++) {
        fputs("  ", o);
        for (int c = 0; c < nc; c++) {
            const char *s = r ? t->txt[(r - 1) * (size_t)t->ncol + c] : t->head[c];
            if (!s)
                s = "";
            int last = c == nc - 1;
            if (t->align[c] == 'r')
                fprintf(o, "%*s%s", (int)w[c], s, last ? "" : "  ");
            else if (last)
                fputs(s, o);
            else
                fprintf(o, "%-*s  ", (int)w[c], s);
        }
        fputc('\n', o);
    }
}

static void cp_csv_field(FILE *o, const char *s)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, o);
        return;
    }
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', o);
        fputc(*s, o);
    }
    fputc('"', o);
}

void cp_tab_csv(FILE *o, const cp_tab *t)
{
    for (size_t r = 0; r <= t->nrow; r++) {
        for (int c = 0; c < t->ncol; c++) {
            if (c)
                fputc(',', o);
            cp_csv_field(o, r ? t->raw[(r - 1) * (size_t)t->ncol + c] : t->head[c]);
        }
        fputc('\n', o);
    }
}

void cp_tab_free(cp_tab *t)
{
    for (size_t i = 0; i < t->nrow * (size_t)t->ncol; i++) {
        free(t->txt[i]);
        free(t->raw[i]);
    }
    free(t->txt);
    free(t->raw);
    t->txt = t->raw = NULL;
    t->nrow = t->cap = 0;
}
