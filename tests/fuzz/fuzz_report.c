/*
 * fuzz_report.c - structure-aware fuzz target for the whole analyzer: every
 * check, the model, the text and JSON renderers and dump.
 *
 * An input is a decompressed record stream (u8 type | varint len | payload,
 * include/cp_trace.h), or a whole trace file (then its records are taken
 * out first: the seeds are the golden traces and scenario traces as
 * written).  The custom mutator parses the records with the field layouts
 * below and mutates whole fields (sizes, addresses, devices, string and
 * stack ids, counts, strings), duplicates, drops, moves and swaps records,
 * or cuts the stream at a record boundary; it falls back to libFuzzer's
 * byte mutations for inputs it cannot parse.  Every run re-packs the stream
 * into valid trace files (16-byte prefix, zstd frames with the content
 * checksum), one file per HEADER record (so several processes are judged
 * together), and runs `report --json`, `report` (text) and `dump` on them.
 *
 * Built by tests/sh/report_fuzz.sh with clang -fsanitize=fuzzer,address,
 * undefined and every analyzer source except cp_main.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "cp_dump.h"
#include "cp_report.h"
#include "cp_records.h"
#include "cp_trace.h"
#include "cp_varint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

#define FZ_MAX_RAW (4u << 20)
#define FZ_MAX_RECS 65536u
#define FZ_MAX_FIELDS 512u
#define FZ_MAX_FILES 4

/* ---- field layouts ------------------------------------------------------
 * Expanded from the record table (include/cp_records.h).  After the ts_delta
 * and tid prefix ("uu"): u unsigned varint, s zigzag varint, S string
 * (varint length + bytes), b 16 raw bytes, E the event prefix (u api,
 * u result, u ctx, s dev, u stream, u dur_ns, u stack), n[..] a count
 * followed by that many groups. */
#define FZ_K_U "u"
#define FZ_K_S "s"
#define FZ_K_STR "S"
#define FZ_K_BYTES "b"
#define FZ_K_UOPT "u"
#define FZ_K_UARR "n[u]"
#define FZ_K_PAIRS "n[uu]"
#define FZ_K_STRARR "n[S]"
#define FZ_K_KVARR "n[SS]"
#define FZ_SHAPE_EV "E"
#define FZ_SHAPE_REC ""
#define FZ_SHAPE_BARE ""
#define FZ_F(kind, name, arg, fmt) FZ_K_##kind
#define FZ_R(NAME, id, lname, shape, doc) case id: return FZ_SHAPE_##shape CP_F_##NAME(FZ_F) "";

static const char *fz_layout(unsigned type)
{
    switch (type) {
    CP_RECORDS(FZ_R)
    default: return "";
    }
}

/* One record of the stream: type and payload (prefix included). */
struct fz_rec {
    unsigned type;
    const uint8_t *p;
    size_t n;
    size_t at;         /* offset of the type byte in the stream */
};

/* One field inside a payload: kind ('u', 's', 'S', 'b', 'n' for a count). */
struct fz_field {
    char kind;
    size_t off, len;   /* bytes of the whole encoded field */
};

/* ---- small helpers ------------------------------------------------------ */

static uint64_t g_rng;

static uint64_t fz_rand(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static size_t fz_below(size_t n)
{
    return n ? (size_t)(fz_rand() % n) : 0;
}

/* A trace file's records, or the input itself when it is a stream.
 * @return : bytes in *out (malloc'd, caller frees). */
static size_t fz_to_raw(const uint8_t *d, size_t n, uint8_t **out)
{
    *out = NULL;
    if (n < CP_TRACE_PREFIX_BYTES || memcmp(d, CP_TRACE_MAGIC, 8) != 0) {
        *out = malloc(n ? n : 1);
        if (*out)
            memcpy(*out, d, n);
        return *out ? n : 0;
    }
    size_t cap = 1u << 16, len = 0;
    uint8_t *b = malloc(cap);
    ZSTD_DCtx *z = ZSTD_createDCtx();
    ZSTD_inBuffer in = {d + CP_TRACE_PREFIX_BYTES, n - CP_TRACE_PREFIX_BYTES, 0};
    while (b && z && in.pos < in.size && len < FZ_MAX_RAW) {
        if (cap - len < 4096) {
            uint8_t *nb = realloc(b, cap * 2);
            if (!nb)
                break;
            b = nb;
            cap *= 2;
        }
        ZSTD_outBuffer o = {b, cap, len};
        size_t r = ZSTD_decompressStream(z, &o, &in);
        if (ZSTD_isError(r) || (o.pos == len && r != 0 && in.pos == in.size))
            break;
        len = o.pos;
    }
    ZSTD_freeDCtx(z);
    *out = b;
    return b ? len : 0;
}

/* Split a stream into records; stops at the first one that does not fit.
 * @return : records found; *tail set to the bytes that did not parse. */
static size_t fz_parse(const uint8_t *d, size_t n, struct fz_rec *recs, size_t max,
                       size_t *tail)
{
    const uint8_t *p = d, *e = d + n;
    size_t k = 0;
    while (p < e && k < max) {
        const uint8_t *q = p + 1;
        uint64_t len;
        if (cp_get_u(&q, e, &len) || len > (uint64_t)(e - q))
            break;
        recs[k].type = p[0];
        recs[k].at = (size_t)(p - d);
        recs[k].p = q;
        recs[k].n = (size_t)len;
        k++;
        p = q + len;
    }
    *tail = (size_t)(e - p);
    return k;
}

/* Walk `lay` over payload p[0..n) (after the ts/tid prefix), appending
 * fields.  @return : 0, or -1 when the payload ends early (fields so far
 * are kept). */
static int fz_fields(const char *lay, const uint8_t *base, const uint8_t **pp,
                     const uint8_t *e, struct fz_field *f, size_t *nf)
{
    const uint8_t *p = *pp;
    for (const char *c = lay; *c; c++) {
        if (*nf >= FZ_MAX_FIELDS)
            return -1;
        if (*c == 'E') {
            if (fz_fields("uuusuuu", base, &p, e, f, nf) < 0)
                return -1;
            continue;
        }
        if (*c == ']')
            continue;
        const uint8_t *s = p;
        uint64_t v;
        if (*c == 'b') {
            if (e - p < 16)
                return -1;
            p += 16;
        } else if (cp_get_u(&p, e, &v)) {
            return -1;
        } else if (*c == 'S') {
            if (v > (uint64_t)(e - p))
                return -1;
            p += v;
        }
        f[*nf].kind = *c == 'n' ? 'n' : *c;
        f[*nf].off = (size_t)(s - base);
        f[*nf].len = (size_t)(p - s);
        (*nf)++;
        if (*c == 'n') {
            /* n[group]: the group, v times (bounded: the payload ends). */
            const char *g = c + 2, *ge = strchr(g, ']');
            char grp[16];
            size_t gl = (size_t)(ge - g);
            memcpy(grp, g, gl);
            grp[gl] = 0;
            for (uint64_t i = 0; i < v; i++) {
                *pp = p;
                if (fz_fields(grp, base, &p, e, f, nf) < 0)
                    return -1;
            }
            c = ge;
        }
    }
    *pp = p;
    return 0;
}

/* ---- mutation ------------------------------------------------------------ */

static const uint64_t fz_special[] = {
    0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 63, 64, 127, 128, 255, 256, 4095, 4096, 65535,
    1u << 20, 2u << 20, 1u << 30, 0x7fffffffu, 0x80000000u, 0xffffffffu, 1ull << 32,
    1ull << 40, 1ull << 47, 0x7fffffffffffffffull, 0x8000000000000000ull,
    0xfffffffffffffffeull, 0xffffffffffffffffull,
};

/* A varint value from somewhere else in the stream (a pointer, an id, a
 * size of another record): mutations that keep values related. */
static uint64_t fz_borrow(const struct fz_rec *recs, size_t nr)
{
    const struct fz_rec *r = &recs[fz_below(nr)];
    const uint8_t *p = r->p + (r->n ? fz_below(r->n) : 0), *e = r->p + r->n;
    uint64_t v = 0;
    if (cp_get_u(&p, e, &v))
        v = 0;
    return v;
}

static uint64_t fz_value(uint64_t old, const struct fz_rec *recs, size_t nr)
{
    switch (fz_below(8)) {
    case 0: case 1:
        return fz_special[fz_below(sizeof fz_special / sizeof *fz_special)];
    case 2: case 3:
        return fz_borrow(recs, nr);
    case 4:
        return old + 1 + fz_below(16);
    case 5:
        return old - 1 - fz_below(16);
    case 6:
        return old ^ (1ull << fz_below(64));
    default:
        return fz_rand() >> fz_below(64);
    }
}

/* Re-encode one record into out (room for everything checked by caller). */
static uint8_t *fz_put_rec(uint8_t *o, unsigned type, const uint8_t *p, size_t n)
{
    *o++ = (uint8_t)type;
    o = cp_put_u(o, n);
    memcpy(o, p, n);
    return o + n;
}

/* Mutate one field of record r into buf.  @return : new payload length. */
static size_t fz_mutate_field(const struct fz_rec *r, const struct fz_rec *recs, size_t nr,
                              uint8_t *buf, size_t cap)
{
    struct fz_field f[FZ_MAX_FIELDS + 8];
    size_t nf = 0;
    const uint8_t *p = r->p, *e = r->p + r->n;
    char lay[64];
    snprintf(lay, sizeof lay, "uu%s", fz_layout(r->type));
    fz_fields(lay, r->p, &p, e, f, &nf);
    if (nf == 0 || r->n + 64 > cap)
        return (size_t)-1;
    const struct fz_field *x = &f[fz_below(nf)];
    uint8_t mid[1024], *m = mid;
    const uint8_t *fp = r->p + x->off;
    if (x->kind == 'S') {
        const uint8_t *q = fp;
        uint64_t sl = 0;
        cp_get_u(&q, fp + x->len, &sl);
        uint8_t s[512];
        size_t n = sl < sizeof s / 2 ? (size_t)sl : sizeof s / 2;
        memcpy(s, q, n);
        n = LLVMFuzzerMutate(s, n, sizeof s);
        m = cp_put_str(m, (const char *)s, n);
    } else if (x->kind == 'b') {
        memcpy(m, fp, 16);
        m[fz_below(16)] = (uint8_t)fz_rand();
        m += 16;
    } else {
        const uint8_t *q = fp;
        uint64_t v = 0;
        if (x->kind == 's') {
            int64_t sv = 0;
            cp_get_s(&q, fp + x->len, &sv);
            v = (uint64_t)sv;
        } else {
            cp_get_u(&q, fp + x->len, &v);
        }
        /* A count or id is most interesting near its old value. */
        v = x->kind == 'n' && fz_below(2) ? v + 1 - fz_below(3) : fz_value(v, recs, nr);
        m = x->kind == 's' ? cp_put_s(m, (int64_t)v) : cp_put_u(m, v);
    }
    size_t ml = (size_t)(m - mid), n = x->off + ml + (r->n - x->off - x->len);
    if (n > cap)
        return (size_t)-1;
    memcpy(buf, r->p, x->off);
    memcpy(buf + x->off, mid, ml);
    memcpy(buf + x->off + ml, fp + x->len, r->n - x->off - x->len);
    return n;
}

static struct fz_rec g_recs[FZ_MAX_RECS];
static uint8_t g_fieldbuf[1 << 16];

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed)
{
    g_rng = seed * 0x9E3779B97F4A7C15ull + 1;
    uint8_t *raw;
    size_t n = fz_to_raw(data, size, &raw), tail;
    size_t nr = raw ? fz_parse(raw, n, g_recs, FZ_MAX_RECS, &tail) : 0;
    if (nr < 2 || fz_below(16) == 0) {
        /* Not a stream we can read (or now and then anyway): bytes. */
        size_t k = n <= max ? n : max;
        if (raw)
            memcpy(data, raw, k);
        free(raw);
        return LLVMFuzzerMutate(data, k, max);
    }
    uint8_t *out = malloc(max + 16);
    if (!out) {
        free(raw);
        return size;
    }
    size_t op = fz_below(10), pick = fz_below(nr), other = fz_below(nr);
    /* The HEADER opens each file: keep the first record in place. */
    if (pick == 0 && op != 0 && op != 1)
        pick = 1 + fz_below(nr - 1);
    size_t fieldlen = (size_t)-1;
    if (op <= 4)
        fieldlen = fz_mutate_field(&g_recs[pick], g_recs, nr, g_fieldbuf, sizeof g_fieldbuf);
    uint8_t *o = out, *oe = out + max;
    size_t times = op == 5 ? 1 + fz_below(8) : 1;
    for (size_t i = 0; i < nr; i++) {
        const struct fz_rec *r = &g_recs[i];
        size_t need = 1 + CP_VARINT_MAX + r->n;
        if (op == 7 && i == pick)
            r = &g_recs[other];          /* overwrite with another record */
        else if (op == 8 && i == pick)
            continue;                    /* drop */
        else if (op == 9 && i == pick)
            break;                       /* cut here (no END) */
        if (op == 6 && (i == pick || i == other))
            r = &g_recs[i == pick ? other : pick];   /* swap */
        if ((size_t)(oe - o) < need + r->n)
            break;
        if (fieldlen != (size_t)-1 && i == pick)
            o = fz_put_rec(o, r->type, g_fieldbuf, fieldlen);
        else
            o = fz_put_rec(o, r->type, r->p, r->n);
        for (size_t t = 0; op == 5 && i == pick && t < times; t++) {
            /* duplicate, e.g. a second FREE of the same pointer */
            if ((size_t)(oe - o) < need)
                break;
            o = fz_put_rec(o, r->type, r->p, r->n);
        }
    }
    size_t len = (size_t)(o - out);
    memcpy(data, out, len);
    free(out);
    free(raw);
    return len;
}

/* ---- running the analyzer ------------------------------------------------- */

static int g_fd[FZ_MAX_FILES];
static char g_path[FZ_MAX_FILES][64];
static ZSTD_CCtx *g_cctx;
static FILE *g_null;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (int i = 0; i < FZ_MAX_FILES; i++) {
        char name[32];
        snprintf(name, sizeof name, "fuzz-%d.trace", i);
        g_fd[i] = memfd_create(name, 0);
        snprintf(g_path[i], sizeof g_path[i], "/proc/self/fd/%d", g_fd[i]);
    }
    g_cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(g_cctx, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(g_cctx, ZSTD_c_checksumFlag, 1);
    /* The reports go nowhere; the sanitizers write to fd 2 themselves. */
    g_null = fopen("/dev/null", "w");
    return 0;
}

/* Write records [a, b) of raw as trace file i.  @return : 0 or -1. */
static int fz_write_file(int i, const uint8_t *a, size_t n)
{
    size_t cap = CP_TRACE_PREFIX_BYTES + ZSTD_compressBound(n);
    uint8_t *f = malloc(cap);
    if (!f)
        return -1;
    memcpy(f, CP_TRACE_MAGIC, 8);
    f[8] = CP_TRACE_VERSION;
    memset(f + 9, 0, 7);
    size_t z = ZSTD_compress2(g_cctx, f + CP_TRACE_PREFIX_BYTES, cap - CP_TRACE_PREFIX_BYTES, a,
                              n);
    int rc = -1;
    if (!ZSTD_isError(z) && ftruncate(g_fd[i], 0) == 0 &&
        pwrite(g_fd[i], f, CP_TRACE_PREFIX_BYTES + z, 0) == (ssize_t)(CP_TRACE_PREFIX_BYTES + z))
        rc = 0;
    free(f);
    return rc;
}

static void fz_run(int argc, char **argv, int (*fn)(int, char **))
{
    FILE *out = stdout, *err = stderr;
    stdout = g_null;
    stderr = g_null;
    fn(argc, argv);
    stdout = out;
    stderr = err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *raw;
    size_t n = fz_to_raw(data, size, &raw), tail;
    if (!raw)
        return 0;
    size_t nr = fz_parse(raw, n, g_recs, FZ_MAX_RECS, &tail);
    /* One file per HEADER (the first file also takes anything before). */
    size_t start[FZ_MAX_FILES + 1], nf = 0;
    start[nf++] = 0;
    for (size_t i = 1; i < nr && nf < FZ_MAX_FILES; i++)
        if (g_recs[i].type == CP_REC_HEADER)
            start[nf++] = g_recs[i].at;
    start[nf] = n;
    char *argv[4 + FZ_MAX_FILES];
    int nfiles = 0;
    for (size_t k = 0; k < nf; k++)
        if (fz_write_file((int)k, raw + start[k], start[k + 1] - start[k]) == 0)
            argv[3 + nfiles++] = g_path[k];
    free(raw);
    if (!nfiles)
        return 0;
    argv[0] = "report";
    argv[1] = "--no-symbolize";
    argv[2] = "--json";
    argv[3 + nfiles] = NULL;
    fz_run(3 + nfiles, argv, cp_report_main);
    argv[2] = "--no-progress";
    fz_run(3 + nfiles, argv, cp_report_main);
    /* A window cutting the traces (times a fuzzed trace makes up). */
    char *wargv[8 + FZ_MAX_FILES] = { "report", "--no-symbolize", "--list", "--since",
                                      "0.0000005", "--until", "0.0002" };
    for (int k = 0; k < nfiles; k++)
        wargv[7 + k] = argv[3 + k];
    wargv[7 + nfiles] = NULL;
    fz_run(7 + nfiles, wargv, cp_report_main);
    char *dargv[] = {"dump", g_path[0], NULL};
    fz_run(2, dargv, cp_dump_main);
    return 0;
}
