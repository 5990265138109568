// link: build/interpose/record/cp_hostparse.o build/interpose/record/cp_hostmem.o build/interpose/record/cp_env.o build/interpose/record/cp_ownfd.o
/*
 * test_hostparse.c - interpose/record/cp_hostparse.c and cp_hostmem.c: the
 * /proc and cgroup text the writer samples, parsed from fixtures (a v1
 * unlimited value, "max", a hybrid cgroup file whose memory controller is
 * on v1); the pinned count kept from ALLOC/FREE fields (failed calls and
 * device kinds ignored, a free of more than is held clamps at 0); and a
 * whole sample against fake procfs and sysfs trees: the cgroup whose limit
 * binds is an ancestor of the process's own (a Slurm job above its step),
 * its usage is the one read, HOSTINFO comes once and again when the limit
 * changes, HOSTMEM again only when pinned changed or a value moved.
 */
#define CP_UNIT_COUNT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cp_clock.h"
#include "cp_env.h"
#include "cp_hostmem.h"
#include "cp_hostparse.h"
#include "cp_records.h"
#include "cp_trace.h"
#include "cp_unit.h"

/* cp_hostmem_note() and cp_hostmem_sample() need nothing else of the shim
 * but its clock, here without its fitted line (cp_clock.c is not linked). */
struct cp_clock_line cp__clock;

static const char meminfo[] =
    "MemTotal:       65843412 kB\n"
    "MemFree:         1024000 kB\n"
    "MemAvailable:     409600 kB\n"
    "Buffers:               0 kB\n"
    "SwapCached:            0 kB\n"
    "SwapTotal:       2097148 kB\n"
    "SwapFree:        2097148 kB\n";

static void test_parsers(void)
{
    uint64_t t, a, s;
    CHECK(cp_hp_meminfo(meminfo, sizeof meminfo - 1, &t, &a, &s) == 0);
    CHECK(t == 65843412ull << 10 && a == 409600ull << 10 && s == 2097148ull << 10);
    /* An old kernel without MemAvailable; text that is not meminfo. */
    CHECK(cp_hp_meminfo("MemTotal: 100 kB\n", 17, &t, &a, &s) == 0 && t == 102400 && a == 0);
    CHECK(cp_hp_meminfo("garbage\n", 8, &t, &a, &s) < 0 && t == 0);
    /* A cut line must not be read past its end. */
    CHECK(cp_hp_meminfo("MemTotal:", 9, &t, &a, &s) < 0);

    uint64_t rss, sh;
    CHECK(cp_hp_statm("765 432 404 5 0 123 0\n", 22, 4096, &rss, &sh) == 0);
    CHECK(rss == 432 * 4096 && sh == 404 * 4096);
    CHECK(cp_hp_statm("765 432", 7, 4096, &rss, &sh) < 0);

    char p[64];
    int v1 = -1;
    static const char hybrid[] = "9:name=systemd:/\n4:memory:/process_api/bee\n1:cpu:/\n0::/\n";
    CHECK(cp_hp_cgroup(hybrid, sizeof hybrid - 1, &v1, p, sizeof p) == 16);
    CHECK(v1 == 1 && strcmp(p, "/process_api/bee") == 0);
    static const char unified[] = "0::/user.slice/session-2.scope\n";
    CHECK(cp_hp_cgroup(unified, sizeof unified - 1, &v1, p, sizeof p) > 0);
    CHECK(v1 == 0 && strcmp(p, "/user.slice/session-2.scope") == 0);
    /* "memory" must be a whole controller name, not "memory_x". */
    static const char other[] = "5:memory_x,cpu:/a\n";
    CHECK(cp_hp_cgroup(other, sizeof other - 1, &v1, p, sizeof p) < 0);
    CHECK(cp_hp_cgroup(unified, sizeof unified - 1, &v1, p, 8) < 0);

    uint64_t v = 7;
    CHECK(cp_hp_limit("max\n", 4, &v) == 0 && v == 0);
    CHECK(cp_hp_limit("9223372036854771712\n", 20, &v) == 0 && v == 0);
    CHECK(cp_hp_limit("1073741824\n", 11, &v) == 0 && v == 1073741824);
    CHECK(cp_hp_limit("", 0, &v) < 0);
}

/* An ALLOC or FREE record's fields as the hooks write them; g_wide: with
 * the many-byte context, stream, duration and stack of a real process
 * (the kind then starts past the first 8 bytes). */
static int g_wide;
static uint32_t rec(uint8_t *f, unsigned type, uint64_t result, uint64_t kind, uint64_t size)
{
    uint8_t *p = g_wide ? cp_enc_ev(f, 300, result, 0x5555deadbee0ull, 1, 0x7f1234567800ull,
                                    123456789, 70000)
                        : cp_enc_ev(f, 3, result, 0x1000, 0, 0, 50, 2);
    if (type == CP_REC_ALLOC)
        p = cp_enc_alloc(p, kind, 0x7f0000, size, 0, 0, 0);
    else
        p = cp_enc_free(p, kind, 0x7f0000, size);
    return (uint32_t)(p - f);
}

static void test_pinned(void)
{
    struct cp_hostmem hm;
    uint8_t f[256];
    cp_hostmem_init(&hm);
    cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 0, CP_MK_HOST_PINNED, 64 << 20));
    cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 0, CP_MK_HOST_REGISTERED, 16 << 20));
    cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 0, CP_MK_VMM_HOST, 2 << 20));
    cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 0, CP_MK_DEVICE, 1 << 30));
    cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 2, CP_MK_HOST_PINNED, 1 << 30));
    CHECK(hm.pinned == (82u << 20));
    cp_hostmem_note(&hm, CP_REC_FREE, f, rec(f, CP_REC_FREE, 0, CP_MK_HOST_PINNED, 64 << 20));
    CHECK(hm.pinned == (18u << 20));
    /* A cut record changes nothing. */
    cp_hostmem_note(&hm, CP_REC_FREE, f, rec(f, CP_REC_FREE, 0, CP_MK_HOST_PINNED, 1 << 20) - 1);
    CHECK(hm.pinned == (18u << 20));
    cp_hostmem_note(&hm, CP_REC_FREE, f, rec(f, CP_REC_FREE, 0, CP_MK_HOST_PINNED, 1 << 30));
    CHECK(hm.pinned == 0);
}

/* The kind is found by counting varint ends eight bytes at a time
 * (cp_hostmem.c): records of both widths, cut at every length. */
static void test_pinned_every_cut(void)
{
    for (g_wide = 0; g_wide < 2; g_wide++) {
        struct cp_hostmem hm;
        uint8_t f[256];
        cp_hostmem_init(&hm);
        uint32_t n = rec(f, CP_REC_ALLOC, 0, CP_MK_HOST_PINNED, 1);
        /* A record cut before the end of its size (the 10th field) is not
         * counted; one cut after it is. */
        const uint8_t *q = f;
        uint64_t v;
        for (int i = 0; i < 10; i++)
            CHECK(cp_get_u(&q, f + n, &v) == 0);
        uint32_t whole = (uint32_t)(q - f);
        CHECK(whole > (g_wide ? 16u : 8u) && whole < n);
        for (uint32_t cut = 0; cut < n; cut++)
            cp_hostmem_note(&hm, CP_REC_ALLOC, f, cut);
        CHECK(hm.pinned == n - whole);
        hm.pinned = 0;
        n = rec(f, CP_REC_ALLOC, 0, CP_MK_HOST_PINNED, 3 << 20);
        cp_hostmem_note(&hm, CP_REC_ALLOC, f, n);
        CHECK(hm.pinned == (3u << 20));
        cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 0, CP_MK_ASYNC, 5 << 20));
        cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 0, CP_MK_HOST_REGISTERED, 1 << 20));
        CHECK(hm.pinned == (4u << 20));
        cp_hostmem_note(&hm, CP_REC_FREE, f, rec(f, CP_REC_FREE, 0, CP_MK_HOST_PINNED, 3 << 20));
        CHECK(hm.pinned == (1u << 20));
    }
    g_wide = 0;
}

/* ---- a whole sample against fake trees ---------------------------------- */

static char g_root[64];
static struct { unsigned type; uint8_t f[600]; uint32_t len; } g_rec[16];
static unsigned g_n;

static void put(const char *rel, const char *text)
{
    char path[256], dir[256];
    snprintf(path, sizeof path, "%s/%s", g_root, rel);
    for (char *s = path + strlen(g_root) + 1; (s = strchr(s, '/')); s++) {
        snprintf(dir, sizeof dir, "%.*s", (int)(s - path), path);
        mkdir(dir, 0755);
    }
    FILE *fp = fopen(path, "w");
    CHECK(fp != NULL);
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
}

static void emit(void *ctx, uint32_t tid, unsigned type, uint64_t ts, const uint8_t *f,
                 uint32_t len)
{
    (void)ctx, (void)ts;
    CHECK(tid == 0);
    if (g_n < 16 && len <= sizeof g_rec[0].f) {
        g_rec[g_n].type = type;
        memcpy(g_rec[g_n].f, f, len);
        g_rec[g_n++].len = len;
    }
}

static uint64_t field(unsigned i, unsigned k)
{
    const uint8_t *p = g_rec[i].f, *end = p + g_rec[i].len;
    uint64_t v = UINT64_MAX;
    for (unsigned j = 0; j <= k; j++)
        if (cp_get_u(&p, end, &v) != 0)
            return UINT64_MAX;
    return v;
}

static void test_sample(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/cp-hostparse.%d", (int)getpid());
    mkdir(g_root, 0755);
    put("proc/meminfo", meminfo);
    put("proc/self/cgroup", "0::/job_7/step_0\n");
    put("sys/fs/cgroup/job_7/memory.max", "4294967296\n");
    put("sys/fs/cgroup/job_7/memory.current", "4290000000\n");
    put("sys/fs/cgroup/job_7/step_0/memory.max", "max\n");
    put("sys/fs/cgroup/job_7/step_0/memory.current", "100000\n");
    char proc[96], sys[96];
    snprintf(proc, sizeof proc, "%s/proc", g_root);
    snprintf(sys, sizeof sys, "%s/sys", g_root);
    setenv("CUPROBE_PROCFS_ROOT", proc, 1);
    setenv("CUPROBE_SYSFS_ROOT", sys, 1);
    cp_config_reload();

    struct cp_hostmem hm;
    uint8_t f[256];
    cp_hostmem_init(&hm);
    cp_hostmem_new_file(&hm);
    cp_hostmem_note(&hm, CP_REC_ALLOC, f, rec(f, CP_REC_ALLOC, 0, CP_MK_HOST_PINNED, 3 << 20));
    uint64_t t = 1000000000;
    cp_hostmem_sample(&hm, t, 5, emit, NULL);
    CHECK(g_n == 2 && g_rec[0].type == CP_REC_HOSTINFO && g_rec[1].type == CP_REC_HOSTMEM);
    CHECK(field(0, 0) == 65843412ull << 10 && field(0, 1) == 2097148ull << 10);
    CHECK(field(0, 2) == 4294967296ull);   /* the job's limit binds */
    CHECK(strstr((const char *)g_rec[0].f, "/job_7") && !strstr((const char *)g_rec[0].f, "step"));
    CHECK(field(1, 0) > 0);                /* this process's real RSS */
    CHECK(field(1, 2) == 3u << 20 && field(1, 3) == 409600ull << 10);
    CHECK(field(1, 4) == 4290000000ull);   /* the job's usage, not the step's */

    /* Too soon: nothing read.  Then nothing moved: nothing written. */
    cp_hostmem_sample(&hm, t + 10000000, 6, emit, NULL);
    CHECK(g_n == 2);
    cp_hostmem_sample(&hm, t + CP_HM_READ_NS, 6, emit, NULL);
    CHECK(g_n == 2);
    /* Pinned changed: HOSTMEM; the limit changed: HOSTINFO too. */
    cp_hostmem_note(&hm, CP_REC_FREE, f, rec(f, CP_REC_FREE, 0, CP_MK_HOST_PINNED, 1 << 20));
    put("sys/fs/cgroup/job_7/memory.max", "8589934592\n");
    cp_hostmem_sample(&hm, t + 2 * CP_HM_READ_NS, 7, emit, NULL);
    CHECK(g_n == 4 && g_rec[2].type == CP_REC_HOSTINFO && field(2, 2) == 8589934592ull);
    CHECK(g_rec[3].type == CP_REC_HOSTMEM && field(3, 2) == 2u << 20);
    /* The heartbeat. */
    cp_hostmem_sample(&hm, t + 2 * CP_HM_READ_NS + CP_HM_BEAT_NS, 8, emit, NULL);
    CHECK(g_n == 5 && g_rec[4].type == CP_REC_HOSTMEM);
    /* A new file writes both again. */
    cp_hostmem_new_file(&hm);
    cp_hostmem_sample(&hm, t + 3 * CP_HM_BEAT_NS, 9, emit, NULL);
    CHECK(g_n == 7 && g_rec[5].type == CP_REC_HOSTINFO);
    cp_hostmem_forget(&hm);
    CHECK(hm.fd_statm == -1 && hm.fd_cg_cur == -1 && hm.pinned == 0);

    /* No cgroup file anywhere: limit and usage 0, no failure logged. */
    put("proc/self/cgroup", "0::/elsewhere\n");
    snprintf(sys, sizeof sys, "%s/nosys", g_root);
    setenv("CUPROBE_SYSFS_ROOT", sys, 1);
    cp_config_reload();
    g_n = 0;
    cp_hostmem_init(&hm);
    cp_hostmem_sample(&hm, t, 5, emit, NULL);
    CHECK(g_n == 2 && field(0, 2) == 0 && field(1, 4) == 0);
    cp_hostmem_forget(&hm);

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_root);
    CHECK(system(cmd) == 0);
}

static void null_emit(void *ctx, uint32_t tid, unsigned type, uint64_t ts, const uint8_t *f,
                      uint32_t len)
{
    (void)ctx, (void)tid, (void)type, (void)ts, (void)f, (void)len;
}

/* `test_hostparse bench N`: what one sample costs the writer thread on
 * this machine's real /proc and cgroup files (a row of BENCHMARKS.md): N samples,
 * each forced to read (its time one period after the last). */
static void bench(long n)
{
    unsetenv("CUPROBE_PROCFS_ROOT");
    unsetenv("CUPROBE_SYSFS_ROOT");
    cp_config_reload();
    struct cp_hostmem hm;
    cp_hostmem_init(&hm);
    uint64_t t = CP_HM_READ_NS;
    cp_hostmem_sample(&hm, t, 1, null_emit, NULL);   /* opens the files */
    /* CPU time of this thread: on a loaded machine the wall time mostly
     * measures the other processes' turns. */
    struct timespec c0, c1;
    uint64_t a = cp_now_ns();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    for (long i = 0; i < n; i++)
        cp_hostmem_sample(&hm, t += CP_HM_READ_NS, 1, null_emit, NULL);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    double wall = (double)(cp_now_ns() - a) / (double)n;
    double cpu = ((double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec)) /
                 (double)n;
    printf("host memory sample: %.0f ns CPU, %.0f ns wall (statm, meminfo%s), %ld samples; "
           "cgroup %s\n", cpu, wall, hm.fd_cg_cur >= 0 ? ", the cgroup's usage and limit" : "",
           n, hm.cg_path[0] ? hm.cg_path : "(none)");
    cp_hostmem_forget(&hm);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "bench") == 0) {
        bench(atol(argv[2]));
        return 0;
    }
    test_parsers();
    test_pinned();
    test_pinned_every_cut();
    test_sample();
    if (g_fail)
        return 1;
    bench(200);
    printf("test_hostparse: ok\n");
    return 0;
}
