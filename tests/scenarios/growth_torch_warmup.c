/*
 * growth_torch_warmup.c - PyTorch's caching allocator as the driver and
 * the companion see it: a warm-up that takes 50 segments of 2 MiB in the
 * first 10 of 400 steps (the model's weights: allocated == reserved),
 * a plateau of 140 steps that reuse them (2 ms each), then growth: 250
 * steps of 1 ms, a new 2 MiB segment every 4th, with a torch.segment
 * record after every segment taken (allocated/reserved written the way
 * the companion does).  Kernels and a synchronisation in every step;
 * nothing is freed until exit.
 *
 * memory-growth must measure from the growth's start, not from the first
 * allocation or the first companion sample: growth 102 MiB (the floors
 * from the plateau's 101 MiB to the last eighth's 203 MiB; 62 segments in
 * all), PyTorch's timeline from the first sample of the growth (allocated
 * 102 MiB), the rate over the growth's time alone and per step of the
 * growth (about 250 steps, not 400).  Warm-up and growth take their
 * segments at the same call site: its count in the finding is the growth's
 * allocations (61 segments, its 122 MiB), not the run's 112.
 * The program prints "growth_start_ns N" (CLOCK_MONOTONIC, the trace's
 * clock) just before the growth's first segment and "growth_end_ns N"
 * after its last step; tests/sh/growth_window.sh compares them with the
 * finding's start and duration.
 *
 * SC_GROWTH=cache: the segments of the growth hold no live tensors
 * (reserved grows, allocated stays at the weights): the cache grows, which
 * is info.  Measured from the first sample of the run, the weights taken
 * in the warm-up looked like tensor growth.
 *
 * SC_GROWTH=gather (run it with FAKECUDA_MEM=3G): predictions gathered by
 * concatenation, as Trainer.predict does: each growth segment is 32 MiB
 * and holds 7% of it more of live tensors, and the companion's samples
 * stop two thirds of the way through (its sampler lags behind a fast
 * loop).  Between the timeline's two ends live tensors grew by 90 MiB and
 * the pool reserved 1.25 GiB (a fourteenth), while the driver saw nearly
 * 2 GiB (live tensors, a twentieth of that): growing tensors (a warning),
 * by the timeline's own reserved bytes.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenario.h"

#define STEPS 400
#define WARM_STEPS 10
#define WARM_SEGS 50
#define GROW_FROM 150
#define EVERY 4
#define SEG (2 * MIB)

typedef int (*record_fn)(const char *kind, const char *json, size_t len);

#define GATHER_SEG (32 * MIB)
#define GATHER_LIVE (GATHER_SEG * 7 / 100)
#define GATHER_SAMPLED (STEPS - GROW_FROM) / EVERY * 2 / 3

static CUdeviceptr seg[WARM_SEGS + STEPS / EVERY];
static int k;
static unsigned long long allocated, reserved;
static int cache_only, gather, sample;
static record_fn rec;

/* The companion's torch.segment record: the allocator's counts right
 * after it took device memory. */
static void torch_sample(void)
{
    char js[512];
    int n = snprintf(js, sizeof js,
                     "{\"v\":1,\"sample\":%d,\"collect_us\":40,\"allocated_bytes\":%llu,"
                     "\"reserved_bytes\":%llu,\"devices\":[{\"device\":0,"
                     "\"allocated_bytes\":%llu,\"reserved_bytes\":%llu,\"n_segments\":%d}]}",
                     ++sample, allocated, reserved, allocated, reserved, k);
    if (!rec || rec("torch.segment", js, (size_t)n) != 0)
        fprintf(stderr, "cuprobe_framework_record unavailable\n");
}

static __attribute__((noinline)) void take_segment(int tensors)
{
    size_t size = gather && k >= WARM_SEGS ? GATHER_SEG : SEG;
    CK(cuMemAlloc_v2(&seg[k++], size));
    reserved += size;
    if (tensors)
        allocated += size == SEG ? SEG : GATHER_LIVE;
}

static void stamp(const char *what)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    printf("%s %llu\n", what,
           (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
}

static void sleep_ms(long ms)
{
    struct timespec t = { 0, ms * 1000000 };
    nanosleep(&t, NULL);
}

/* One line takes every segment, in the warm-up and in the growth: the
 * allocator takes them where its cache runs out, whichever step it is. */
static void take(int step)
{
    int warm = step < WARM_STEPS, grow = step >= GROW_FROM;
    int n = warm ? WARM_SEGS / WARM_STEPS : grow && step % EVERY == 0;
    int tensors = warm || !cache_only, ms = warm ? 0 : grow ? 1 : 2, start = step == GROW_FROM;
    /* Hide the step's plan from the optimiser: code specialised per phase
     * would make several call sites (several stacks) of each line. */
    __asm__ volatile("" : "+r"(n), "+r"(tensors), "+r"(ms), "+r"(start));
    CK(cuCtxSynchronize());   /* the step's wait for the GPU: marks the steps */
    if (start)
        stamp("growth_start_ns");
    for (int i = 0; i < n; i++)
        take_segment(tensors);
    if (n && !(gather && k - WARM_SEGS > GATHER_SAMPLED))
        torch_sample();
    if (ms)
        sleep_ms(ms);
}

int main(void)
{
    const char *g = getenv("SC_GROWTH");
    cache_only = g && strcmp(g, "cache") == 0;
    gather = g && strcmp(g, "gather") == 0;
    rec = (record_fn)dlsym(RTLD_DEFAULT, "cuprobe_framework_record");
    sc_start(0);
    CUdeviceptr work = sc_train(STEPS, take);
    stamp("growth_end_ns");
    sc_free_all(seg, k);
    CK(cuMemFree_v2(work));
    return 0;
}
