/*
 * cp_dump.c - `cuprobe-analyze dump TRACE...`: every record as one line of
 * text, for debugging the format and the shim (like `uftrace dump`);
 * `dump --stats`: records and raw bytes per record type (what a trace
 * spends its bytes on).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_decode.h"
#include "cp_dump.h"
#include "cp_opts.h"
#include "cp_report.h"
#include "cp_window_place.h"

/* The output: a private buffer written with fwrite when full.  Numbers
 * are formatted by hand (two digits per step, straight into the buffer)
 * and names copied with their lengths known, so a record costs a few
 * hundred instructions instead of a printf call per field.  The buffer is
 * large so that a pipe sees few, big writes. */
#define CP_OB_SIZE (1u << 18)
/* API names cached by id (ids are small and dense): the decoder's lookup
 * hashes and the name needs a strlen; a record of most types has one. */
#define CP_OB_APIS 512

typedef struct cp_ob {
    char *p, *end;
    FILE *f;
    struct { const char *s; size_t n; } api[CP_OB_APIS];
    char buf[CP_OB_SIZE];
} cp_ob;

static void ob_flush(cp_ob *o)
{
    fwrite(o->buf, 1, (size_t)(o->p - o->buf), o->f);
    o->p = o->buf;
}

static inline void ob_room(cp_ob *o, size_t n)
{
    if (__builtin_expect((size_t)(o->end - o->p) < n, 0))
        ob_flush(o);
}

static void ob_mem_slow(cp_ob *o, const char *s, size_t n)
{
    ob_flush(o);
    if (n > sizeof o->buf) {
        fwrite(s, 1, n, o->f);
        return;
    }
    memcpy(o->p, s, n);
    o->p += n;
}

static inline void ob_mem(cp_ob *o, const char *s, size_t n)
{
    if (__builtin_expect((size_t)(o->end - o->p) < n, 0)) {
        ob_mem_slow(o, s, n);
        return;
    }
    memcpy(o->p, s, n);
    o->p += n;
}

static inline void ob_str(cp_ob *o, const char *s)
{
    ob_mem(o, s, strlen(s));
}

/* A short name (an enum's, at most CP_DUMP_FIELD bytes: see below) into
 * room the caller made: a byte loop beats strlen and memcpy calls. */
static inline void ob_name(cp_ob *o, const char *s)
{
    char *q = o->p;
    while (*s)
        *q++ = *s++;
    o->p = q;
}

static inline void ob_ch(cp_ob *o, char c)
{
    ob_room(o, 1);
    *o->p++ = c;
}

/* A string literal into room the caller made: a constant-size copy the
 * compiler turns into a few moves. */
#define OB_LIT_IN(o, s) (memcpy((o)->p, s, sizeof(s) - 1), (o)->p += sizeof(s) - 1)
#define OB_LIT(o, s) ob_mem(o, s, sizeof(s) - 1)

static const char ob_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Decimal digits of v (1 for 0). */
static inline int ob_ndigits(uint64_t v)
{
    static const uint64_t p10[20] = {
        1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
        100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
        10000000000000ull, 100000000000000ull, 1000000000000000ull,
        10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
        10000000000000000000ull,
    };
    /* log10 from log2 (1233/4096 ~ log10(2)), corrected by one compare;
     * v | 1 has v's digits (powers of ten above 1 are even) and 0 one. */
    uint64_t w = v | 1;
    int n = ((64 - __builtin_clzll(w)) * 1233) >> 12;
    return n + (w >= p10[n]);
}

/* Decimal (the caller made room for 20 digits), written from its last
 * digit backwards at its final place: no copy. */
static inline void ob_u(cp_ob *o, uint64_t v)
{
    int n = ob_ndigits(v);
    char *q = o->p + n;
    o->p = q;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        q -= 2;
        memcpy(q, ob_digits + d, 2);
    }
    if (v >= 10)
        memcpy(q - 2, ob_digits + v * 2, 2);
    else
        q[-1] = (char)('0' + v);
}

static inline void ob_s(cp_ob *o, int64_t v)
{
    if (v < 0) {
        *o->p++ = '-';
        ob_u(o, -(uint64_t)v);
    } else {
        ob_u(o, (uint64_t)v);
    }
}

/* Two hex digits per byte value, for ob_x. */
static const char ob_hex2[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* "0x" and lower-case hex without leading zeros ("0x0" for zero), two
 * digits a step from the last. */
static inline void ob_x(cp_ob *o, uint64_t v)
{
    int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
    o->p[0] = '0';
    o->p[1] = 'x';
    char *q = o->p + 2 + n;
    o->p = q;
    for (; n >= 2; n -= 2, v >>= 8) {
        q -= 2;
        memcpy(q, ob_hex2 + (v & 0xff) * 2, 2);
    }
    if (n)
        q[-1] = "0123456789abcdef"[v & 15];
}

/* Fixed-width decimal (nanoseconds after the point), two digits a step. */
static inline void ob_u_w(cp_ob *o, uint64_t v, int w)
{
    int i = w;
    for (; i >= 2; i -= 2, v /= 100)
        memcpy(o->p + i - 2, ob_digits + (v % 100) * 2, 2);
    if (i)
        o->p[0] = (char)('0' + v % 10);
    o->p += w;
}

/* Rare records only (header, stack, device lists): printf is fine. */
__attribute__((format(printf, 2, 3)))
static void ob_fmt(cp_ob *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->p, (size_t)(o->end - o->p), fmt, ap);
    va_end(ap);
    if (n >= 0 && n < o->end - o->p) {
        o->p += n;
        return;
    }
    ob_flush(o);
    va_start(ap, fmt);
    vfprintf(o->f, fmt, ap);
    va_end(ap);
}

/* One byte of a string as the dump escapes it, into room for 4. */
static inline void cp_esc_ch(cp_ob *f, unsigned char c)
{
    if (c >= 0x20 && c != 0x7f && c != '"' && c != '\\') {
        *f->p++ = (char)c;
    } else if (c == '"' || c == '\\') {
        *f->p++ = '\\';
        *f->p++ = (char)c;
    } else if (c == '\n') {
        *f->p++ = '\\';
        *f->p++ = 'n';
    } else if (c == '\t') {
        *f->p++ = '\\';
        *f->p++ = 't';
    } else {
        *f->p++ = '\\';
        *f->p++ = 'x';
        *f->p++ = "0123456789abcdef"[c >> 4];
        *f->p++ = "0123456789abcdef"[c & 15];
    }
}

static void cp_put_esc(cp_ob *f, const char *name, cp_str s)
{
    ob_ch(f, ' ');
    ob_str(f, name);
    OB_LIT(f, "=\"");
    if (s.n <= CP_OB_SIZE / 8) {
        /* Room for the worst case once (every byte escaped as \xNN). */
        ob_room(f, 4 * s.n + 1);
        for (size_t i = 0; i < s.n; i++)
            cp_esc_ch(f, (unsigned char)s.p[i]);
    } else {
        for (size_t i = 0; i < s.n; i++) {
            ob_room(f, 4);
            cp_esc_ch(f, (unsigned char)s.p[i]);
        }
    }
    ob_ch(f, '"');
}

/* " NAME=elf_name" or " NAME=#id": names from the cache in f, filled from
 * the decoder's table (cp_dump_file() empties an entry when an API record
 * announces its id again, and the whole cache per trace). */
static void cp_put_api(cp_ob *f, const cp_dec *d, const char *name, size_t name_n,
                       uint64_t id)
{
    const char *n;
    size_t nn;
    if (id < CP_OB_APIS && f->api[id].s) {
        n = f->api[id].s;
        nn = f->api[id].n;
    } else {
        n = cp_dec_api_name(d, id);
        nn = n ? strlen(n) : 0;
        if (n && id < CP_OB_APIS) {
            f->api[id].s = n;
            f->api[id].n = nn;
        }
    }
    ob_room(f, 48);
    *f->p++ = ' ';
    memcpy(f->p, name, name_n);
    f->p += name_n;
    if (n) {
        *f->p++ = '=';
        ob_mem(f, n, nn);
    } else {
        OB_LIT_IN(f, "=#");
        ob_u(f, id);
    }
}

static void cp_put_routes(cp_ob *f, uint64_t routes)
{
    ob_str(f, " routes=");
    if (!routes)
        ob_str(f, "none");
    for (unsigned b = 0, sep = 0; b < 8; b++)
        if (routes & (1u << b))
            ob_fmt(f, "%s%s", sep++ ? "|" : "", cp_route_name(b));
}

static void cp_put_uuid(cp_ob *f, const char *name, const uint8_t *u)
{
    ob_fmt(f, " %s=", name);
    for (int i = 0; i < 16; i++)
        ob_fmt(f, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
}

/* One pair of a KVARR field: " env.NAME=\"value\"". */
static void cp_put_kv(cp_ob *f, const char *field, cp_str k, cp_str v)
{
    char nm[256];
    snprintf(nm, sizeof nm, "%s.%.*s", field, (int)k.n, k.p);
    cp_put_esc(f, nm, v);
}

static void cp_put_list(cp_ob *f, const char *label, const char *fmt, uint64_t n,
                        const uint64_t *v)
{
    ob_fmt(f, " %s=[", label);
    for (uint64_t i = 0; i < n; i++) {
        if (i)
            ob_ch(f, ' ');
        ob_fmt(f, fmt, (unsigned long long)v[i]);
    }
    ob_ch(f, ']');
}

/* How one field prints, by kind and dump format (include/cp_records.h).
 *
 * Room: a record starts with CP_DUMP_RESERVE bytes free, and every field
 * of unbounded length (strings, lists, API names) makes them free again
 * after itself; the bounded fields between take at most CP_DUMP_FIELD
 * bytes each (" name=" with the longest name, 21 bytes, and 20 digits or
 * an enum name of at most 96), so they write without checking. */
#define CP_DUMP_FIELD 128
#define CP_DUMP_RESERVE 4096
#define CP_DUMP_AGAIN ob_room(f, CP_DUMP_RESERVE)
#define CP_DU_DEC(n, v) (OB_LIT_IN(f, " " n "="), ob_u(f, (uint64_t)(v)))
#define CP_DU_HEX(n, v) (OB_LIT_IN(f, " " n "="), ob_x(f, (uint64_t)(v)))
#define CP_DU_API(n, v) (cp_put_api(f, d, n, sizeof(n) - 1, v), CP_DUMP_AGAIN)
#define CP_DU_ROUTES(n, v) (cp_put_routes(f, v), CP_DUMP_AGAIN)
#define CP_DU_NAME_(n, s) (OB_LIT_IN(f, " " n "="), ob_name(f, s))
#define CP_DU_MEMKIND(n, v) CP_DU_NAME_(n, cp_mem_kind_name(v))
#define CP_DU_MEMCLASS(n, v) CP_DU_NAME_(n, cp_mem_class_name(v))
#define CP_DU_COPYFLAGS(n, v) CP_DU_NAME_(n, cp_copy_flags_str(v, fl, sizeof fl))
#define CP_DU_OP(n, v) CP_DU_NAME_(n, cp_op_name(r->type, v))
#define CP_DU_ROUTE(n, v) CP_DU_NAME_(n, cp_route_name(v))
#define CP_DU_LIBKIND(n, v) CP_DU_NAME_(n, cp_libkind_name(v))
#define CP_DU_REASON(n, v) CP_DU_NAME_(n, cp_end_reason_name(v))
#define CP_DL_NATIVE(n, v) cp_put_list(f, "native", "0x%llx", n, v)
#define CP_DL_PY(n, v) cp_put_list(f, "py", "%llu", n, v)

#define CP_DUMP(k, n, a, fmt) CP_DUMP_##k(n, a, fmt)
#define CP_DUMP_U(n, a, fmt) CP_DU_##fmt(#n, x->n);
#define CP_DUMP_S(n, a, fmt) (OB_LIT_IN(f, " " #n "="), ob_s(f, (int64_t)x->n));
#define CP_DUMP_STR(n, a, fmt) cp_put_esc(f, #n, x->n); CP_DUMP_AGAIN;
#define CP_DUMP_BYTES(n, a, fmt) cp_put_uuid(f, #n, x->n); CP_DUMP_AGAIN;
#define CP_DUMP_UOPT(n, a, fmt)         \
    if (x->n != CP_FIELD_ABSENT)        \
        CP_DU_##fmt(#n, x->n);
#define CP_DUMP_UARR(n, a, fmt) CP_DL_##fmt(x->a, x->n); CP_DUMP_AGAIN;
#define CP_DUMP_PAIRS(n, a, fmt)                                            \
    CP_DU_DEC(#a, x->a);                                                    \
    for (uint64_t i = 0; i < x->a; i++)                                     \
        ob_fmt(f, " proc[%llu]=%llu:%llu", (unsigned long long)i,           \
                (unsigned long long)x->n[i].CP_PAIR_##fmt##_A,              \
                (unsigned long long)x->n[i].CP_PAIR_##fmt##_B);             \
    CP_DUMP_AGAIN;
#define CP_DUMP_STRARR(n, a, fmt)                                           \
    CP_DU_DEC(#a, x->a);                                                    \
    for (uint64_t i = 0; i < x->a; i++) {                                   \
        char nm[48];                                                        \
        snprintf(nm, sizeof nm, "%s[%llu]", #n, (unsigned long long)i);     \
        cp_put_esc(f, nm, x->n[i]);                                         \
    }                                                                       \
    CP_DUMP_AGAIN;
#define CP_DUMP_KVARR(n, a, fmt)                                            \
    CP_DU_DEC(#a, x->a);                                                    \
    for (uint64_t i = 0; i < x->a; i++)                                     \
        cp_put_kv(f, #n, x->n##_name[i], x->n##_value[i]);                  \
    CP_DUMP_AGAIN;

/* The reserve holds every record's bounded fields (EV's and its own, the
 * type, ts and tid, the newline) without a check. */
#define CP_DUMP_NF_(k, n, a, fmt) + 1
#define CP_DUMP_FITS_(N, id, l, shape, doc)                                 \
    _Static_assert((4 + (0 CP_EV_FIELDS(CP_DUMP_NF_)) + (0 CP_F_##N(CP_DUMP_NF_))) * \
                   CP_DUMP_FIELD <= CP_DUMP_RESERVE, "dump reserve too small for " #N);
CP_RECORDS(CP_DUMP_FITS_)
_Static_assert(CP_DUMP_RESERVE <= CP_OB_SIZE / 4, "the reserve is a small part of the buffer");

/* Numbers are formatted into the buffer (64 bytes hold a name and a
 * number); names and strings are copied. */
#define CP_DUMP_CASE_(N, id, l, shape, doc)     \
    case CP_REC_##N: {                          \
        const typeof(r->u.l) *x = &r->u.l;      \
        (void)x;                                \
        CP_F_##N(CP_DUMP)                       \
        break;                                  \
    }

/* Record type names with their lengths, from the record table. */
#define CP_DUMP_TN_(N, id, l, shape, doc) [CP_REC_##N] = { #N, sizeof(#N) - 1 },
static const struct { const char *s; size_t n; } cp_dump_tn[] = { CP_RECORDS(CP_DUMP_TN_) };

static void cp_dump_record(cp_ob *f, const cp_dec *d, const cp_record *r)
{
    char fl[96];
    (void)fl;
    if (r->type < sizeof cp_dump_tn / sizeof *cp_dump_tn && cp_dump_tn[r->type].s)
        ob_mem(f, cp_dump_tn[r->type].s, cp_dump_tn[r->type].n);
    else
        ob_fmt(f, "UNKNOWN(%u)", r->type);
    CP_DUMP_AGAIN;
    OB_LIT_IN(f, " ts=");
    ob_u(f, r->ts / 1000000000u);
    *f->p++ = '.';
    ob_u_w(f, r->ts % 1000000000u, 9);
    CP_DU_DEC("tid", r->tid);
    if (cp_rec_has_ev(r->type)) {
        const cp_ev *x = &r->ev;
        CP_EV_FIELDS(CP_DUMP)
    }
    switch (r->type) {
    CP_RECORDS(CP_DUMP_CASE_)
    default:
        CP_DU_DEC("len", r->payload_len);
        break;
    }
    *f->p++ = '\n';
}

/* `dump --stats`: records and raw (decompressed) bytes per record type. */
typedef struct cp_dstats {
    uint64_t n[256], bytes[256];
} cp_dstats;

static void cp_dump_stats(cp_ob *f, const cp_dstats *st)
{
    uint64_t n = 0, bytes = 0;
    int order[256], k = 0;
    for (int t = 0; t < 256; t++) {
        n += st->n[t];
        bytes += st->bytes[t];
        if (st->n[t])
            order[k++] = t;
    }
    /* Largest share first (a handful of types: insertion sort). */
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && st->bytes[order[j]] > st->bytes[order[j - 1]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    ob_fmt(f, "%-14s %12s %14s %7s %10s\n", "type", "records", "raw_bytes", "share", "B/record");
    for (int i = 0; i < k; i++) {
        int t = order[i];
        ob_fmt(f, "%-14s %12llu %14llu %6.2f%% %10.2f\n", cp_rec_type_name((unsigned)t),
               (unsigned long long)st->n[t], (unsigned long long)st->bytes[t],
               bytes ? 100.0 * (double)st->bytes[t] / (double)bytes : 0.0,
               (double)st->bytes[t] / (double)st->n[t]);
    }
    ob_fmt(f, "total %llu %llu\n", (unsigned long long)n, (unsigned long long)bytes);
}

/* @return : 0 complete (or read to the window's end), 2 truncated,
 * corrupt or unreadable. */
static int cp_dump_file(const char *path, cp_ob *f, cp_dstats *st, const cp_wspan *w)
{
    const char *err;
    cp_dec *d = cp_dec_open(path, &err);
    if (!d) {
        ob_flush(f);
        fflush(f->f);
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    const cp_record *r;
    int rc;
    unsigned prev_type = 0;
    uint64_t prev_off = 0, prev_len = 0;
    /* The cached API names point into this reader. */
    memset(f->api, 0, sizeof f->api);
    int prev_in = 0;
    while ((rc = cp_dec_next_ref(d, &r)) == 1) {
        /* A window (--since, --until): the records in it, none after. */
        if (r->ts >= w->hi) {
            rc = 0;
            break;
        }
        int in = r->ts >= w->lo;
        if (!st) {
            /* An id announced again has a new name (the old one freed). */
            if (r->type == CP_REC_API && r->u.api.api_id < CP_OB_APIS)
                f->api[r->u.api.api_id].s = NULL;
            if (in)
                cp_dump_record(f, d, r);
            continue;
        }
        /* A record's size is where the next one starts. */
        if (prev_type && prev_in) {
            st->n[prev_type & 255]++;
            st->bytes[prev_type & 255] += r->offset - prev_off;
        }
        prev_type = r->type;   /* never 0: the reader refuses type 0 */
        prev_off = r->offset;
        prev_len = r->payload_len;
        prev_in = in;
    }
    if (st && prev_type && prev_in) {
        /* The last one: payload, type, length and ts/tid, about. */
        st->n[prev_type & 255]++;
        st->bytes[prev_type & 255] += prev_len + 4;
    }
    ob_flush(f);
    fflush(f->f);
    if (rc < 0)
        fprintf(stderr, "%s\n", cp_dec_err(d));
    cp_dec_close(d);
    return rc < 0 ? 2 : 0;
}

static void cp_dump_usage(FILE *o)
{
    fputs("usage: cuprobe dump [--stats] [TRACE|DIR]... [--since S] [--until S]\n"
          "  every record of each trace as one line of text;\n"
          "  no TRACE: the traces of the last `cuprobe run` here;\n"
          "  --stats: records and raw bytes per record type instead;\n"
          "  --since S, --until S: only the records from S seconds (12.5) after the run's\n"
          "  start (the earliest process start of the traces read), and before S seconds\n"
          "  after it\n"
          "Exit status: 0 ok, 2 usage error or an unreadable trace.\n", o);
}

int cp_dump_main(int argc, char **argv)
{
    int stats = 0;
    cp_filter filter = CP_FILTER_NONE;
    const cp_opt opts[] = {
        { "--stats", NULL, CP_ARG_NONE, &stats, 1, 0, NULL,
          "counts records per type instead of printing them", 0, 0, 0, 0, NULL },
        CP_OPT_WINDOW(&filter, 0),
    };
    const cp_optset set = { "dump", opts, sizeof opts / sizeof *opts, NULL, 0, 1,
                            cp_dump_usage };
    cp_optv v;
    int rc = cp_opts_read(&set, argc, argv, &v);
    if (rc == 0)
        rc = cp_filter_check(&filter, "dump");
    char **paths;
    size_t n;
    if (rc != 0 || cp_report_inputs(v.in, v.n_in, "dump", &paths, &n) != 0) {
        free(v.in);
        return rc > 0 ? 0 : 2;
    }
    free(v.in);
    cp_wspan *span = calloc(n ? n : 1, sizeof *span);
    if (!span) {
        fprintf(stderr, "dump: out of memory\n");
        cp_report_inputs_free(paths, n);
        return 2;
    }
    cp_window win;
    if (cp_filter_has_window(&filter))
        cp_window_place(&filter, paths, n, span, &win);
    else
        for (size_t i = 0; i < n; i++)
            span[i] = (cp_wspan){ 0, CP_WINDOW_END, 0 };
    static cp_ob ob;
    ob.f = stdout;
    ob.p = ob.buf;
    ob.end = ob.buf + sizeof ob.buf;
    int status = 0;
    /* The text never shows a known record's offset or payload (an unknown
     * one's length comes whole); --stats sizes records by their offsets. */
    cp_dec_lean_records(!stats);
    for (size_t i = 0; i < n; i++) {
        if (n > 1)
            ob_fmt(&ob, "%s==> %s <==\n", i > 0 ? "\n" : "", paths[i]);
        static cp_dstats st;
        memset(&st, 0, sizeof st);
        if (cp_dump_file(paths[i], &ob, stats ? &st : NULL, &span[i]))
            status = 2;
        if (stats)
            cp_dump_stats(&ob, &st);
    }
    ob_flush(&ob);
    fflush(stdout);
    free(span);
    cp_report_inputs_free(paths, n);
    return status;
}
