// link: build/interpose/record/cp_clock.o build/interpose/record/cp_env.o build/interpose/record/cp_log.o
/*
 * test_clock.c - interpose/record/cp_clock.c: the counter's line fitted to
 * CLOCK_MONOTONIC.  Each case runs in a child of its own (the fitting state
 * is per process), with CUPROBE_PROCFS_ROOT / CUPROBE_SYSFS_ROOT pointing at
 * a fake cpuinfo and clocksource so that the decision does not depend on
 * the machine running the test:
 *   - a usable counter: the line starts on the second fit, stays within
 *     50 us of clock_gettime over a second of fits, and a thread reading
 *     the clock all along never sees it go back;
 *   - the writer's start: the first line comes with a pass 10 ms or more
 *     after the base sample, not before;
 *   - a counter that jumps: a line set 5 ms off is caught and restarted at
 *     the next fit, and the fourth such jump makes the clock give up;
 *   - a counter the kernel does not vouch for, and CUPROBE_TSC=0: never
 *     used (cp_now_ns() is clock_gettime).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cp_clock.h"
#include "cp_env.h"
#include "cp_unit.h"

static char g_root[64];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static void put_file(const char *rel, const char *text)
{
    char path[256], dir[320];
    snprintf(path, sizeof path, "%s%s", g_root, rel);
    snprintf(dir, sizeof dir, "mkdir -p \"$(dirname '%s')\"", path);
    CHECK(system(dir) == 0, "%s\n", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "%s\n", path);
}

/* A fake /proc and /sys: cpuinfo's flags and the kernel's clocksource. */
static void fake_tree(const char *flags, const char *clocksource)
{
    char cpuinfo[256];
    snprintf(cpuinfo, sizeof cpuinfo, "processor\t: 0\nflags\t\t: %s\n\n", flags);
    put_file("/proc/cpuinfo", cpuinfo);
    put_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", clocksource);
    char p[128];
    snprintf(p, sizeof p, "%s/proc", g_root);
    setenv("CUPROBE_PROCFS_ROOT", p, 1);
    snprintf(p, sizeof p, "%s/sys", g_root);
    setenv("CUPROBE_SYSFS_ROOT", p, 1);
    cp_config_reload();
}

static void usable_tree(void)
{
#if defined(__aarch64__)
    fake_tree("fp asimd", "arch_sys_counter\n");
#else
    fake_tree("fpu tsc constant_tsc nonstop_tsc", "tsc\n");
#endif
}

/* How far cp_now_ns() is from clock_gettime, read between two of them. */
static uint64_t gap_ns(void)
{
    uint64_t a = cp__clock_slow(), n = cp_now_ns(), b = cp__clock_slow();
    return n < a ? a - n : n > b ? n - b : 0;
}

static volatile int g_stop;
static uint64_t g_reads, g_backs, g_worst_back;

/* Reads the clock without pause while the main thread moves the line. */
static void *reader(void *arg)
{
    (void)arg;
    uint64_t prev = cp_now_ns();
    while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
        uint64_t t = cp_now_ns();
        if (t < prev) {
            g_backs++;
            if (prev - t > g_worst_back)
                g_worst_back = prev - t;
        }
        prev = t;
        g_reads++;
    }
    return NULL;
}

static int case_usable(void)
{
    usable_tree();
    cp_clock_tune();
    CHECK(cp_clock_state(NULL) == 0, "state %d after the base sample\n", cp_clock_state(NULL));
    CHECK(atomic_load(&cp__clock.cur) == 0, "a line before the second fit\n");
    sleep_ms(60);
    cp_clock_tune();
    CHECK(cp_clock_state(NULL) == 1, "state %d after the second fit\n", cp_clock_state(NULL));
    pthread_t th;
    CHECK(pthread_create(&th, NULL, reader, NULL) == 0, "pthread_create\n");
    uint64_t worst = 0;
    for (int i = 0; i < 20; i++) {
        sleep_ms(55);
        cp_clock_tune();
        for (int k = 0; k < 100; k++) {
            uint64_t g = gap_ns();
            if (g > worst)
                worst = g;
        }
    }
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
    pthread_join(th, NULL);
    unsigned restarts;
    CHECK(cp_clock_state(&restarts) == 1 && restarts == 0, "restarts %u\n", restarts);
    CHECK(worst < 50000, "the clock strayed %llu ns from clock_gettime\n",
          (unsigned long long)worst);
    CHECK(g_reads > 1000 && g_backs == 0,
          "%llu of %llu reads went back (by up to %llu ns) while the line moved\n",
          (unsigned long long)g_backs, (unsigned long long)g_reads,
          (unsigned long long)g_worst_back);
    printf("usable: worst gap to clock_gettime %llu ns over 21 fits; %llu reads by another "
           "thread, none back\n", (unsigned long long)worst, (unsigned long long)g_reads);
    return 0;
}

static int case_start(void)
{
    usable_tree();
    uint64_t a = cp__clock_slow();
    cp_clock_tune();   /* the writer's start: the base sample */
    sleep_ms(2);
    cp_clock_tune();   /* a pass kicked 2 ms later: too soon for a line */
    uint64_t took = cp__clock_slow() - a;
    /* On a loaded machine (sanitizer builds in CI) the sleep may overrun
     * past 10 ms: the "no line yet" check only holds when it did not. */
    if (took < 10000000)
        CHECK(cp_clock_state(NULL) == 0 && atomic_load(&cp__clock.cur) == 0,
              "a line %.1f ms after the base (state %d)\n", (double)took / 1e6,
              cp_clock_state(NULL));
    sleep_ms(11);
    cp_clock_tune();   /* over 10 ms after the base: the first line */
    CHECK(cp_clock_state(NULL) == 1 && atomic_load(&cp__clock.cur) != 0,
          "no line 13 ms after the base (state %d)\n", cp_clock_state(NULL));
    CHECK(gap_ns() < 50000, "the first line is %llu ns off\n", (unsigned long long)gap_ns());
    printf("start: %s; the first line after 10 ms\n",
           took < 10000000 ? "no line before 10 ms" : "(the machine was too slow to check before 10 ms)");
    return 0;
}

static int case_jumps(void)
{
    usable_tree();
    cp_clock_tune();
    sleep_ms(60);
    cp_clock_tune();
    CHECK(cp_clock_state(NULL) == 1, "no line\n");
    for (unsigned j = 1; j <= 4; j++) {
        /* The current slope, the line 5 ms behind: a counter that jumped. */
        struct cp_clock_slot *l = &cp__clock.slot[(atomic_load(&cp__clock.cur) - 1) & 1];
        uint64_t mult = atomic_load(&l->mult), t1, t2, n;
        /* A counter and a clock_gettime read together (retried until the
         * bracket is under 20 us, so that a preemption on a loaded machine
         * does not move the planted jump). */
        do {
            t1 = cp_clock_tick();
            n = cp__clock_slow();
            t2 = cp_clock_tick();
        } while ((uint64_t)(((unsigned __int128)(t2 - t1) * mult) >> 32) > 20000);
        cp__clock_set(t1 + (t2 - t1) / 2, n - 5000000, mult);
        uint64_t g = gap_ns();
        CHECK(g > 4900000 && g < 5100000, "jump %u: gap %llu ns\n", j, (unsigned long long)g);
        sleep_ms(55);
        cp_clock_tune();
        unsigned restarts;
        int st = cp_clock_state(&restarts);
        if (j < 4) {
            CHECK(st == 1 && restarts == j, "jump %u: state %d, restarts %u\n", j, st, restarts);
            g = gap_ns();
            CHECK(g < 50000, "jump %u: still %llu ns off after the restart\n", j,
                  (unsigned long long)g);
        } else {
            CHECK(st == -1 && atomic_load(&cp__clock.cur) == 0,
                  "jump 4: state %d, line %u (the clock should have given up)\n", st,
                  atomic_load(&cp__clock.cur));
            /* Given up: cp_now_ns() is clock_gettime, so it lies between two. */
            uint64_t a = cp__clock_slow(), now = cp_now_ns(), b = cp__clock_slow();
            CHECK(a <= now && now <= b, "not clock_gettime after giving up\n");
        }
    }
    printf("jumps: three restarted the line, the fourth made it give up\n");
    return 0;
}

static int case_refused(const char *flags, const char *cs, const char *tsc_env)
{
    fake_tree(flags, cs);
    if (tsc_env)
        setenv("CUPROBE_TSC", tsc_env, 1), cp_config_reload();
    for (int i = 0; i < 3; i++) {
        cp_clock_tune();
        sleep_ms(55);
    }
    CHECK(cp_clock_state(NULL) == -1 && atomic_load(&cp__clock.cur) == 0,
          "flags '%s', clocksource '%s', CUPROBE_TSC=%s: state %d\n", flags, cs,
          tsc_env ? tsc_env : "(unset)", cp_clock_state(NULL));
    printf("refused: flags '%s', clocksource %.*s, CUPROBE_TSC=%s\n", flags, (int)strcspn(cs, "\n"), cs,
           tsc_env ? tsc_env : "(unset)");
    return 0;
}

static int in_child(int (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = fn();
        fflush(stdout);
        _exit(rc);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid, "waitpid\n");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int refused_flags(void) { return case_refused("fpu tsc constant_tsc", "tsc\n", NULL); }
static int refused_source(void) { return case_refused("fpu tsc constant_tsc nonstop_tsc", "hpet\n", NULL); }
static int refused_env(void)
{
#if defined(__aarch64__)
    return case_refused("fp asimd", "arch_sys_counter\n", "0");
#else
    return case_refused("fpu tsc constant_tsc nonstop_tsc", "tsc\n", "0");
#endif
}

int main(void)
{
    snprintf(g_root, sizeof g_root, "/tmp/cp-clock-%d", (int)getpid());
    int fail = 0;
#if defined(__x86_64__) || defined(__aarch64__)
    fail |= in_child(case_usable);
    fail |= in_child(case_start);
    fail |= in_child(case_jumps);
#  if defined(__x86_64__)
    fail |= in_child(refused_flags);
#  endif
    fail |= in_child(refused_source);
#endif
    fail |= in_child(refused_env);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", g_root);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", g_root);
    printf(fail ? "FAIL\n" : "ok\n");
    return fail ? 1 : 0;
}
