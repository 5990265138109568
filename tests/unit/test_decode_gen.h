/*
 * test_decode_gen.h - writes a small synthetic trace holding every record
 * type of include/cp_trace.h with fixed values (plus an unknown type and a
 * record with an appended field), split over two zstd frames with a flush.
 * Used by test_decode.c, the golden dump test and the fuzz corpus.
 */
#ifndef TEST_DECODE_GEN_H
#define TEST_DECODE_GEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cp_trace.h"
#include "cp_varint.h"

struct gen {
    uint8_t *raw;         /* decompressed stream being built */
    size_t n, cap;
    uint64_t prev_ts, ts;
    uint8_t f[4096];      /* fields of the record being built */
    uint8_t *p;
    unsigned type;
    uint64_t tid;
};

static void gen_begin(struct gen *g, unsigned type, uint64_t tid)
{
    g->type = type;
    g->tid = tid;
    g->p = g->f;
    g->ts += 1000;
}

static void gen_end(struct gen *g)
{
    uint8_t pre[2 * CP_VARINT_MAX];
    uint8_t *q = cp_put_u(pre, g->ts - g->prev_ts);
    q = cp_put_u(q, g->tid);
    g->prev_ts = g->ts;
    size_t fl = (size_t)(g->p - g->f), pl = (size_t)(q - pre) + fl;
    if (g->n + pl + 16 > g->cap) {
        g->cap = (g->cap + pl + 16) * 2;
        g->raw = realloc(g->raw, g->cap);
    }
    uint8_t *o = g->raw + g->n;
    *o++ = (uint8_t)g->type;
    o = cp_put_u(o, pl);
    memcpy(o, pre, (size_t)(q - pre));
    o += q - pre;
    memcpy(o, g->f, fl);
    g->n = (size_t)(o + fl - g->raw);
}

#define GU(v) (g->p = cp_put_u(g->p, (v)))
#define GS(v) (g->p = cp_put_s(g->p, (v)))
#define GSTR(s) (g->p = cp_put_str(g->p, (s), strlen(s)))

static void gen_ev(struct gen *g, uint64_t api, int64_t dev)
{
    GU(api);
    GU(0);              /* result */
    GU(0x5550000);      /* ctx */
    GS(dev);
    GU(0x5560000);      /* stream */
    GU(1234);           /* dur_ns */
    GU(1);              /* stack */
}

/* Every record type, in an order the analyzer would accept. */
static void gen_records(struct gen *g)
{
    g->ts = 5000000000ull;
    gen_begin(g, CP_REC_HEADER, 1);
    GU(4242); GU(4241); GU(1700000000123456789ull); GU(1);
    GSTR("host-a"); GSTR("/usr/bin/python3"); GSTR("0.1.0");
    GU(3); GSTR("python3"); GSTR("train.py"); GSTR("--lr=0.1 \"quoted\"\n");
    GU(2); GSTR("RANK"); GSTR("0"); GSTR("CUDA_VISIBLE_DEVICES"); GSTR("1,0");
    GU(4096);
    gen_end(g);
    gen_begin(g, CP_REC_THREAD, 1); GU(4242); GSTR("python3"); gen_end(g);
    gen_begin(g, CP_REC_MODULE_RESET, 1); gen_end(g);
    gen_begin(g, CP_REC_MODULE, 1);
    GU(0x400000); GU(0x10000); GU(0); GSTR("/usr/bin/python3"); GSTR("abcdef0123");
    gen_end(g);
    gen_begin(g, CP_REC_STRING, 1); GU(1); GSTR("train.py"); gen_end(g);
    gen_begin(g, CP_REC_STRING, 1); GU(2); GSTR("step"); gen_end(g);
    gen_begin(g, CP_REC_PYFRAME, 1); GU(1); GU(1); GU(2); GU(42); gen_end(g);
    gen_begin(g, CP_REC_STACK, 1);
    GU(1); GU(3); GU(0x401000); GU(0x402000); GU(0x7f0000001234ull); GU(1); GU(1);
    gen_end(g);
    gen_begin(g, CP_REC_API, 1); GU(1); GSTR("cuMemAlloc_v2"); GU(1u << CP_ROUTE_GPA2); gen_end(g);
    gen_begin(g, CP_REC_API, 1); GU(2); GSTR("cuMemcpyHtoDAsync_v2"); GU(1u << CP_ROUTE_SYMBOL);
    gen_end(g);
    gen_begin(g, CP_REC_DLOPEN, 1);
    GSTR("libcuda.so.1"); GU(0x102); GU(1); GSTR("/usr/lib/libcuda.so.1"); GSTR("");
    GU(CP_LIB_DRIVER);
    gen_end(g);
    gen_begin(g, CP_REC_DRIVER, 1); GS(12040); GU(0); gen_end(g);
    gen_begin(g, CP_REC_DEVICE, 1);
    GU(0); GSTR("NVIDIA H200");
    for (int i = 0; i < 16; i++)
        *g->p++ = (uint8_t)(0x10 + i);
    GU(0); GU(0x1b); GU(0); GU(9); GU(0); GU(150000000000ull); GU(0); GU(0); GU(132);
    gen_end(g);
    gen_begin(g, CP_REC_CALL, 1); gen_ev(g, 7, -1); gen_end(g);
    gen_begin(g, CP_REC_ALLOC, 1); gen_ev(g, 1, 0);
    GU(CP_MK_DEVICE); GU(0x7f1200000000ull); GU(1 << 20); GU(0); GU(0); gen_end(g);
    gen_begin(g, CP_REC_COPY, 1); gen_ev(g, 2, 0);
    GU(4096); GU(CP_MC_DEVICE); GS(0); GU(CP_MC_PAGEABLE); GS(-1);
    GU(0x7f1200000000ull); GU(0x55aa00); GU(CP_CF_ASYNC | CP_CF_CAPTURING); GU(0);
    gen_end(g);
    gen_begin(g, CP_REC_MEMSET, 1); gen_ev(g, 3, 0);
    GU(0x7f1200000000ull); GU(64); GU(CP_MC_DEVICE); GS(0); gen_end(g);
    gen_begin(g, CP_REC_CTX, 1); gen_ev(g, 4, 0);
    GU(CP_CTX_PUSH); GU(0x5550000); GS(0); GU(0); gen_end(g);
    gen_begin(g, CP_REC_STREAM, 1); gen_ev(g, 5, 0);
    GU(CP_STREAM_CREATE); GU(0x5560000); GU(1); GS(-2); gen_end(g);
    gen_begin(g, CP_REC_VMM, 1); gen_ev(g, 6, 0);
    GU(CP_VMM_MAP); GU(0x7f2000000000ull); GU(2 << 20); GU(0x99); GU(1); GS(0); GU(0); GU(0);
    gen_end(g);
    gen_begin(g, CP_REC_POOL, 1); gen_ev(g, 8, 0);
    GU(CP_POOL_SET_ATTR); GU(0x77); GS(0); GU(4); GU(1 << 30); gen_end(g);
    gen_begin(g, CP_REC_LAUNCH_COUNT, 1); GU(9); GU(0x88); GU(1000); GSTR("gemm_kernel");
    gen_end(g);
    gen_begin(g, CP_REC_XDEV, 1); gen_ev(g, 9, 1);
    GU(0x88); GU(2); GU(0x7f1200000100ull); GS(0); GU(0x7f1200000000ull); GU(1 << 20);
    GSTR("gemm_kernel");
    gen_end(g);
    gen_begin(g, CP_REC_SYNC, 1); gen_ev(g, 10, 0); GU(CP_SYNC_STREAM); gen_end(g);
    gen_begin(g, 99, 1); GU(1); GU(2); gen_end(g);   /* a type from the future */
    gen_begin(g, CP_REC_FREE, 2); gen_ev(g, 11, 0);
    GU(CP_MK_DEVICE); GU(0x7f1200000000ull); GU(1 << 20);
    GU(777);                                        /* an appended field */
    gen_end(g);
    gen_begin(g, CP_REC_OOM, 1); gen_ev(g, 1, 0);
    GU(1ull << 34); GU(1 << 20); GU(150000000000ull); GU(2); GU(4242); GU(1 << 30);
    GU(5151); GU(2ull << 30);
    gen_end(g);
    gen_begin(g, CP_REC_FORK, 1); GU(4300); gen_end(g);
    gen_begin(g, CP_REC_EXEC, 1); GSTR("/bin/sh"); GS(2); gen_end(g);
    gen_begin(g, CP_REC_SIGNAL, 1); GU(11); GS(1); GU(0xdead); gen_end(g);
    gen_begin(g, CP_REC_LOST, 0); GU(5); GSTR("test"); gen_end(g);
    gen_begin(g, CP_REC_LOG, 1); GU(1); GSTR("a warning\twith tab"); gen_end(g);
    gen_begin(g, CP_REC_FRAMEWORK, 1); GSTR("torch"); GSTR("{\"reserved\": 1}"); gen_end(g);
    gen_begin(g, CP_REC_END, 0); GU(CP_END_EXIT); GS(0); GU(33); GU(5); gen_end(g);
}

/* Values at the edges of the dump's hand-written number formatting (0,
 * 9/10, 99/100, powers of ten, 2^64-1, INT64_MIN, hex of odd and even
 * digit counts), every escape of a string, unknown copy flags and an API
 * id announced again under another name (the dump caches names by id). */
static void gen_edge_records(struct gen *g)
{
    static const uint64_t u[] = {
        0, 1, 9, 10, 99, 100, 999, 1000, 65535, 999999999, 1000000000,
        4294967295ull, 9999999999999999999ull, 10000000000000000000ull, UINT64_MAX,
    };
    static const int64_t sv[] = { 0, -1, 1, -10, 99, -100, INT64_MAX, INT64_MIN };
    static const uint64_t hx[] = {
        0, 1, 0xf, 0x10, 0xab, 0x100, 0xfff, 0x1000, 0x7f1200000000ull,
        0x7ff123456789abcull, 0xfedcba9876543210ull,
    };
    g->ts = 0;
    gen_begin(g, CP_REC_HEADER, 0);
    GU(1); GU(0); GU(0); GU(0);
    GSTR(""); GSTR("/x"); GSTR("v");
    GU(0); GU(0); GU(UINT64_MAX);
    gen_end(g);
    gen_begin(g, CP_REC_API, 1); GU(1); GSTR("cuMemAlloc_v2"); GU(0); gen_end(g);
    gen_begin(g, CP_REC_API, 1); GU(600); GSTR("cuFar"); GU(0xff); gen_end(g);
    for (size_t i = 0; i < sizeof u / sizeof *u; i++) {
        gen_begin(g, CP_REC_ALLOC, i);
        GU(1); GU(u[i]); GU(hx[i % (sizeof hx / sizeof *hx)]); GS(sv[i % 8]);
        GU(hx[(i + 3) % (sizeof hx / sizeof *hx)]); GU(u[i]); GU(i);
        GU(i % 9); GU(hx[i % (sizeof hx / sizeof *hx)]); GU(u[i]); GU(0);
        GU(u[(i + 7) % (sizeof u / sizeof *u)]);
        gen_end(g);
        g->ts += u[i] / 7;    /* times from 0 s to centuries */
    }
    for (size_t i = 0; i < sizeof sv / sizeof *sv; i++) {
        gen_begin(g, CP_REC_COPY, 2);
        GU(i + 599); GU(i); GU(0); GS(sv[i]); GU(0); GU(0); GU(0);
        GU(u[i]); GU(i); GS(sv[7 - i]); GU(i + 7); GS(sv[i]);
        GU(hx[i]); GU(hx[10 - i]); GU((uint64_t)1 << (i * 4)); GU(u[i]);
        gen_end(g);
    }
    /* id 1 again, renamed: later records show the new name. */
    gen_begin(g, CP_REC_API, 1); GU(1); GSTR("cuMemAllocAsync"); GU(4); gen_end(g);
    gen_begin(g, CP_REC_CALL, 1); GU(1); GU(2); GU(0); GS(0); GU(0); GU(5); GU(0); gen_end(g);
    gen_begin(g, CP_REC_CALL, 1); GU(7777); GU(0); GU(0); GS(0); GU(0); GU(5); GU(0); gen_end(g);
    gen_begin(g, CP_REC_CALL, 1); GU(300); GU(0); GU(0); GS(0); GU(0); GU(5); GU(0); gen_end(g);
    char esc[300];
    size_t k = 0;
    for (int c = 1; c < 256; c++)
        esc[k++] = (char)c;
    esc[k] = 0;
    gen_begin(g, CP_REC_LOG, 1); GU(2); GSTR(esc); gen_end(g);
    gen_begin(g, CP_REC_END, 0); GU(CP_END_EXIT); GS(INT64_MIN); GU(UINT64_MAX); GU(0); gen_end(g);
}

/* Compress raw into two frames (cut at `split`), with a flush inside the
 * first, behind the 16-byte prefix.  @return : malloc'd file, *len set. */
static uint8_t *gen_file(const uint8_t *raw, size_t n, size_t split, size_t *len)
{
    size_t cap = CP_TRACE_PREFIX_BYTES + ZSTD_compressBound(n) + 4096;
    uint8_t *out = malloc(cap);
    memcpy(out, CP_TRACE_MAGIC, 8);
    uint32_t v = CP_TRACE_VERSION, fl = 0;
    memcpy(out + 8, &v, 4);
    memcpy(out + 12, &fl, 4);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    ZSTD_outBuffer ob = {out, cap, CP_TRACE_PREFIX_BYTES};
    size_t half = split / 2;
    ZSTD_inBuffer a = {raw, half, 0}, b = {raw + half, split - half, 0},
                  d = {raw + split, n - split, 0};
    while (ZSTD_compressStream2(c, &ob, &a, ZSTD_e_flush)) {}
    while (ZSTD_compressStream2(c, &ob, &b, ZSTD_e_end)) {}
    while (ZSTD_compressStream2(c, &ob, &d, ZSTD_e_end)) {}
    ZSTD_freeCCtx(c);
    *len = ob.pos;
    return out;
}

#undef GU
#undef GS
#undef GSTR

#endif /* TEST_DECODE_GEN_H */
