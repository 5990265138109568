/*
 * cp_jwrite.h - a small JSON text builder: values appended to one growing
 * string, commas placed by nesting level.  Out of memory sticks (oom) and
 * later calls do nothing, so callers check once at the end.  cp_jread.h
 * reads back what it writes.
 */
#ifndef CP_JWRITE_H
#define CP_JWRITE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cp_jb {
    char *s;
    size_t n, cap;
    int need_comma;         /* a value was written at this nesting level */
    int oom;
} cp_jb;

void cp_jb_raw(cp_jb *b, const char *s);
void cp_jb_key(cp_jb *b, const char *key);          /* "key": (with comma) */
void cp_jb_str(cp_jb *b, const char *s);            /* a JSON string (NULL: null) */
void cp_jb_strn(cp_jb *b, const char *s, size_t n);
void cp_jb_u64(cp_jb *b, uint64_t v);
void cp_jb_i64(cp_jb *b, int64_t v);
void cp_jb_dbl(cp_jb *b, double v);                 /* fixed 4 decimals */
void cp_jb_bool(cp_jb *b, int v);
void cp_jb_open(cp_jb *b, char c);                  /* '{' or '[' (with comma) */
void cp_jb_close(cp_jb *b, char c);
void cp_jb_elem(cp_jb *b);                         /* before a scalar array element */
/*! cp_jb_vals() : array elements, one per character of fmt: 's' a string
 *  (const char *, NULL: null), 'u' a uint64_t, 'i' an int64_t. */
void cp_jb_vals(cp_jb *b, const char *fmt, ...);
/*! cp_jb_row() : one array of those elements: [v1, v2, ...]. */
void cp_jb_row(cp_jb *b, const char *fmt, ...);
/* key + value shorthands for objects */
void cp_jb_ku(cp_jb *b, const char *key, uint64_t v);
void cp_jb_ki(cp_jb *b, const char *key, int64_t v);
void cp_jb_ks(cp_jb *b, const char *key, const char *v);
void cp_jb_kd(cp_jb *b, const char *key, double v);
void cp_jb_kb(cp_jb *b, const char *key, int v);
void cp_jb_free(cp_jb *b);

#endif /* CP_JWRITE_H */
