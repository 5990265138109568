// link: build/analyzer/decode/cp_decode.o build/analyzer/util/cp_file.o build/analyzer/decode/cp_decode_fields.o build/analyzer/decode/cp_names.o
// link: build/analyzer/decode/cp_decode_note.o build/analyzer/decode/cp_decode_ring.o build/analyzer/decode/cp_decode_defer.o build/analyzer/decode/cp_decode_window.o
/*
 * test_decode.c - the trace reader on a synthetic trace holding every
 * record type (fields, tables, unknown types, appended fields, a record
 * spanning two zstd frames), and on damaged copies of it: truncated at
 * every 997th byte and with flipped bits, the reader must never crash and
 * must end with "NAME: at decompressed byte N: ..." or "NAME: at file byte N:
 * ...".  A file cut 1 to 4 bytes short (inside the last frame's checksum)
 * is truncated, not complete; a frame without a checksum is refused.
 *   test_decode            run the checks
 *   test_decode gen FILE   write the synthetic trace to FILE (golden test,
 *                          fuzz corpus)
 *   test_decode gen-edge FILE  a trace of edge values (the dump's golden
 *                          number and string formatting)
 *   test_decode pack RAW OUT  write the record stream in RAW as trace OUT
 *   test_decode damage FILE  the damage checks on a real trace, cutting at
 *                          every 997th byte
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_decode.h"
#include "cp_unit.h"
#include "test_decode_gen.h"

static int streq(cp_str s, const char *z)
{
    return s.n == strlen(z) && memcmp(s.p, z, s.n) == 0;
}

static uint8_t *make_trace(size_t *len)
{
    struct gen g = {0};
    gen_records(&g);
    uint8_t *f = gen_file(g.raw, g.n, g.n / 2 + 3, len);
    free(g.raw);
    return f;
}

static void check_fields(const cp_record *r)
{
    switch (r->type) {
    case CP_REC_HEADER:
        CHECK(r->u.header.pid == 4242 && r->u.header.root == 1, "header ids");
        CHECK(r->u.header.argc == 3 && streq(r->u.header.argv[1], "train.py"), "argv");
        CHECK(r->u.header.nenv == 2 && streq(r->u.header.env_name[1], "CUDA_VISIBLE_DEVICES") &&
                  streq(r->u.header.env_value[1], "1,0"), "env");
        CHECK(r->u.header.page_size == 4096, "page size");
        CHECK(r->ts == 5000001000ull, "header ts %llu", (unsigned long long)r->ts);
        break;
    case CP_REC_STACK:
        CHECK(r->u.stack.n_native == 3 && r->u.stack.ip[2] == 0x7f0000001234ull &&
                  r->u.stack.n_py == 1 && r->u.stack.pyframe[0] == 1, "stack");
        break;
    case CP_REC_DEVICE:
        CHECK(streq(r->u.device.name, "NVIDIA H200") && r->u.device.uuid[15] == 0x1f &&
                  r->u.device.sm_count == 132 && r->u.device.pci_bus == 0x1b, "device");
        break;
    case CP_REC_COPY:
        CHECK(r->ev.api == 2 && r->ev.dur_ns == 1234 && r->u.copy.bytes == 4096 &&
                  r->u.copy.src_class == CP_MC_PAGEABLE && r->u.copy.src_dev == -1 &&
                  r->u.copy.flags == (CP_CF_ASYNC | CP_CF_CAPTURING), "copy");
        break;
    case CP_REC_STREAM:
        CHECK(r->u.stream.priority == -2, "stream priority");
        break;
    case CP_REC_FREE:
        CHECK(r->tid == 2 && r->u.free.size == 1 << 20, "free");
        break;
    case CP_REC_OOM:
        CHECK(r->u.oom.n_procs == 2 && r->u.oom.procs[1].pid == 5151 &&
                  r->u.oom.procs[1].used_bytes == 2ull << 30, "oom");
        break;
    case CP_REC_EXEC:
        CHECK(streq(r->u.exec.path, "/bin/sh") && r->u.exec.errno_after == 2, "exec");
        break;
    case CP_REC_END:
        CHECK(r->u.end.records == 33 && r->u.end.dropped == 5, "end");
        break;
    case 99:
        CHECK(r->payload_len == 2, "unknown payload");
        break;
    }
}

static void test_good(const uint8_t *f, size_t len)
{
    const char *err;
    cp_dec *d = cp_dec_open_mem(f, len, "good", &err);
    CHECK(d, "%s", err);
    cp_record r;
    int rc, n = 0;
    unsigned seen[256] = {0};
    while ((rc = cp_dec_next(d, &r)) == 1) {
        check_fields(&r);
        seen[r.type]++;
        n++;
    }
    CHECK(rc == 0, "rc %d: %s", rc, cp_dec_err(d));
    CHECK(n == 34, "records %d", n);
    CHECK(cp_dec_next(d, &r) == 0, "clean end is sticky");
    for (unsigned t = CP_REC_HEADER; t <= CP_REC_PYFRAME; t++)
        CHECK(seen[t], "type %s never decoded", cp_rec_type_name(t));
    CHECK(seen[CP_REC_END] == 1 && seen[99] == 1, "END/unknown");
    CHECK(strcmp(cp_dec_api_name(d, 1), "cuMemAlloc_v2") == 0, "api name");
    CHECK(cp_dec_api_name(d, 77) == NULL, "unknown api");
    CHECK(strcmp(cp_dec_string(d, 2), "step") == 0, "string table");
    const cp_trace_info *in = cp_dec_info(d);
    CHECK(in->end_seen && in->lost == 5 && in->pid == 4242, "info");
    CHECK(strcmp(in->cmdline, "python3 train.py --lr=0.1 \"quoted\"\n") == 0, "cmdline '%s'",
          in->cmdline);
    cp_dec_close(d);
}

/* cp_dec_next_run() on the decoder thread hands out the records of
 * cp_dec_next() in the same order, several at a time, with a record that
 * announces a name or a fact alone and noted before the next run.  Lean
 * (cp_dec_lean_records(1)): every field but offset, payload and
 * payload_len, which only unknown types and those with names or arrays
 * keep. */
static void test_runs(const uint8_t *f, size_t len, int lean)
{
    const char *err;
    unsigned types[64];
    uint64_t offs[64], tss[64], tids[64];
    size_t nref = 0;
    setenv("CUPROBE_DECODE_THREAD", "0", 1);
    cp_dec *d = cp_dec_open_mem(f, len, "runs", &err);
    CHECK(d, "%s", err);
    cp_record r;
    while (cp_dec_next(d, &r) == 1 && nref < 64) {
        types[nref] = r.type;
        tss[nref] = r.ts;
        tids[nref] = r.tid;
        offs[nref++] = r.offset;
    }
    cp_dec_close(d);
    setenv("CUPROBE_DECODE_THREAD", "1", 1);
    cp_dec_lean_records(lean);
    d = cp_dec_open_mem(f, len, "runs", &err);
    cp_dec_lean_records(0);
    unsetenv("CUPROBE_DECODE_THREAD");
    CHECK(d, "%s", err);
    const cp_record *run;
    size_t n, k = 0, longest = 0;
    int rc, api_seen = 0;
    while ((rc = cp_dec_next_run(d, &run, &n)) == 1) {
        longest = n > longest ? n : longest;
        for (size_t i = 0; i < n; i++, k++) {
            unsigned t = run[i].type;
            int keeps = !lean || t == CP_REC_HEADER || t == CP_REC_API || t == CP_REC_STRING ||
                        t == CP_REC_LOST || t == CP_REC_END || t == CP_REC_STACK ||
                        t == CP_REC_OOM || !strcmp(cp_rec_type_name(t), "UNKNOWN");
            CHECK(k < nref && t == types[k] && run[i].ts == tss[k] && run[i].tid == tids[k] &&
                      (!keeps || run[i].offset == offs[k]),
                  "record %zu (lean %d): type %u at %llu", k, lean, t,
                  (unsigned long long)run[i].offset);
            check_fields(&run[i]);
            if (t == CP_REC_HEADER || t == CP_REC_API || t == CP_REC_STRING ||
                t == CP_REC_LOST || t == CP_REC_END)
                CHECK(n == 1, "record %zu (%s) shares a run of %zu", k, cp_rec_type_name(t), n);
            api_seen |= t == CP_REC_API && run[i].u.api.api_id == 1;
        }
        /* A name announced before a run is known when the run is read. */
        if (api_seen)
            CHECK(cp_dec_api_name(d, 1) != NULL, "API 1 announced but not noted");
    }
    CHECK(rc == 0, "rc %d: %s", rc, cp_dec_err(d));
    CHECK(k == nref && cp_dec_records(d) == nref, "runs gave %zu records of %zu", k, nref);
    CHECK(longest > 1, "every run was one record");
    cp_dec_close(d);
}

/* Decode to the end; the outcome must be a clean end or a located error. */
static int decode_all(const uint8_t *f, size_t len, const char *name)
{
    const char *err;
    cp_dec *d = cp_dec_open_mem(f, len, name, &err);
    if (!d) {
        CHECK(strncmp(err, name, strlen(name)) == 0, "open error '%s'", err);
        return -1;
    }
    cp_record r;
    int rc;
    while ((rc = cp_dec_next(d, &r)) == 1)
        ;
    if (rc < 0) {
        char want[64], want2[64];
        snprintf(want, sizeof want, "%s: at decompressed byte ", name);
        snprintf(want2, sizeof want2, "%s: at file byte ", name);
        CHECK(strncmp(cp_dec_err(d), want, strlen(want)) == 0 ||
                  strncmp(cp_dec_err(d), want2, strlen(want2)) == 0,
              "error '%s'", cp_dec_err(d));
        /* Each offset is named once, with its kind. */
        CHECK(!strstr(cp_dec_err(d) + strlen(name), " offset "), "error '%s'", cp_dec_err(d));
        CHECK(cp_dec_next(d, &r) == rc, "error is sticky");
    }
    cp_dec_close(d);
    return rc;
}

static void test_damage(const uint8_t *f, size_t len, size_t step, int flips)
{
    uint8_t *c = malloc(len);
    int truncated = 0;
    for (size_t cut = CP_TRACE_PREFIX_BYTES; cut < len; cut += step) {
        int rc = decode_all(f, cut, "cut");
        CHECK(rc < 0, "cut at %zu decoded cleanly", cut);
        truncated++;
    }
    for (size_t cut = 0; cut < CP_TRACE_PREFIX_BYTES; cut++)
        CHECK(decode_all(f, cut, "short") == -1, "short file opened");
    /* The last 4 bytes are the last frame's checksum: every record and the
     * END are there, but the file is still not whole. */
    for (size_t k = 1; k <= 4; k++) {
        CHECK(decode_all(f, len - k, "cut") < 0, "a file %zu bytes short reads as complete", k);
        const char *err;
        cp_dec *d = cp_dec_open_mem(f, len - k, "cut", &err);
        cp_record r;
        while (cp_dec_next(d, &r) == 1)
            ;
        CHECK(cp_dec_truncated(d) && strstr(cp_dec_err(d), "cut short"),
              "%zu bytes short: '%s'", k, cp_dec_err(d));
        cp_dec_close(d);
    }
    srand(1);
    int errors = 0;
    for (int i = 0; i < flips; i++) {
        memcpy(c, f, len);
        size_t at = CP_TRACE_PREFIX_BYTES + (size_t)rand() % (len - CP_TRACE_PREFIX_BYTES);
        c[at] ^= (uint8_t)(1u << (rand() % 8));
        if (i % 3 == 0)
            c[(size_t)rand() % len] = (uint8_t)rand();
        errors += decode_all(c, len, "flip") < 0;
    }
    /* The frames carry checksums, so nearly every flip is caught. */
    CHECK(errors > flips * 8 / 10, "only %d of %d damaged copies reported an error", errors,
          flips);
    memcpy(c, f, len);
    c[8] = 2;
    const char *err;
    CHECK(!cp_dec_open_mem(c, len, "newer", &err) && strstr(err, "newer"), "version: %s", err);
    c[0] = 'X';
    CHECK(!cp_dec_open_mem(c, len, "magic", &err) && strstr(err, "not a cuprobe trace"), "magic");
    printf("damage: %d truncations, %d/%d flips reported\n", truncated, errors, flips);
    free(c);
}

/* Raw-stream damage the zstd checksum cannot see: bad framing inside a
 * well-formed frame. */
static void test_bad_stream(void)
{
    static const uint8_t cases[][8] = {
        {0},                                   /* type 0 */
        {CP_REC_HEADER, 0xff, 0xff, 0xff, 0xff, 0x7f}, /* huge length */
        {CP_REC_THREAD, 2, 0, 1},              /* first record not HEADER */
        {CP_REC_HEADER, 3, 0, 1, 5},           /* header fields do not fit */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len;
        uint8_t *f = gen_file(cases[i], 8, 4, &len);
        CHECK(decode_all(f, len, "bad") < 0, "bad stream %zu accepted", i);
        free(f);
    }
}

/* A frame written without the content checksum is reported, naming the
 * frame's file offset; so is a checksum that does not match. */
static void test_checksum(void)
{
    struct gen g = {0};
    gen_records(&g);
    size_t cap = CP_TRACE_PREFIX_BYTES + ZSTD_compressBound(g.n);
    uint8_t *f = malloc(cap);
    memcpy(f, CP_TRACE_MAGIC, 8);
    uint32_t v = CP_TRACE_VERSION, fl = 0;
    memcpy(f + 8, &v, 4);
    memcpy(f + 12, &fl, 4);
    size_t z = ZSTD_compress(f + CP_TRACE_PREFIX_BYTES, cap - CP_TRACE_PREFIX_BYTES, g.raw,
                             g.n, 1);
    CHECK(!ZSTD_isError(z), "compress");
    CHECK(decode_all(f, CP_TRACE_PREFIX_BYTES + z, "nosum") < 0,
          "a frame without a checksum was accepted");
    const char *err;
    cp_dec *d = cp_dec_open_mem(f, CP_TRACE_PREFIX_BYTES + z, "nosum", &err);
    cp_record r;
    while (cp_dec_next(d, &r) == 1)
        ;
    CHECK(strstr(cp_dec_err(d), "at file byte 16: the zstd frame that starts here has no "
                                "checksum"), "'%s'", cp_dec_err(d));
    cp_dec_close(d);
    free(f);

    size_t len;
    f = gen_file(g.raw, g.n, g.n / 2, &len);
    f[len - 1] ^= 0x40;   /* inside the last frame's checksum */
    d = cp_dec_open_mem(f, len, "badsum", &err);
    while (cp_dec_next(d, &r) == 1)
        ;
    CHECK(!cp_dec_truncated(d) && strstr(cp_dec_err(d), "checksum of the zstd frame"),
          "'%s'", cp_dec_err(d));
    cp_dec_close(d);
    free(f);
    free(g.raw);
}

/* Decode f with the decoder thread in mode `thread` ("0", "1", "2": every
 * lean record's fields parsed by the reader), lean records on; the count
 * of records before the end, the end's rc and error go to the out-params. */
static void decode_mode(const uint8_t *f, size_t len, const char *thread, size_t *n, int *rc,
                        char *err, size_t err_len)
{
    const char *oerr;
    setenv("CUPROBE_DECODE_THREAD", thread, 1);
    cp_dec_lean_records(1);
    cp_dec *d = cp_dec_open_mem(f, len, "lean", &oerr);
    cp_dec_lean_records(0);
    unsetenv("CUPROBE_DECODE_THREAD");
    CHECK(d, "%s", oerr);
    const cp_record *run;
    size_t k;
    *n = 0;
    while ((*rc = cp_dec_next_run(d, &run, &k)) == 1) {
        for (size_t i = 0; i < k; i++) {
            CHECK(run[i].type == CP_REC_HEADER || run[i].type == CP_REC_END ||
                      (run[i].type == CP_REC_LAUNCH_COUNT &&
                       run[i].u.launch_count.count == *n + i && streq(run[i].u.launch_count.name, "k")),
                  "thread=%s: record %zu type %u", thread, *n + i, run[i].type);
        }
        *n += k;
    }
    snprintf(err, err_len, "%s", *rc < 0 ? cp_dec_err(d) : "");
    cp_dec_close(d);
}

/* The reader parses the fields of lean records when the decoder thread
 * leaves them (CUPROBE_DECODE_THREAD=2 for every batch): the same records
 * come out, and a record whose fields do not fit ends the stream at the
 * same record with the same message, after every record before it (here
 * in a later batch than the first, and not first in its run). */
static void test_deferred(void)
{
#define GU(v) (g->p = cp_put_u(g->p, (v)))
#define GS(v) (g->p = cp_put_s(g->p, (v)))
#define GSTR(s) (g->p = cp_put_str(g->p, (s), strlen(s)))
    for (int bad = 0; bad < 2; bad++) {
        struct gen gs = {0}, *g = &gs;
        g->ts = 1000;
        gen_begin(g, CP_REC_HEADER, 1);
        GU(4242); GU(4241); GU(1700000000123456789ull); GU(1);
        GSTR("host-a"); GSTR("/bin/x"); GSTR("0.1.0"); GU(0); GU(0); GU(4096);
        gen_end(g);
        for (uint64_t i = 1; i < 60000; i++) {
            gen_begin(g, CP_REC_LAUNCH_COUNT, 1 + i % 3);
            GU(7); GU(0x1000 + i % 5); GU(i);
            if (bad && i == 45001)
                *g->p++ = 40;       /* a name longer than the record */
            else
                GSTR("k");
            gen_end(g);
        }
        gen_begin(g, CP_REC_END, 0); GU(CP_END_EXIT); GS(0); GU(60001); GU(0); gen_end(g);
        size_t len, n[3];
        uint8_t *f = gen_file(g->raw, g->n, g->n / 2, &len);
        int rc[3];
        char err[3][600];
        for (int t = 0; t < 3; t++) {
            char mode[2] = {(char)('0' + t), 0};
            decode_mode(f, len, mode, &n[t], &rc[t], err[t], sizeof err[t]);
        }
        for (int t = 1; t < 3; t++)
            CHECK(n[t] == n[0] && rc[t] == rc[0] && strcmp(err[t], err[0]) == 0,
                  "thread=%d: %zu records, rc %d '%s'; without the thread %zu, rc %d '%s'", t,
                  n[t], rc[t], err[t], n[0], rc[0], err[0]);
        if (bad)
            CHECK(n[0] == 45001 && rc[0] < 0 && strstr(err[0], "bad LAUNCH_COUNT record: field 'name'"),
                  "bad: %zu records, '%s'", n[0], err[0]);
        else
            CHECK(n[0] == 60001 && rc[0] == 0, "good: %zu records, rc %d", n[0], rc[0]);
        free(f);
        free(g->raw);
    }
#undef GU
#undef GS
#undef GSTR
}

int main(int argc, char **argv)
{
    size_t len;
    uint8_t *f = make_trace(&len);
    if (argc == 3 && strcmp(argv[1], "gen") == 0) {
        FILE *o = fopen(argv[2], "wb");
        CHECK(o && fwrite(f, 1, len, o) == len && fclose(o) == 0, "write %s", argv[2]);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "gen-edge") == 0) {
        struct gen g = {0};
        gen_edge_records(&g);
        size_t elen;
        uint8_t *e = gen_file(g.raw, g.n, g.n / 2, &elen);
        FILE *o = fopen(argv[2], "wb");
        CHECK(o && fwrite(e, 1, elen, o) == elen && fclose(o) == 0, "write %s", argv[2]);
        free(e);
        free(g.raw);
        free(f);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "pack") == 0) {
        /* A raw record stream (RAW) as a trace file (OUT), for shell tests
         * that build hostile traces. */
        free(f);
        FILE *in = fopen(argv[2], "rb");
        CHECK(in, "open %s", argv[2]);
        fseek(in, 0, SEEK_END);
        size_t n = (size_t)ftell(in);
        rewind(in);
        uint8_t *raw = malloc(n + 1);
        CHECK(fread(raw, 1, n, in) == n, "read %s", argv[2]);
        fclose(in);
        f = gen_file(raw, n, n / 2, &len);
        FILE *o = fopen(argv[3], "wb");
        CHECK(o && fwrite(f, 1, len, o) == len && fclose(o) == 0, "write %s", argv[3]);
        free(raw);
        free(f);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "damage") == 0) {
        free(f);
        FILE *in = fopen(argv[2], "rb");
        CHECK(in, "open %s", argv[2]);
        fseek(in, 0, SEEK_END);
        len = (size_t)ftell(in);
        rewind(in);
        f = malloc(len);
        CHECK(fread(f, 1, len, in) == len, "read %s", argv[2]);
        fclose(in);
        CHECK(decode_all(f, len, "real") == 0, "the undamaged trace does not decode");
        test_damage(f, len, 997, 300);
        free(f);
        return 0;
    }
    test_good(f, len);
    /* Lean first: the batches of a later decoder reuse freed memory that
     * may hold an earlier decode's whole records, offsets included. */
    test_runs(f, len, 1);
    test_runs(f, len, 0);
    test_damage(f, len, len / 40 ? len / 40 : 1, 3000);
    test_bad_stream();
    test_checksum();
    test_deferred();
    free(f);
    printf("decode: ok\n");
    return 0;
}
