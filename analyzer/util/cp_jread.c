/*
 * cp_jread.c - the strict JSON reader (see cp_jread.h): recursive descent
 * over the text, nodes and strings in one arena freed at once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_jread.h"

#define CP_J_DEPTH 32

typedef struct cp_jblk {
    struct cp_jblk *next;
    size_t used, cap;
    max_align_t data[];
} cp_jblk;

struct cp_jdoc {
    cp_jblk *blk;
    cp_jblk *spare;         /* blocks of elements handed out, kept for the next */
    cp_jn root;
};

typedef struct cp_jp {
    const char *t;
    size_t n, i;
    cp_jdoc *d;
    char *err;
    size_t cap;
    int failed;
    /* cp_jdoc_parse_each(): the member of the top object whose array
     * elements go to each() one at a time, and the top object so far. */
    const char *each_key;
    cp_jeach_fn each;
    void *each_ctx;
    int each_next;          /* the value about to be parsed is that array */
    size_t top_n;           /* members of the top object parsed (on stk from 0) */
    /* Children of the compounds being parsed, innermost last: one stack
     * for all, so a compound costs no allocation of its own. */
    cp_jn *stk;
    size_t stk_n, stk_cap;
} cp_jp;

static void *cp_j_alloc(cp_jdoc *d, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!d->blk || d->blk->cap - d->blk->used < n) {
        size_t c = n > (64u << 10) ? n : (64u << 10);
        cp_jblk *b;
        if (d->spare && d->spare->cap >= c) {
            b = d->spare;
            d->spare = b->next;
        } else if (!(b = malloc(sizeof *b + c))) {
            return NULL;
        } else {
            b->cap = c;
        }
        b->next = d->blk;
        b->used = 0;
        d->blk = b;
    }
    void *p = (char *)d->blk->data + d->blk->used;
    d->blk->used += n;
    return p;
}

static int cp_j_fail(cp_jp *p, size_t off, const char *fmt, ...)
{
    if (p->failed)
        return -1;
    p->failed = 1;
    int k = snprintf(p->err, p->cap, "offset %zu: ", off);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < p->cap)
        vsnprintf(p->err + k, p->cap - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static void cp_j_blank(cp_jp *p)
{
    while (p->i < p->n && (p->t[p->i] == ' ' || p->t[p->i] == '\n' || p->t[p->i] == '\t' ||
                           p->t[p->i] == '\r'))
        p->i++;
}

static int cp_j_end(cp_jp *p)
{
    return cp_j_fail(p, p->i, "the text ends here, inside a value (a truncated file?)");
}

static int cp_j_hex4(cp_jp *p, unsigned *v)
{
    *v = 0;
    if (p->n - p->i < 4)
        return cp_j_end(p);
    for (int k = 0; k < 4; k++) {
        char c = p->t[p->i++];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d == 16)
            return cp_j_fail(p, p->i - 1, "a \\u escape needs 4 hex digits");
        *v = *v * 16 + d;
    }
    return 0;
}

/* A string at p->i (the opening quote), unescaped into the arena. */
static int cp_j_string(cp_jp *p, const char **out, size_t *len)
{
    size_t start = p->i++, j = p->i;
    while (j < p->n && p->t[j] != '"')
        j += p->t[j] == '\\' ? 2 : 1;
    if (j >= p->n)
        return cp_j_fail(p, start, "a string that never ends (a truncated file?)");
    char *s = cp_j_alloc(p->d, j - p->i + 1);    /* unescaped is never longer */
    if (!s)
        return cp_j_fail(p, start, "out of memory");
    size_t w = 0;
    while (p->t[p->i] != '"') {
        unsigned char c = (unsigned char)p->t[p->i++];
        if (c < 0x20)
            return cp_j_fail(p, p->i - 1, "a control character inside a string");
        if (c != '\\') {
            s[w++] = (char)c;
            continue;
        }
        char e = p->t[p->i++];
        unsigned u;
        switch (e) {
        case '"': case '\\': case '/': s[w++] = e; break;
        case 'n': s[w++] = '\n'; break;
        case 't': s[w++] = '\t'; break;
        case 'r': s[w++] = '\r'; break;
        case 'b': s[w++] = '\b'; break;
        case 'f': s[w++] = '\f'; break;
        case 'u':
            if (cp_j_hex4(p, &u))
                return -1;
            /* The writers escape only control characters: one byte each;
             * anything else is kept as UTF-8 (no surrogate pairs needed). */
            if (u < 0x80) {
                s[w++] = (char)u;
            } else if (u < 0x800) {
                s[w++] = (char)(0xc0 | (u >> 6));
                s[w++] = (char)(0x80 | (u & 0x3f));
            } else {
                return cp_j_fail(p, p->i - 6, "a \\u escape above U+07FF");
            }
            break;
        default:
            return cp_j_fail(p, p->i - 2, "an unknown escape \\%c", e);
        }
    }
    p->i++;
    s[w] = 0;
    *out = s;
    *len = w;
    return 0;
}

static int cp_j_value(cp_jp *p, cp_jn *v, int depth);

/* The array at p->i, each element parsed into blocks of its own, handed to
 * p->each and freed: the array node keeps only the count. */
static int cp_j_each(cp_jp *p, cp_jn *v, int depth)
{
    v->type = CP_J_ARR;
    if (depth >= CP_J_DEPTH)
        return cp_j_fail(p, p->i, "nested deeper than %d levels", CP_J_DEPTH);
    p->i++;
    cp_j_blank(p);
    if (p->i < p->n && p->t[p->i] == ']') {
        p->i++;
        return 0;
    }
    for (;;) {
        cp_jblk *keep = p->d->blk;
        p->d->blk = NULL;
        cp_jn e;
        memset(&e, 0, sizeof e);
        int rc = cp_j_value(p, &e, depth + 1);
        cp_jn top = { .type = CP_J_OBJ, .kid = p->stk, .n = p->top_n };
        if (rc == 0 && p->each(p->each_ctx, &top, v->n, &e) != 0)
            rc = cp_j_fail(p, e.off, "stopped by the reader");
        /* Its blocks serve the next element. */
        while (p->d->blk) {
            cp_jblk *b = p->d->blk;
            p->d->blk = b->next;
            b->next = p->d->spare;
            p->d->spare = b;
        }
        p->d->blk = keep;
        if (rc)
            return -1;
        v->n++;
        cp_j_blank(p);
        if (p->i >= p->n)
            return cp_j_end(p);
        if (p->t[p->i] == ']') {
            p->i++;
            return 0;
        }
        if (p->t[p->i] != ',')
            return cp_j_fail(p, p->i, "expected ',' or ']'");
        p->i++;
    }
}

/* An array or object: children parsed onto the parser's stack, then kept
 * in the arena in order. */
static int cp_j_compound(cp_jp *p, cp_jn *v, int depth)
{
    char close = p->t[p->i] == '[' ? ']' : '}';
    v->type = close == ']' ? CP_J_ARR : CP_J_OBJ;
    if (depth >= CP_J_DEPTH)
        return cp_j_fail(p, p->i, "nested deeper than %d levels", CP_J_DEPTH);
    p->i++;
    size_t base = p->stk_n, n = 0;
    int rc = -1;
    cp_j_blank(p);
    if (p->i < p->n && p->t[p->i] == close) {
        p->i++;
        return 0;
    }
    for (;;) {
        /* Parsed here, pushed after: a nested compound may move the stack. */
        cp_jn k;
        memset(&k, 0, sizeof k);
        cp_j_blank(p);
        if (close == '}') {
            size_t kl;
            if (p->i >= p->n) {
                cp_j_end(p);
                goto out;
            }
            if (p->t[p->i] != '"') {
                cp_j_fail(p, p->i, "expected a member name in quotes");
                goto out;
            }
            if (cp_j_string(p, &k.key, &kl))
                goto out;
            cp_j_blank(p);
            if (p->i >= p->n || p->t[p->i] != ':') {
                p->i >= p->n ? cp_j_end(p) : cp_j_fail(p, p->i, "expected ':' after a member name");
                goto out;
            }
            p->i++;
            if (depth == 0 && p->each_key && strcmp(k.key, p->each_key) == 0) {
                p->top_n = n;
                p->each_next = 1;
            }
        }
        if (cp_j_value(p, &k, depth + 1))
            goto out;
        if (p->stk_n == p->stk_cap) {
            size_t c = p->stk_cap ? 2 * p->stk_cap : 256;
            cp_jn *t = realloc(p->stk, c * sizeof *t);
            if (!t) {
                cp_j_fail(p, p->i, "out of memory");
                goto out;
            }
            p->stk = t;
            p->stk_cap = c;
        }
        p->stk[p->stk_n++] = k;
        n++;
        cp_j_blank(p);
        if (p->i >= p->n) {
            cp_j_end(p);
            goto out;
        }
        if (p->t[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->t[p->i] == close) {
            p->i++;
            break;
        }
        cp_j_fail(p, p->i, "expected ',' or '%c'", close);
        goto out;
    }
    v->kid = cp_j_alloc(p->d, n * sizeof *v->kid);
    if (!v->kid) {
        cp_j_fail(p, v->off, "out of memory");
        goto out;
    }
    memcpy(v->kid, p->stk + base, n * sizeof *v->kid);
    v->n = n;
    rc = 0;
out:
    p->stk_n = base;
    return rc;
}

static int cp_j_number(cp_jp *p, cp_jn *v)
{
    v->type = CP_J_INT;
    if (p->t[p->i] == '-') {
        v->neg = 1;
        p->i++;
    }
    size_t d0 = p->i;
    while (p->i < p->n && p->t[p->i] >= '0' && p->t[p->i] <= '9') {
        unsigned dg = (unsigned)(p->t[p->i] - '0');
        if (v->u > (UINT64_MAX - dg) / 10)
            return cp_j_fail(p, v->off, "a number too large for 64 bits");
        v->u = v->u * 10 + dg;
        p->i++;
    }
    if (p->i == d0)
        return p->i >= p->n ? cp_j_end(p) : cp_j_fail(p, v->off, "expected a value");
    if (p->i < p->n && (p->t[p->i] == '.' || p->t[p->i] == 'e' || p->t[p->i] == 'E'))
        return cp_j_fail(p, v->off, "a number with a fraction or exponent (integers only)");
    return 0;
}

static int cp_j_word(cp_jp *p, cp_jn *v, const char *w, int type, uint64_t u)
{
    size_t l = strlen(w);
    if (p->n - p->i < l && strncmp(p->t + p->i, w, p->n - p->i) == 0)
        return cp_j_end(p);
    if (p->n - p->i < l || strncmp(p->t + p->i, w, l) != 0)
        return cp_j_fail(p, p->i, "expected a value");
    p->i += l;
    v->type = type;
    v->u = u;
    return 0;
}

static int cp_j_value(cp_jp *p, cp_jn *v, int depth)
{
    cp_j_blank(p);
    v->off = p->i;
    if (p->i >= p->n)
        return cp_j_end(p);
    /* The array cp_jdoc_parse_each() hands out element by element. */
    int each = p->each_next;
    p->each_next = 0;
    if (each && p->t[p->i] == '[')
        return cp_j_each(p, v, depth);
    switch (p->t[p->i]) {
    case '{': case '[': return cp_j_compound(p, v, depth);
    case '"': v->type = CP_J_STR; return cp_j_string(p, &v->s, &v->len);
    case 't': return cp_j_word(p, v, "true", CP_J_BOOL, 1);
    case 'f': return cp_j_word(p, v, "false", CP_J_BOOL, 0);
    case 'n': return cp_j_word(p, v, "null", CP_J_NULL, 0);
    default: return cp_j_number(p, v);
    }
}

cp_jdoc *cp_jdoc_parse_each(const char *text, size_t n, const char *key, cp_jeach_fn each,
                            void *ctx, char *err, size_t cap)
{
    cp_jdoc *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    cp_jp p = { .t = text, .n = n, .d = d, .err = err, .cap = cap, .each_key = key,
                .each = each, .each_ctx = ctx };
    if (cp_j_value(&p, &d->root, 0) == 0) {
        cp_j_blank(&p);
        if (p.i < p.n)
            cp_j_fail(&p, p.i, "more text after the end of the value");
    }
    free(p.stk);
    if (p.failed) {
        cp_jdoc_free(d);
        return NULL;
    }
    return d;
}

cp_jdoc *cp_jdoc_parse(const char *text, size_t n, char *err, size_t cap)
{
    return cp_jdoc_parse_each(text, n, NULL, NULL, NULL, err, cap);
}

static void cp_jblk_free(cp_jblk *b)
{
    while (b) {
        cp_jblk *next = b->next;
        free(b);
        b = next;
    }
}

const cp_jn *cp_jdoc_root(const cp_jdoc *d)
{
    return &d->root;
}

void cp_jdoc_free(cp_jdoc *d)
{
    if (!d)
        return;
    cp_jblk_free(d->blk);
    cp_jblk_free(d->spare);
    free(d);
}

const cp_jn *cp_jn_get(const cp_jn *o, const char *key)
{
    if (!o || o->type != CP_J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->kid[i].key, key) == 0)
            return &o->kid[i];
    return NULL;
}

int cp_jn_i64(const cp_jn *n, int64_t *v)
{
    if (!n || n->type != CP_J_INT || n->u > (n->neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
        return -1;
    *v = n->neg ? (int64_t)(0 - n->u) : (int64_t)n->u;
    return 0;
}
