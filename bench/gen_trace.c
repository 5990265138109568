// nolink
/*
 * gen_trace.c - write a valid cuprobe trace (include/cp_trace.h) of N
 * event records, for measuring the analyzer and for traces the fake driver
 * cannot produce.
 *
 *   gen_trace [-n EVENTS] [-o FILE] [-l LIVE] [-s SEED] [-r RANK] [-k KIND]
 *             [-H HOST] [-p PID] [-P PPID] [-T START]
 *     -n  event records to write (default 1000000)
 *     -o  output file (default gen.trace)
 *     -l  allocations kept live at most (default 4096)
 *     -s  random seed (default 1)
 *     -r  a rank of a job: pid 10000+RANK, RANK and LOCAL_RANK (RANK % 8) in
 *         its environment (default: pid 4242, no rank)
 *     -t  distinct call stacks (default 64)
 *     -H  the HEADER's host (default genhost)
 *     -p  the process id (default: 4242, or 10000+RANK with -r); -P its
 *         parent's (default 1)
 *     -T  the first record's time in seconds of the trace clock (default 1):
 *         processes of one pid on one host are told apart by it
 *     -c  a FORK record of this child pid after cuInit (the child's own
 *         trace, -p CHILD -P PID, then is a fork-after-init)
 *     -F  bytes of records between zstd flushes (default 65536)
 *     -b  percent of alloc/free events that allocate (default 50; higher
 *         values fill the live set up to -l)
 *     -k  mix      a training-like mix: alloc/free, copies (some pageable),
 *                  launch counts, syncs, failing calls (default)
 *         nobinary a small trace: cuInit, then cuModuleLoadData failing with
 *                  CUDA_ERROR_NO_BINARY_FOR_GPU on a cc 12.0 device
 *         live     EVENTS allocations that are never freed (the analyzer's
 *                  memory per live allocation), over -t call stacks
 *
 * zstd is loaded at run time (libzstd.so.1) so the program builds with the
 * Makefile's plain rule for bench/.  Each 4 MiB of records becomes one zstd
 * frame, as the shim writes them.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "cp_trace.h"
#include "cp_varint.h"

static size_t (*z_stream2)(ZSTD_CCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *, ZSTD_EndDirective);
static ZSTD_CCtx *(*z_create)(void);
static size_t (*z_setp)(ZSTD_CCtx *, ZSTD_cParameter, int);
static unsigned (*z_iserr)(size_t);

static FILE *g_out;
static ZSTD_CCtx *g_z;
static uint8_t *g_buf;              /* uncompressed records of the current frame */
static size_t g_len;                /* records not yet handed to zstd */
static size_t g_frame;              /* record bytes in the current frame */
static uint8_t g_zout[1 << 20];
static uint64_t g_ts, g_last_ts;
static uint64_t g_stacks = 64;
static unsigned g_bias = 50;
static size_t g_flush_at = 64 << 10;   /* bytes of records between flushes */

static void die(const char *m)
{
    fprintf(stderr, "gen_trace: %s\n", m);
    exit(1);
}

static void z_flush(ZSTD_EndDirective how)
{
    ZSTD_inBuffer in = { g_buf, g_len, 0 };
    size_t left;
    do {
        ZSTD_outBuffer out = { g_zout, sizeof g_zout, 0 };
        left = z_stream2(g_z, &out, &in, how);
        if (z_iserr(left))
            die("zstd failed");
        if (fwrite(g_zout, 1, out.pos, g_out) != out.pos)
            die("write failed");
    } while (left != 0 || in.pos < in.size);
    g_len = 0;
    if (how == ZSTD_e_end)
        g_frame = 0;
}

/* One record: type, length, then ts delta and tid, then the fields. */
static uint8_t g_rec[1 << 16];

static void emit(unsigned type, const uint8_t *fields, size_t n, uint64_t tid)
{
    uint8_t pre[32], *p = pre;
    p = cp_put_u(p, g_ts - g_last_ts);
    p = cp_put_u(p, tid);
    g_last_ts = g_ts;
    size_t plen = (size_t)(p - pre) + n;
    if (g_frame + plen + 16 > CP_FRAME_MAX_BYTES)
        z_flush(ZSTD_e_end);
    else if (g_len >= g_flush_at)
        z_flush(ZSTD_e_flush);      /* as the shim's periodic flush: a cut file decodes */
    g_buf[g_len++] = (uint8_t)type;
    g_len = (size_t)(cp_put_u(g_buf + g_len, plen) - g_buf);
    memcpy(g_buf + g_len, pre, (size_t)(p - pre));
    g_len += (size_t)(p - pre);
    memcpy(g_buf + g_len, fields, n);
    g_len += n;
    g_frame += (size_t)(cp_put_u(pre, plen) - pre) + 1 + plen;
}

#define F_BEGIN uint8_t *f = g_rec
#define F_END(type, tid) emit((type), g_rec, (size_t)(f - g_rec), (tid))
#define S(s) f = cp_put_str(f, (s), strlen(s))

static uint8_t *ev(uint8_t *f, uint64_t api, uint64_t res, uint64_t ctx, int dev, uint64_t stream,
                   uint64_t dur, uint64_t stack)
{
    f = cp_put_u(f, api);
    f = cp_put_u(f, res);
    f = cp_put_u(f, ctx);
    f = cp_put_s(f, dev);
    f = cp_put_u(f, stream);
    f = cp_put_u(f, dur);
    return cp_put_u(f, stack);
}

static uint64_t g_rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

enum { A_INIT = 1, A_ALLOC, A_FREE, A_HTOD_ASYNC, A_DTOH, A_SYNC, A_LAUNCH, A_RETAIN,
       A_SET, A_MODLOAD, A_GPA };
static const char *const g_api_names[] = { "", "cuInit", "cuMemAlloc_v2", "cuMemFree_v2",
                                           "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoH_v2",
                                           "cuStreamSynchronize", "cuLaunchKernel",
                                           "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent",
                                           "cuModuleLoadData", "cuGetProcAddress_v2" };

static long g_rank = -1;
static const char *g_host = "genhost";
static uint64_t g_pid, g_ppid = 1, g_child;

static void preamble(unsigned cc_major)
{
    uint64_t pid = g_pid ? g_pid : g_rank >= 0 ? 10000 + (uint64_t)g_rank : 4242;
    char rk[24], lrk[24];
    snprintf(rk, sizeof rk, "%ld", g_rank);
    snprintf(lrk, sizeof lrk, "%ld", g_rank % 8);
    F_BEGIN;
    /* HEADER: the first record's ts is absolute */
    f = cp_put_u(f, pid);
    f = cp_put_u(f, g_ppid);
    f = cp_put_u(f, 1700000000000000000ull);
    f = cp_put_u(f, 1);
    S(g_host);
    S("/opt/gen/train");
    S("gen");
    f = cp_put_u(f, 2);
    S("/opt/gen/train");
    S("--steps");
    f = cp_put_u(f, g_rank >= 0 ? 3 : 1);
    S("CUDA_VISIBLE_DEVICES");
    S("0");
    if (g_rank >= 0) {
        S("RANK");
        S(rk);
        S("LOCAL_RANK");
        S(lrk);
    }
    f = cp_put_u(f, 4096);
    g_last_ts = 0;
    F_END(CP_REC_HEADER, 0);
    f = g_rec;
    f = cp_put_u(f, pid);
    S("main");
    F_END(CP_REC_THREAD, 1);
    f = g_rec;
    F_END(CP_REC_MODULE_RESET, 1);
    static const char *const mods[] = { "/opt/gen/train", "/usr/lib/libcuda.so.1",
                                        "/usr/lib/libcudart.so.12" };
    for (int i = 0; i < 3; i++) {
        f = g_rec;
        f = cp_put_u(f, 0x400000ull + (uint64_t)i * 0x1000000);
        f = cp_put_u(f, 0x100000);
        f = cp_put_u(f, 0x1000);
        S(mods[i]);
        S("");
        F_END(CP_REC_MODULE, 1);
    }
    for (unsigned a = 1; a < sizeof g_api_names / sizeof *g_api_names; a++) {
        f = g_rec;
        f = cp_put_u(f, a);
        S(g_api_names[a]);
        f = cp_put_u(f, CP_ROUTE_GPA2);
        F_END(CP_REC_API, 1);
    }
    f = g_rec;
    f = cp_put_s(f, 12040);
    f = cp_put_u(f, 0);
    F_END(CP_REC_DRIVER, 1);
    f = g_rec;
    f = cp_put_u(f, 0);
    S("Gen GPU");
    for (int i = 0; i < 16; i++)
        *f++ = (uint8_t)(0x10 + i);
    f = cp_put_u(f, 0);
    f = cp_put_u(f, 0x3b);
    f = cp_put_u(f, 0);
    f = cp_put_u(f, cc_major);
    f = cp_put_u(f, 0);
    f = cp_put_u(f, 80ull << 30);
    f = cp_put_u(f, 0);
    f = cp_put_u(f, 0);
    f = cp_put_u(f, 132);
    F_END(CP_REC_DEVICE, 1);
    /* stacks 1..64: a few frames in the program's module */
    for (uint64_t s = 1; s <= g_stacks; s++) {
        f = g_rec;
        f = cp_put_u(f, s);
        f = cp_put_u(f, 4);
        for (int i = 0; i < 4; i++)
            f = cp_put_u(f, 0x400000 + 0x1000 + s * 64 + (uint64_t)i * 8);
        f = cp_put_u(f, 0);
        F_END(CP_REC_STACK, 1);
    }
    f = g_rec;
    f = ev(f, A_INIT, 0, 0, -1, 0, 1000, 1);
    F_END(CP_REC_CALL, 1);
    f = g_rec;
    f = ev(f, A_RETAIN, 0, 0xc0, 0, 0, 1000, 2);
    f = cp_put_u(f, CP_CTX_RETAIN);
    f = cp_put_u(f, 0xc0);
    f = cp_put_s(f, 0);
    f = cp_put_u(f, 0);
    F_END(CP_REC_CTX, 1);
    if (g_child) {
        f = g_rec;
        f = cp_put_u(f, g_child);
        F_END(CP_REC_FORK, 1);
    }
}

static void finish(uint64_t nrec)
{
    F_BEGIN;
    f = cp_put_u(f, CP_END_EXIT);
    f = cp_put_s(f, 0);
    f = cp_put_u(f, nrec);
    f = cp_put_u(f, 0);
    F_END(CP_REC_END, 1);
    z_flush(ZSTD_e_end);
}

static void gen_nobinary(void)
{
    preamble(12);
    F_BEGIN;
    g_ts += 5000;
    f = ev(f, A_MODLOAD, 209 /* CUDA_ERROR_NO_BINARY_FOR_GPU */, 0xc0, 0, 0, 20000, 3);
    F_END(CP_REC_CALL, 1);
    finish(20);
}

/* A cuMemAlloc_v2 of size at ptr on device 0, from stack. */
static void put_alloc(uint64_t stack, uint64_t ptr, uint64_t size)
{
    F_BEGIN;
    f = ev(f, A_ALLOC, 0, 0xc0, 0, 0, 3000, stack);
    f = cp_put_u(f, CP_MK_DEVICE);
    f = cp_put_u(f, ptr);
    f = cp_put_u(f, size);
    f = cp_put_u(f, 0);
    f = cp_put_u(f, 0);
    F_END(CP_REC_ALLOC, 1);
}

/* n allocations, none freed: addresses ascending, sizes and stacks drawn
 * as in the mix. */
static void gen_live(uint64_t n)
{
    preamble(9);
    uint64_t next_ptr = 0x7f0000000000ull;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        uint64_t size = 256ull << ((r >> 32) % 8);
        g_ts += 200 + (r >> 20) % 2000;
        put_alloc(1 + (r >> 8) % g_stacks, next_ptr, size);
        next_ptr += size;
    }
    finish(n);
}

static void gen_mix(uint64_t n, size_t live_max)
{
    preamble(9);
    uint64_t *live = calloc(live_max, sizeof *live);
    uint64_t *lsz = calloc(live_max, sizeof *lsz);
    size_t nlive = 0;
    uint64_t next_ptr = 0x7f0000000000ull;
    if (!live || !lsz)
        die("out of memory");
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = rnd();
        unsigned what = (unsigned)(r % 100);
        uint64_t stack = 1 + (r >> 8) % g_stacks;
        g_ts += 200 + (r >> 20) % 2000;
        F_BEGIN;
        int alloc = what < 50 && (r >> 48) % 100 < g_bias;
        if (what < 50 && alloc && nlive < live_max) {
            uint64_t size = 256ull << ((r >> 32) % 16);
            put_alloc(stack, next_ptr, size);
            live[nlive] = next_ptr;
            lsz[nlive++] = size;
            next_ptr += size + 256;
        } else if (what < 50 && nlive && !alloc) {
            size_t k = (size_t)((r >> 24) % nlive);
            f = ev(f, A_FREE, 0, 0xc0, 0, 0, 2000, stack);
            f = cp_put_u(f, CP_MK_DEVICE);
            f = cp_put_u(f, live[k]);
            f = cp_put_u(f, lsz[k]);
            F_END(CP_REC_FREE, 1);
            live[k] = live[--nlive];
            lsz[k] = lsz[nlive];
        } else if (what < 75) {
            int pageable = what < 53;
            f = ev(f, A_HTOD_ASYNC, 0, 0xc0, 0, 0x5, 1500, stack);
            f = cp_put_u(f, 1 << 20);
            f = cp_put_u(f, CP_MC_DEVICE);
            f = cp_put_s(f, 0);
            f = cp_put_u(f, pageable ? CP_MC_PAGEABLE : CP_MC_PINNED);
            f = cp_put_s(f, -1);
            f = cp_put_u(f, 0x7f0000000000ull);
            f = cp_put_u(f, 0x600000000000ull + (r & 0xffff0));
            f = cp_put_u(f, CP_CF_ASYNC);
            f = cp_put_u(f, 0);
            F_END(CP_REC_COPY, 1);
        } else if (what < 90) {
            f = cp_put_u(f, A_LAUNCH);
            f = cp_put_u(f, 0xf000 + (r >> 40) % 32);
            f = cp_put_u(f, 4096);
            S("gen_kernel");
            F_END(CP_REC_LAUNCH_COUNT, 1);
        } else if (what < 97) {
            f = ev(f, A_SYNC, 0, 0xc0, 0, 0x5, 50000, stack);
            f = cp_put_u(f, CP_SYNC_STREAM);
            F_END(CP_REC_SYNC, 1);
        } else {
            f = ev(f, A_DTOH, 1, 0xc0, 0, 0, 800, stack);
            F_END(CP_REC_CALL, 1);
        }
    }
    finish(n);
    free(live);
    free(lsz);
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000;
    size_t live = 4096;
    const char *out = "gen.trace", *kind = "mix";
    uint64_t t0 = 1000000000ull;
    int c;
    while ((c = getopt(argc, argv, "n:o:l:s:k:t:F:b:r:H:p:P:T:c:")) != -1) {
        switch (c) {
        case 'n': n = strtoull(optarg, NULL, 10); break;
        case 'o': out = optarg; break;
        case 'l': live = strtoull(optarg, NULL, 10); break;
        case 's': g_rng ^= strtoull(optarg, NULL, 10) * 0x9E3779B97F4A7C15ull; break;
        case 'k': kind = optarg; break;
        case 'r': g_rank = strtol(optarg, NULL, 10); break;
        case 'H': g_host = optarg; break;
        case 'p': g_pid = strtoull(optarg, NULL, 10); break;
        case 'P': g_ppid = strtoull(optarg, NULL, 10); break;
        case 'T': t0 = strtoull(optarg, NULL, 10) * 1000000000ull; break;
        case 'c': g_child = strtoull(optarg, NULL, 10); break;
        case 'b': g_bias = (unsigned)atoi(optarg); break;
        case 'F': g_flush_at = strtoull(optarg, NULL, 10); break;
        case 't': g_stacks = strtoull(optarg, NULL, 10) ? strtoull(optarg, NULL, 10) : 1; break;
        default:
            fprintf(stderr, "usage: gen_trace [-n EVENTS] [-o FILE] [-l LIVE] [-s SEED] "
                            "[-t STACKS] [-F FLUSH] [-b BIAS] [-r RANK] [-H HOST] [-p PID] "
                            "[-P PPID] [-T START] [-c CHILD] [-k mix|nobinary|live]\n");
            return 2;
        }
    }
    void *h = dlopen("libzstd.so.1", RTLD_NOW);
    if (!h)
        die("libzstd.so.1 not found");
    *(void **)&z_stream2 = dlsym(h, "ZSTD_compressStream2");
    *(void **)&z_create = dlsym(h, "ZSTD_createCCtx");
    *(void **)&z_setp = dlsym(h, "ZSTD_CCtx_setParameter");
    *(void **)&z_iserr = dlsym(h, "ZSTD_isError");
    if (!z_stream2 || !z_create || !z_setp || !z_iserr)
        die("libzstd lacks the streaming API");
    g_z = z_create();
    z_setp(g_z, ZSTD_c_compressionLevel, 1);
    /* The format requires a content checksum in every frame; the reader
     * refuses frames without one. */
    z_setp(g_z, ZSTD_c_checksumFlag, 1);
    g_buf = malloc(CP_FRAME_MAX_BYTES + 65536);
    g_out = fopen(out, "wb");
    if (!g_z || !g_buf || !g_out)
        die("cannot start");
    uint8_t prefix[16] = { 0 };
    memcpy(prefix, CP_TRACE_MAGIC, 8);
    prefix[8] = CP_TRACE_VERSION;
    fwrite(prefix, 1, sizeof prefix, g_out);
    g_ts = t0;
    if (strcmp(kind, "nobinary") == 0)
        gen_nobinary();
    else if (strcmp(kind, "live") == 0)
        gen_live(n);
    else
        gen_mix(n, live);
    if (fclose(g_out) != 0)
        die("close failed");
    return 0;
}
