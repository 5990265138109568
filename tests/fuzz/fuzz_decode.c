/*
 * fuzz_decode.c - fuzz target for the trace reader (analyzer/decode/cp_decode.c).
 *
 * The first input byte picks the layer under attack:
 *   odd  : the rest is a whole trace file (prefix, zstd frames, records);
 *   even : the rest is a decompressed record stream, wrapped here in a valid
 *          prefix and one zstd frame, so that mutations reach record framing
 *          and field parsing instead of dying in zstd's own checks.
 * Built with clang -fsanitize=fuzzer (libFuzzer) or with fuzz_driver.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cp_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_run(const uint8_t *file, size_t len)
{
    const char *err;
    cp_dec *d = cp_dec_open_mem(file, len, "fuzz", &err);
    if (!d)
        return;
    cp_record r;
    uint64_t sink = 0;
    while (cp_dec_next(d, &r) == 1) {
        /* Touch what the reader hands out, so bad pointers are caught. */
        sink += r.ts + r.tid + r.payload_len;
        if (r.type == CP_REC_HEADER)
            for (uint64_t i = 0; i < r.u.header.argc; i++)
                sink += r.u.header.argv[i].n ? (uint8_t)r.u.header.argv[i].p[0] : 0;
        if (r.type == CP_REC_STACK)
            for (uint64_t i = 0; i < r.u.stack.n_native; i++)
                sink += r.u.stack.ip[i];
        if (r.type == CP_REC_OOM)
            for (uint64_t i = 0; i < r.u.oom.n_procs; i++)
                sink += r.u.oom.procs[i].pid;
        if (r.type == CP_REC_API || r.type == CP_REC_CALL)
            sink += cp_dec_api_name(d, r.ev.api) != NULL;
    }
    sink += strlen(cp_dec_err(d));
    cp_dec_close(d);
    if (sink == 42)
        abort();   /* never true in practice; keeps the loop from being optimized out */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1) {
        fuzz_run(data + 1, size - 1);
        return 0;
    }
    size_t cap = CP_TRACE_PREFIX_BYTES + ZSTD_compressBound(size);
    uint8_t *f = malloc(cap);
    if (!f)
        return 0;
    memcpy(f, CP_TRACE_MAGIC, 8);
    f[8] = CP_TRACE_VERSION;
    f[9] = f[10] = f[11] = 0;
    memset(f + 12, 0, 4);
    /* With the content checksum the format requires of every frame. */
    static ZSTD_CCtx *cctx;
    if (!cctx) {
        cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    }
    size_t z = cctx ? ZSTD_compress2(cctx, f + CP_TRACE_PREFIX_BYTES,
                                     cap - CP_TRACE_PREFIX_BYTES, data + 1, size - 1)
                    : (size_t)-1;
    if (!ZSTD_isError(z))
        fuzz_run(f, CP_TRACE_PREFIX_BYTES + z);
    free(f);
    return 0;
}
