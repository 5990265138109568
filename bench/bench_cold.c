/*
 * bench_cold.c - nanoseconds per driver call on the fake driver with the
 * caches emptied before each call: what a wrapped call costs inside a real
 * program, where the framework and the driver run between two calls and
 * evict the shim's code and data.
 *
 * bench_calls times calls back to back, so the shim's few kilobytes stay in
 * L1.  Inside PyTorch on a GPU the same pair costs several times more, all
 * of it inside the wrappers (a `make selftime` build says so): the shim's
 * lines come from L3 or memory there.  Here every call is preceded by a run through a sled of
 * SLED_KB of straight-line code (evicts L1i and the iTLB) and a write
 * through EVICT_KB of data (L1d, L2), so a call's added time is mostly the
 * misses on the lines it touches: fewer lines, cheaper call.
 *
 *   bench_cold [iterations]   prints "cold_alloc NS", "cold_free NS",
 *                             "cold_launch NS" (median per call)
 *   SLED_KB (default 96), EVICT_KB (default 4096): what runs between calls.
 *   COLD_DEPTH=N (default 0): make every call from N more nested frames of
 *   7 sizes (64-448 bytes each), as PyTorch's allocator is reached under some
 *   30 native frames: the call site's cached walk then checks as many.
 *   COLD_MARKS=1: print the markers' addresses and this process's maps to
 *   stderr, for bench/footprint.py (which lines each call touches, under
 *   valgrind's lackey).
 *
 * The lifetimes are bench_calls' async_step: ACT activations made in order
 * and freed in reverse beside 256 long-lived allocations.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fake_api.h"
#include "bench_util.h"


static void (*sled)(void);
static volatile uint8_t *dirty;
static size_t dirty_len;

/* SLED_KB of one-byte nops ending in ret: executing it fills L1i and the
 * instruction TLB with lines and pages that are not the shim's. */
static void sled_make(size_t kb)
{
    size_t len = kb << 10;
    uint8_t *p = mmap(NULL, len + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    memset(p, 0x90, len);
    p[len] = 0xc3;
    if (mprotect(p, len + 1, PROT_READ | PROT_EXEC) != 0) {
        perror("mprotect");
        exit(1);
    }
    sled = (void (*)(void))(uintptr_t)p;
}

/* Markers: an empty call before each timed call (and one after), found by
 * address in a lackey trace. */
#define MARK(name) static __attribute__((noinline)) void mark_##name(void) { __asm__ volatile("" ::: "memory"); }
MARK(alloc) MARK(free) MARK(launch) MARK(end)

static void print_marks(void)
{
    fprintf(stderr, "mark alloc %p\nmark free %p\nmark launch %p\nmark end %p\n",
            (void *)mark_alloc, (void *)mark_free, (void *)mark_launch, (void *)mark_end);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        fprintf(stderr, "map %s", line);
    if (f)
        fclose(f);
}

static void evict(void)
{
    sled();
    for (size_t i = 0; i < dirty_len; i += 64)
        dirty[i]++;
}

#define PARAMS 256
static CUdeviceptr params[PARAMS], act[ACT], grad[ACT];
static CUfunction noop;
static int have_kernel;
static double *ta, *tf, *tl;
static long nf;

/* One step of the lifetimes: an allocation, a free (but in the first
 * step), a launch, each timed alone after the caches are emptied.  i < 0:
 * the warm-up step, not kept. */
static void one_step(long i)
{
    CUdeviceptr *make, *drop;
    unsigned k = bench_step_pick((unsigned)(i + 2 * ACT), act, grad, &make, &drop);
    evict();
    mark_alloc();
    double t0 = now();
    CK(cuMemAllocAsync(make, 1024 + 256 * (k % 7), NULL));
    double t1 = now();
    mark_end();
    if (*drop) {
        evict();
        mark_free();
        double t2 = now();
        CK(cuMemFreeAsync(*drop, NULL));
        double t3 = now();
        mark_end();
        if (i >= 0)
            tf[nf++] = t3 - t2;
        *drop = 0;
    }
    double t4 = 0, t5 = 0;
    if (have_kernel) {
        evict();
        mark_launch();
        t4 = now();
        CK(cuLaunchKernel(noop, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        t5 = now();
        mark_end();
    }
    if (i >= 0) {
        ta[i] = t1 - t0;
        tl[i] = t5 - t4;
    }
}

/* COLD_DEPTH's frames: fixed sizes (the stack cache learns a function's
 * frame size once; a variable one is never cached), taken in turn. */
typedef void nest_fn(int d, long i);
static nest_fn *const nest_tab[7];
#define NEST_FN(k)                                                      \
    __attribute__((noinline)) static void nest_##k(int d, long i)       \
    {                                                                   \
        volatile char pad[64 * (k + 1)];                                \
        pad[0] = (char)d;                                               \
        if (d <= 0)                                                     \
            one_step(i);                                                \
        else                                                            \
            nest_tab[(d - 1) % 7](d - 1, i);                            \
        __asm__ volatile("" ::: "memory");  /* no tail call */          \
        (void)pad[0];                                                   \
    }
NEST_FN(0) NEST_FN(1) NEST_FN(2) NEST_FN(3) NEST_FN(4) NEST_FN(5) NEST_FN(6)
static nest_fn *const nest_tab[7] = { nest_0, nest_1, nest_2, nest_3, nest_4, nest_5, nest_6 };

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 3000;
    const char *s = getenv("SLED_KB"), *e = getenv("EVICT_KB");
    sled_make(s ? strtoul(s, NULL, 10) : 96);
    dirty_len = (e ? strtoul(e, NULL, 10) : 4096) << 10;
    dirty = calloc(1, dirty_len ? dirty_len : 1);
    const char *dep = getenv("COLD_DEPTH");
    int depth = dep ? atoi(dep) : 0;
    CUcontext ctx;
    have_kernel = bench_start(&ctx, &noop);
    for (int i = 0; i < PARAMS; i++)
        CK(cuMemAllocAsync(&params[i], 4096 + 256 * (i % 7), NULL));
    ta = calloc((size_t)n, sizeof *ta);
    tf = calloc((size_t)n, sizeof *tf);
    tl = calloc((size_t)n, sizeof *tl);
    /* One warm-up step (first-use announcements, the call sites' first
     * walks), then the timed steps. */
    const char *marks = getenv("COLD_MARKS");
    if (marks && atoi(marks))
        print_marks();
    for (long i = -2 * ACT; i < n; i++) {
        if (depth > 0)
            nest_tab[depth % 7](depth, i);
        else
            one_step(i);
    }
    qsort(ta, (size_t)n, sizeof *ta, cmp_double);
    qsort(tf, (size_t)nf, sizeof *tf, cmp_double);
    qsort(tl, (size_t)n, sizeof *tl, cmp_double);
    printf("cold_alloc %.1f\n", ta[n / 2]);
    printf("cold_free %.1f\n", nf ? tf[nf / 2] : 0.0);
    if (have_kernel)
        printf("cold_launch %.1f\n", tl[n / 2]);
    return 0;
}
