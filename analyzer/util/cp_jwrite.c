/*
 * cp_jwrite.c - the JSON text builder (see cp_jwrite.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_jwrite.h"

static void cp_jb_put(cp_jb *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n + 1)
            c *= 2;
        char *ns = realloc(b->s, c);
        if (!ns) {
            b->oom = 1;
            return;
        }
        b->s = ns;
        b->cap = c;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
}

void cp_jb_raw(cp_jb *b, const char *s)
{
    cp_jb_put(b, s, strlen(s));
}

static void cp_jb_sep(cp_jb *b)
{
    if (b->need_comma)
        cp_jb_put(b, ",", 1);
    b->need_comma = 1;
}

void cp_jb_elem(cp_jb *b)
{
    cp_jb_sep(b);
}

static void cp_jb_vvals(cp_jb *b, const char *fmt, va_list ap)
{
    for (; *fmt; fmt++) {
        cp_jb_sep(b);
        switch (*fmt) {
        case 's': cp_jb_str(b, va_arg(ap, const char *)); break;
        case 'u': cp_jb_u64(b, va_arg(ap, uint64_t)); break;
        case 'i': cp_jb_i64(b, va_arg(ap, int64_t)); break;
        default: b->oom = 1; return;    /* a caller's bug: the text is not JSON */
        }
    }
}

void cp_jb_vals(cp_jb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cp_jb_vvals(b, fmt, ap);
    va_end(ap);
}

void cp_jb_row(cp_jb *b, const char *fmt, ...)
{
    va_list ap;
    cp_jb_open(b, '[');
    va_start(ap, fmt);
    cp_jb_vvals(b, fmt, ap);
    va_end(ap);
    cp_jb_close(b, ']');
}

void cp_jb_strn(cp_jb *b, const char *s, size_t n)
{
    cp_jb_put(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        cp_jb_put(b, s + run, i - run);
        run = i + 1;
        char esc[8];
        switch (c) {
        case '"': cp_jb_put(b, "\\\"", 2); break;
        case '\\': cp_jb_put(b, "\\\\", 2); break;
        case '\n': cp_jb_put(b, "\\n", 2); break;
        case '\t': cp_jb_put(b, "\\t", 2); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            cp_jb_put(b, esc, 6);
        }
    }
    cp_jb_put(b, s + run, n - run);
    cp_jb_put(b, "\"", 1);
}

void cp_jb_str(cp_jb *b, const char *s)
{
    if (!s)
        cp_jb_raw(b, "null");
    else
        cp_jb_strn(b, s, strlen(s));
}

void cp_jb_key(cp_jb *b, const char *key)
{
    cp_jb_sep(b);
    cp_jb_str(b, key);
    cp_jb_put(b, ":", 1);
}

void cp_jb_u64(cp_jb *b, uint64_t v)
{
    char t[24];
    snprintf(t, sizeof t, "%" PRIu64, v);
    cp_jb_raw(b, t);
}

void cp_jb_i64(cp_jb *b, int64_t v)
{
    char t[24];
    snprintf(t, sizeof t, "%" PRId64, v);
    cp_jb_raw(b, t);
}

void cp_jb_dbl(cp_jb *b, double v)
{
    char t[40];
    snprintf(t, sizeof t, "%.4f", v);
    cp_jb_raw(b, t);
}

void cp_jb_bool(cp_jb *b, int v)
{
    cp_jb_raw(b, v ? "true" : "false");
}

void cp_jb_open(cp_jb *b, char c)
{
    /* A value directly after a key needs no comma: cp_jb_key set it. */
    if (b->n && b->s[b->n - 1] != ':')
        cp_jb_sep(b);
    char t[2] = { c, 0 };
    cp_jb_raw(b, t);
    b->need_comma = 0;
}

void cp_jb_close(cp_jb *b, char c)
{
    char t[2] = { c, 0 };
    cp_jb_raw(b, t);
    b->need_comma = 1;
}

void cp_jb_ku(cp_jb *b, const char *k, uint64_t v) { cp_jb_key(b, k); cp_jb_u64(b, v); }
void cp_jb_ki(cp_jb *b, const char *k, int64_t v) { cp_jb_key(b, k); cp_jb_i64(b, v); }
void cp_jb_ks(cp_jb *b, const char *k, const char *v) { cp_jb_key(b, k); cp_jb_str(b, v); }
void cp_jb_kd(cp_jb *b, const char *k, double v) { cp_jb_key(b, k); cp_jb_dbl(b, v); }
void cp_jb_kb(cp_jb *b, const char *k, int v) { cp_jb_key(b, k); cp_jb_bool(b, v); }

void cp_jb_free(cp_jb *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}
