// link: build/interpose/record/cp_rec.o build/interpose/record/cp_rec_tbuf.o build/interpose/record/cp_tid.o build/interpose/record/cp_rec_drain.o build/interpose/record/cp_writer.o build/interpose/record/cp_tfile.o build/interpose/record/cp_wfile.o build/interpose/record/cp_hostmem.o build/interpose/record/cp_hostparse.o build/interpose/record/cp_header.o build/interpose/record/cp_outpath.o build/interpose/record/cp_ownfd.o
// link: build/interpose/record/cp_env.o build/interpose/record/cp_clock.o build/interpose/lifecycle/cp_lifecycle.o build/interpose/lifecycle/cp_sigchain.o
// link: build/interpose/record/cp_log.o build/interpose/record/cp_rec_chunk.o build/interpose/record/cp_rec_cb.o build/interpose/hooks/cp_real.o
// link: build/analyzer/decode/cp_decode.o build/analyzer/util/cp_file.o build/analyzer/decode/cp_decode_fields.o build/analyzer/decode/cp_names.o
// link: build/analyzer/decode/cp_decode_note.o build/analyzer/decode/cp_decode_ring.o build/analyzer/decode/cp_decode_defer.o build/analyzer/decode/cp_decode_window.o
/*
 * test_writer.c - the real recorder and writer, round trip through the
 * decoder: 16 threads record through cp_rec_begin/commit, one thread frees
 * what another allocated, and the decoded file must hold every record,
 * each thread's records in order, times non-decreasing across threads,
 * every FREE after its ALLOC, THREAD announcements before use, an event
 * committed at an earlier given time after the API record another thread
 * wrote meanwhile, and an END whose counts match.  Also measures begin+commit of a 40-byte record.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_decode.h"
#include "cp_env.h"
#include "cp_rec.h"
#include "cp_writer.h"

#define NTHREADS 16
#define PER_THREAD 40000
#define NPAIRS 2000
#define BENCH_N 3000000
#define BENCH_BURST 1000
#define BENCH_BURSTS 300

#define CHECK(c, ...)                                                    \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__,      \
                    __LINE__, #c);                                       \
            fprintf(stderr, __VA_ARGS__);                                \
            fputc('\n', stderr);                                         \
            exit(1);                                                     \
        }                                                                \
    } while (0)

/* A ring from the allocating thread to the freeing thread. */
static uint64_t g_ring[NPAIRS];
static volatile int g_ring_n;

static void rec_call(unsigned type, uint64_t thread, uint64_t seq)
{
    /* An ALLOC is committed at a time read before it opens, as a timed
     * call's record is (cp_rec_commit_at), and carries that time in its
     * flags; a FREE with a time from before the file, which the recorder
     * must replace by the clock. */
    uint64_t given = type == CP_REC_ALLOC ? cp_now_ns() : type == CP_REC_FREE ? 1 : 0;
    uint8_t *p = cp_rec_begin(type, 12 * CP_VARINT_MAX);
    CHECK(p, "cp_rec_begin returned NULL");
    p = cp_put_u(p, 7);          /* api */
    p = cp_put_u(p, 0);          /* result */
    p = cp_put_u(p, thread);     /* ctx: carries the writer thread */
    p = cp_put_s(p, -1);         /* dev */
    p = cp_put_u(p, seq);        /* stream: carries the sequence */
    p = cp_put_u(p, 0);          /* dur */
    p = cp_put_u(p, 0);          /* stack */
    if (type == CP_REC_ALLOC) {
        p = cp_put_u(p, CP_MK_DEVICE);
        p = cp_put_u(p, 0x7f0000000000ull + seq * 256);
        p = cp_put_u(p, 4096);
        p = cp_put_u(p, given);
        p = cp_put_u(p, 0);
    } else if (type == CP_REC_FREE) {
        p = cp_put_u(p, CP_MK_DEVICE);
        p = cp_put_u(p, 0x7f0000000000ull + seq * 256);
        p = cp_put_u(p, 4096);
    }
    cp_rec_commit_at(p, given);
}

static void *worker(void *arg)
{
    uint64_t id = (uint64_t)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%llu", (unsigned long long)id);
    pthread_setname_np(pthread_self(), name);
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        rec_call(CP_REC_CALL, id, i);
        if (id == 0 && i < NPAIRS) {
            rec_call(CP_REC_ALLOC, id, i);
            __atomic_store_n(&g_ring[i], 1, __ATOMIC_RELEASE);
            __atomic_store_n(&g_ring_n, (int)i + 1, __ATOMIC_RELEASE);
        }
        if (id == 1 && i < NPAIRS) {
            while (__atomic_load_n(&g_ring_n, __ATOMIC_ACQUIRE) <= (int)i)
                ;
            rec_call(CP_REC_FREE, id, i);
        }
    }
    return NULL;
}

/* A definition committed by one thread after another thread read the time
 * it then gives its event (a timed call's end): the event must still come
 * after the definition (cp_rec_commit_at places it after every committed
 * REC record), or a decoder meets the API id before its name.  DEF_ROUNDS
 * times, each with its own API id, so that a drain falling between the two
 * commits of one (which orders them anyway) cannot hide the bug. */
#define DEF_API 1000
#define DEF_ROUNDS 200
static int g_def_stage;

static void *def_writer(void *arg)
{
    (void)arg;
    /* This thread's THREAD record first: not counted as the definition. */
    CHECK(cp_rec_put_api(DEF_API - 1, "cuWarmUp", 8, 1) == 0, "API record");
    for (int i = 0; i < DEF_ROUNDS; i++) {
        while (__atomic_load_n(&g_def_stage, __ATOMIC_ACQUIRE) != 2 * i + 1)
            sched_yield();
        CHECK(cp_rec_put_api(DEF_API + i, "cuDefinedLate", 13, 1) == 0, "API record");
        __atomic_store_n(&g_def_stage, 2 * i + 2, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void def_order_rounds(void)
{
    pthread_t th;
    pthread_create(&th, NULL, def_writer, NULL);
    for (int i = 0; i < DEF_ROUNDS; i++) {
        uint64_t given = cp_now_ns();
        __atomic_store_n(&g_def_stage, 2 * i + 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&g_def_stage, __ATOMIC_ACQUIRE) != 2 * i + 2)
            sched_yield();
        uint8_t *p = cp_rec_begin(CP_REC_CALL, 8 * CP_VARINT_MAX);
        CHECK(p, "cp_rec_begin returned NULL");
        p = cp_put_u(p, DEF_API + (uint64_t)i);
        for (int k = 0; k < 6; k++)
            p = cp_put_u(p, 0);
        cp_rec_commit_at(p, given);
    }
    pthread_join(th, NULL);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void rec40(void)
{
    /* 40 bytes of fields: the size of a typical ALLOC event. */
    uint8_t *p = cp_rec_begin(CP_REC_CALL, 40);
    memset(p, 1, 39);
    p[39] = 0;
    cp_rec_commit(p + 40);
}

/* Uncontended cost: bursts that fit in the thread's chunk, with the writer
 * idle (flushed between bursts, untimed). */
static double bench_burst(uint64_t *n)
{
    double t = 0;
    for (int b = 0; b < BENCH_BURSTS; b++) {
        cp_rec_flush();
        double a = now_s();
        for (int i = 0; i < BENCH_BURST; i++)
            rec40();
        t += now_s() - a;
    }
    *n += (uint64_t)BENCH_BURSTS * BENCH_BURST;
    return t * 1e9 / ((double)BENCH_BURSTS * BENCH_BURST);
}

/* Sustained flood: the writer compresses on the other core meanwhile. */
static double bench_flood(uint64_t *n)
{
    double a = now_s();
    for (int i = 0; i < BENCH_N; i++)
        rec40();
    *n += BENCH_N;
    return (now_s() - a) * 1e9 / BENCH_N;
}

static void check_trace(const char *path, uint64_t bench_n)
{
    const char *err;
    cp_dec *d = cp_dec_open(path, &err);
    CHECK(d, "%s", err);
    cp_record r;
    int rc;
    uint64_t n = 0, prev_ts = 0, calls = 0, allocs = 0, frees = 0, bench_seen = 0;
    uint64_t allocs_at_given = 0, file_ts = 0, def_uses = 0;
    int def_seen[DEF_ROUNDS] = {0};
    uint64_t next_seq[NTHREADS] = {0};
    uint64_t alloc_pos[NPAIRS];
    int announced[256] = {0};
    memset(alloc_pos, 0xff, sizeof alloc_pos);
    while ((rc = cp_dec_next(d, &r)) == 1) {
        if (n == 0) {
            CHECK(r.type == CP_REC_HEADER, "first record %u", r.type);
            file_ts = r.ts;
        }
        CHECK(r.ts >= prev_ts, "time went back at record %llu", (unsigned long long)n);
        prev_ts = r.ts;
        if (r.type == CP_REC_THREAD) {
            CHECK(r.tid < 256, "tid %llu", (unsigned long long)r.tid);
            announced[r.tid] = 1;
        } else if (r.type != CP_REC_HEADER && r.type != CP_REC_END && r.type != CP_REC_LOST &&
                   r.type != CP_REC_HOSTINFO && r.type != CP_REC_HOSTMEM) {   /* the writer's own */
            CHECK(r.tid < 256 && announced[r.tid], "tid %llu used before THREAD",
                  (unsigned long long)r.tid);
        }
        if (r.type == CP_REC_API && r.u.api.api_id >= DEF_API &&
            r.u.api.api_id < DEF_API + DEF_ROUNDS) {
            def_seen[r.u.api.api_id - DEF_API] = 1;
        } else if (r.type == CP_REC_CALL && r.ev.api >= DEF_API &&
                   r.ev.api < DEF_API + DEF_ROUNDS) {
            CHECK(def_seen[r.ev.api - DEF_API], "event of API %llu before its API record",
                  (unsigned long long)r.ev.api);
            def_uses++;
        } else if (r.type == CP_REC_CALL && r.payload_len == 40) {
            bench_seen++;
        } else if (r.type == CP_REC_CALL) {
            uint64_t t = r.ev.ctx, seq = r.ev.stream;
            CHECK(t < NTHREADS, "thread %llu", (unsigned long long)t);
            CHECK(seq == next_seq[t], "thread %llu: seq %llu, expected %llu",
                  (unsigned long long)t, (unsigned long long)seq,
                  (unsigned long long)next_seq[t]);
            next_seq[t]++;
            calls++;
        } else if (r.type == CP_REC_ALLOC) {
            CHECK(r.u.alloc.ptr == 0x7f0000000000ull + r.ev.stream * 256, "alloc ptr");
            alloc_pos[r.ev.stream] = n;
            allocs++;
            /* The given time, unless a later one of another thread was
             * written first (the writer then clamps: rare). */
            allocs_at_given += r.ts == r.u.alloc.flags;
            CHECK(r.ts >= r.u.alloc.flags, "ALLOC earlier than its given time");
        } else if (r.type == CP_REC_FREE) {
            CHECK(alloc_pos[r.ev.stream] < n, "FREE %llu before its ALLOC",
                  (unsigned long long)r.ev.stream);
            CHECK(r.ts >= file_ts, "FREE kept a time from before the file");
            frees++;
        } else if (r.type == CP_REC_END) {
            CHECK(r.u.end.reason == CP_END_EXIT, "end reason %llu",
                  (unsigned long long)r.u.end.reason);
            CHECK(r.u.end.records == n, "END says %llu records, saw %llu",
                  (unsigned long long)r.u.end.records, (unsigned long long)n);
            CHECK(r.u.end.dropped == 0, "dropped %llu", (unsigned long long)r.u.end.dropped);
        }
        n++;
    }
    CHECK(rc == 0, "decode: %s", cp_dec_err(d));
    CHECK(cp_dec_info(d)->end_seen, "no END");
    CHECK(calls == (uint64_t)NTHREADS * PER_THREAD, "calls %llu", (unsigned long long)calls);
    CHECK(allocs_at_given * 10 >= allocs * 9, "only %llu of %llu ALLOCs at their given time",
          (unsigned long long)allocs_at_given, (unsigned long long)allocs);
    CHECK(allocs == NPAIRS && frees == NPAIRS, "allocs %llu frees %llu",
          (unsigned long long)allocs, (unsigned long long)frees);
    CHECK(def_uses == DEF_ROUNDS, "%llu events of late-defined APIs",
          (unsigned long long)def_uses);
    CHECK(bench_seen == bench_n, "bench records %llu of %llu",
          (unsigned long long)bench_seen, (unsigned long long)bench_n);
    CHECK(strstr(cp_dec_info(d)->cmdline, "test_writer") != NULL, "cmdline '%s'",
          cp_dec_info(d)->cmdline);
    printf("decoded %llu records from %s\n", (unsigned long long)n, path);
    cp_dec_close(d);
}

int main(void)
{
    char dir[] = "/tmp/cp-test-writer.XXXXXX";
    CHECK(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
    char pattern[512], path[600];
    snprintf(pattern, sizeof pattern, "%s/t-%%p.trace", dir);
    setenv("CUPROBE_OUTPUT", pattern, 1);
    cp_config_reload();
    snprintf(path, sizeof path, "%s/t-%d.trace", dir, (int)getpid());

    CHECK(cp_rec_on(), "recorder off");
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    def_order_rounds();

    uint64_t bench_n = 0;
    double ns = bench_burst(&bench_n);
    double flood = bench_flood(&bench_n);
    printf("cp_rec_begin+commit, 40-byte record: %.1f ns uncontended (writer idle), "
           "%.1f ns sustained flood (writer compressing on another core)\n", ns, flood);

    cp_rec_flush();
    cp__rec_shutdown(CP_END_EXIT, 0, 1, 10000);
    CHECK(!cp_rec_on(), "still on after shutdown");
    check_trace(path, bench_n);

    unlink(path);
    rmdir(dir);
    if (ns > 100)
        printf("warning: slower than expected (goal < 50 ns)\n");
    return 0;
}
