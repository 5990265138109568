/*
 * bench_calls.c - nanoseconds per driver call on the fake driver, for the
 * wrapped hot paths: a kernel launch, a small pinned HtoD async copy, an
 * allocation + free, and a stream-ordered allocation + free (what PyTorch's
 * cudaMallocAsync backend does for every tensor).  Run it plain and under
 * the shim (run_calls.sh alternates the two and reports medians and the
 * added cost).
 *
 *   bench_calls [iterations]      prints "launch NS", "htod_pinned NS",
 *                                 "alloc_free NS", "async_pair NS",
 *                                 "async_live NS", "async_alt NS",
 *                                 "async_step NS", "async_deep NS",
 *                                 "async_fan NS", "async_memset NS",
 *                                 "async_inside NS", "async_view NS",
 *                                 "async_2t NS", "ctx_current NS",
 *                                 "fw_sample NS"
 *                                 (per call / per pair / per sample)
 *
 * async_live: a stream-ordered free of the oldest of LIVE allocations and
 * a new allocation, so the shim's maps hold as many ranges as a training
 * step's tensors (async_pair frees what it just made: its maps stay nearly
 * empty).  async_2t: the same, but two threads take turns every PHASE
 * pairs, as PyTorch's main thread (forward) and autograd thread (backward)
 * do, freeing each other's allocations: state the shim writes on one thread
 * must move to the other's core.  The hand-over is in plain's figure too.
 * async_alt: async_live's pairs made alternately from two call paths that
 * start the stack at the same depth (the call-site cache's worst case
 * while it kept one stack per stack pointer).  async_step: a training
 * step's lifetimes beside async_live's 256 long-lived allocations (the
 * parameters): ACT activations made in order (forward) and freed in
 * reverse (backward), each freed right after its gradient is made, the
 * gradients freed next step as their activations are made again (PyTorch's
 * zero_grad(set_to_none=True)); every allocation then lives 1 to 2 * ACT - 1
 * allocations.
 *
 * fw_sample: what one sample of the framework companion costs the thread
 * that takes it, beside the kernels launched since the one before: FW_K
 * launches, one of each of FW_K functions, then a record of FW_JSON bytes
 * through cuprobe_framework_record (the shim writes the pending launch
 * counts first).  Plain, without the shim, it is the launches alone.
 *
 * BENCH_PAUSE=1 under the shim: recording paused (cuprobe_bench_pause)
 * before the timed loops, so each figure is the wrappers' pass-through
 * cost: what bench/gpu_steps.py's toggle mode has in its paused turns.
 *
 * Against a real libcuda (no "fake" module to load) the launch line is
 * skipped and the other paths run on device memory of GPU 0.
 *
 * Each figure is the median over 100 equal batches, not the mean of one
 * long loop: on a shared machine a batch in which the thread was preempted
 * (or the trace writer ran on the same core) is an outlier, and the median
 * drops it instead of smearing it over the whole run.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_api.h"
#include "bench_util.h"

#define BATCHES 100

static CUfunction noop;
static CUdeviceptr dev;
static void *pinned;

static void run_launch(long n)
{
    for (long i = 0; i < n; i++)
        CK(cuLaunchKernel(noop, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
}

/* The query each recorded event makes (cp_ev_ctx): its price on a real
 * driver is part of an event's cost that perf puts in libcuda, not in the
 * shim (not wrapped: the same in both runs). */
static void run_ctx_current(long n)
{
    CUcontext c;
    for (long i = 0; i < n; i++)
        CK(cuCtxGetCurrent(&c));
}

static void run_htod(long n)
{
    for (long i = 0; i < n; i++)
        CK(cuMemcpyHtoDAsync_v2(dev, pinned, 64, NULL));
}

static void run_alloc_free(long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr x;
        CK(cuMemAlloc_v2(&x, 1024));
        CK(cuMemFree_v2(x));
    }
}

static void run_async_pair(long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr x;
        CK(cuMemAllocAsync(&x, 1024, NULL));
        CK(cuMemFreeAsync(x, NULL));
    }
}

#define LIVE 256
#define PHASE 128
static CUdeviceptr ring[LIVE];
static unsigned ring_at;

static void ring_step(long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr *x = &ring[ring_at++ % LIVE];
        if (*x)
            CK(cuMemFreeAsync(*x, NULL));
        CK(cuMemAllocAsync(x, 1024 + 256 * (ring_at % 7), NULL));
    }
}

static void run_async_live(long n)
{
    ring_step(n);
}

/* async_alt: the pairs of async_live, made alternately from two call
 * paths whose frames are the same size, as the backward functions of
 * different operators reach the allocator from PyTorch's autograd engine:
 * the two stacks start at the same stack pointer. */
__attribute__((noinline)) static void alt_a(long n)
{
    ring_step(n);
    __asm__ volatile("" ::: "memory");  /* not merged with alt_b */
}

__attribute__((noinline)) static void alt_b(long n)
{
    ring_step(n);
    __asm__ volatile("nop" ::: "memory");
}

static void run_async_alt(long n)
{
    for (long i = 0; i < n; i++)
        (i & 1 ? alt_b : alt_a)(1);
}

/* async_fan: async_live's pairs made in turn from FAN call paths whose
 * frames are the same size (async_alt's two, and more): FAN stacks that
 * start at one stack pointer, as many operators' backward functions reach
 * the allocator from the autograd engine at one depth. */
#define FAN 6
#define FAN_FN(k)                                                       \
    __attribute__((noinline)) static void fan_##k(long n)               \
    {                                                                   \
        ring_step(n);                                                   \
        __asm__ volatile(".rept " #k "\n nop\n .endr" ::: "memory");    \
    }
FAN_FN(1) FAN_FN(2) FAN_FN(3) FAN_FN(4) FAN_FN(5) FAN_FN(6)
static void (*const fan_fn[FAN])(long) = { fan_1, fan_2, fan_3, fan_4, fan_5, fan_6 };

static void run_async_fan(long n)
{
    for (long i = 0; i < n; i++)
        fan_fn[i % FAN](1);
}

/* async_memset: async_live's pairs, each new tensor zeroed at its start
 * with cuMemsetD8Async (PyTorch's zero_() and new gradients), which the
 * shim classifies through the device map while many ranges are pending
 * (GPT-2 small: 107 memsets and 1,284 allocations a step).  async_view:
 * the same memset 256 bytes into the tensor (a view, a copy into a slice:
 * a lookup that is not a pending tensor's base while hundreds of tensors
 * are pending). */
static void ring_memset(long n, size_t at)
{
    for (long i = 0; i < n; i++) {
        ring_step(1);
        CK(cuMemsetD8Async(ring[(ring_at - 1) % LIVE] + at, 0, 1024 - at, NULL));
    }
}

static void run_async_memset(long n)
{
    ring_memset(n, 0);
}

static void run_async_view(long n)
{
    ring_memset(n, 256);
}

/* async_inside: a pair over INSIDE live tensors (the oldest freed, a new
 * one made) and a memset inside the new one, not at its start: a copy or
 * kernel argument into a view, while few tensors are pending (a lookup
 * that is not a pending tensor's base). */
#define INSIDE 4
static CUdeviceptr inside[INSIDE];
static unsigned inside_at;

static void run_async_inside(long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr *p = &inside[inside_at++ % INSIDE];
        if (*p)
            CK(cuMemFreeAsync(*p, NULL));
        CK(cuMemAllocAsync(p, 4096, NULL));
        CK(cuMemsetD8Async(*p + 256, 0, 1024, NULL));
    }
}

/* async_deep: async_live's pairs made from DEEP_PATHS call depths in
 * turn, one depth after another, so each pair's stack starts at a stack
 * pointer of its own and the sites repeat in a cycle of DEEP_PATHS, as the
 * autograd thread's allocations do in a training step (GPT-2 small under
 * cudaMallocAsync: 1,284 allocations a step, half of them there, and that
 * thread's call-site cache can miss on most).  The
 * recursion is in plain's figure too. */
#define DEEP_PATHS 300
static unsigned deep_at;

__attribute__((noinline)) static void deep(unsigned d)
{
    if (d == 0)
        ring_step(1);
    else
        deep(d - 1);
    __asm__ volatile("" ::: "memory");  /* no tail call: a frame a level */
}

static void run_async_deep(long n)
{
    for (long i = 0; i < n; i++)
        deep(deep_at++ % DEEP_PATHS);
}

/* async_step: one allocation and one free per pair, 2 * ACT pairs a step;
 * the pair before the first frees nothing. */
static CUdeviceptr act[ACT], grad[ACT];
static unsigned step_at;

static void run_async_step(long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr *make, *drop;
        unsigned k = bench_step_pick(step_at++, act, grad, &make, &drop);
        CK(cuMemAllocAsync(make, 1024 + 256 * (k % 7), NULL));
        if (*drop)
            CK(cuMemFreeAsync(*drop, NULL));
        *drop = 0;
    }
}

/* async_2t: `turn` counts hand-overs, the helper runs the odd turns.  A
 * condition variable, not a spin: spinning threads on a machine with few
 * CPUs (or a KVM guest's pause-loop exits) made a hand-over cost ~50 us. */
static pthread_mutex_t turn_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_cv = PTHREAD_COND_INITIALIZER;
static long turn;
static int helper_stop;
static CUcontext bench_ctx;

static void *helper_main(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(bench_ctx));
    pthread_mutex_lock(&turn_mu);
    for (;;) {
        while (!(turn & 1) && !helper_stop)
            pthread_cond_wait(&turn_cv, &turn_mu);
        if (helper_stop)
            break;
        pthread_mutex_unlock(&turn_mu);
        ring_step(PHASE);
        pthread_mutex_lock(&turn_mu);
        turn++;
        pthread_cond_broadcast(&turn_cv);
    }
    pthread_mutex_unlock(&turn_mu);
    return NULL;
}

static void run_async_2t(long n)
{
    for (long done = 0; done < n; done += 2 * PHASE) {
        ring_step(PHASE);
        pthread_mutex_lock(&turn_mu);
        turn++;
        pthread_cond_broadcast(&turn_cv);
        while (turn & 1)
            pthread_cond_wait(&turn_cv, &turn_mu);
        pthread_mutex_unlock(&turn_mu);
    }
}

#define FW_K 8
#define FW_JSON 256
typedef int (*fw_record_fn)(const char *, const char *, size_t);
static CUfunction fw_func[FW_K];
static fw_record_fn fw_record;
static char fw_json[FW_JSON];

static void run_fw_sample(long n)
{
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < FW_K; k++)
            CK(cuLaunchKernel(fw_func[k], 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        if (fw_record)
            fw_record("bench.sample", fw_json, FW_JSON);
    }
}

/* fw_sample's functions (one module each: the fake driver hands out a
 * function per module and kernel) and the shim's entry, when loaded. */
static int fw_setup(void)
{
    for (int k = 0; k < FW_K; k++) {
        CUmodule m;
        char name[32];
        snprintf(name, sizeof name, "fake_noop@fw_sample_%d", k);
        if (cuModuleLoadData(&m, "fake") != CUDA_SUCCESS ||
            cuModuleGetFunction(&fw_func[k], m, name) != CUDA_SUCCESS)
            return 0;
    }
    memset(fw_json, ' ', sizeof fw_json);
    fw_json[0] = '{';
    fw_json[FW_JSON - 1] = '}';
    fw_record = (fw_record_fn)dlsym(RTLD_DEFAULT, "cuprobe_framework_record");
    return 1;
}

/* Median ns per call of `fn` over BATCHES batches of n / BATCHES calls. */
static double median_ns(void (*fn)(long), long n)
{
    double per[BATCHES];
    long m = n / BATCHES > 0 ? n / BATCHES : 1;
    fn(m);  /* warm: first-use announcements, caches */
    for (int b = 0; b < BATCHES; b++) {
        double t = now();
        fn(m);
        per[b] = (now() - t) / m;
    }
    qsort(per, BATCHES, sizeof per[0], cmp_double);
    return (per[BATCHES / 2 - 1] + per[BATCHES / 2]) / 2;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    CUcontext ctx;
    int have_kernel = bench_start(&ctx, &noop);
    CK(cuMemAlloc_v2(&dev, 4096));
    CK(cuMemHostAlloc(&pinned, 4096, 0));
    const char *pause_env = getenv("BENCH_PAUSE");
    int (*pause_fn)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "cuprobe_bench_pause");
    if (pause_env && atoi(pause_env) && pause_fn)
        pause_fn(1);

    if (have_kernel)
        printf("launch %.1f\n", median_ns(run_launch, n));
    printf("ctx_current %.1f\n", median_ns(run_ctx_current, n));
    printf("htod_pinned %.1f\n", median_ns(run_htod, n / 10));
    printf("alloc_free %.1f\n", median_ns(run_alloc_free, n / 10));
    printf("async_pair %.1f\n", median_ns(run_async_pair, n / 10));
    printf("async_live %.1f\n", median_ns(run_async_live, n / 10));
    printf("async_alt %.1f\n", median_ns(run_async_alt, n / 10));
    printf("async_step %.1f\n", median_ns(run_async_step, n / 10));
    printf("async_deep %.1f\n", median_ns(run_async_deep, n / 20));
    printf("async_fan %.1f\n", median_ns(run_async_fan, n / 10));
    printf("async_memset %.1f\n", median_ns(run_async_memset, n / 10));
    printf("async_inside %.1f\n", median_ns(run_async_inside, n / 10));
    printf("async_view %.1f\n", median_ns(run_async_view, n / 10));
    if (have_kernel && fw_setup())
        printf("fw_sample %.1f\n", median_ns(run_fw_sample, n / 100));
    pthread_t helper;
    bench_ctx = ctx;
    if (pthread_create(&helper, NULL, helper_main, NULL) == 0) {
        printf("async_2t %.1f\n", median_ns(run_async_2t, n / 10));
        pthread_mutex_lock(&turn_mu);
        helper_stop = 1;
        pthread_cond_broadcast(&turn_cv);
        pthread_mutex_unlock(&turn_mu);
        pthread_join(helper, NULL);
    }
    for (unsigned i = 0; i < LIVE; i++)
        if (ring[i])
            CK(cuMemFreeAsync(ring[i], NULL));
    for (unsigned i = 0; i < INSIDE; i++)
        if (inside[i])
            CK(cuMemFreeAsync(inside[i], NULL));
    for (unsigned i = 0; i < ACT; i++) {
        if (act[i])
            CK(cuMemFreeAsync(act[i], NULL));
        if (grad[i])
            CK(cuMemFreeAsync(grad[i], NULL));
    }
    return 0;
}
