/*
 * cp_clock.h - the shim's clock: CLOCK_MONOTONIC in nanoseconds, read from
 * the CPU's tick counter where that is safe.
 *
 * A timed driver call reads the clock twice, so a cuMemAllocAsync +
 * cuMemFreeAsync pair reads it four times.  The vDSO's clock_gettime
 * fences, reads the counter and follows the pvclock page under a sequence
 * lock in a KVM guest: about twice the cost of the counter read alone.
 * So cp_now_ns() reads the counter (rdtsc on x86-64, cntvct_el0 on
 * AArch64) and maps it with a line that the writer thread keeps fitted to
 * CLOCK_MONOTONIC (cp_clock_tune(), on the writer's passes, at least 50 ms
 * apart; the first on the first pass 10 ms after the writer starts):
 * times stay within microseconds of clock_gettime's, so traces of several
 * processes (ranks) still line up, and pthread deadlines computed from
 * them still hold.
 *
 * Until the line is fitted (the writer's first 10 ms or more), where the
 * counter is not known to be constant and shared by every CPU, and with
 * CUPROBE_TSC=0, cp_now_ns() is clock_gettime itself.  A reader never
 * waits for the writer (below), so a signal handler cannot spin on it.
 */
#ifndef CP_CLOCK_H
#define CP_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* The line ns = ns0 + (tick - tick0) * mult / 2^32, in two slots: the
 * writer rewrites the one not in use (its seq odd meanwhile) and then
 * points `cur` at it (1 or 2; 0: no line).  A reader of the slot in use
 * never meets a half-written line unless the writer moved the line twice
 * while the reader was between two loads (moves are 50 ms apart): then it
 * sees the changed seq and falls back.  Every field is atomic (acquire
 * loads and release stores are plain moves on x86-64) so that nobody
 * races. */
struct cp_clock_slot {
    _Atomic uint64_t seq;
    _Atomic uint64_t tick0;
    _Atomic uint64_t ns0;
    _Atomic uint64_t mult;
};

struct cp_clock_line {
    _Atomic uint32_t cur;
    struct cp_clock_slot slot[2];
};

extern struct cp_clock_line cp__clock;

/*! cp__clock_slow() : clock_gettime(CLOCK_MONOTONIC) in nanoseconds. */
static inline uint64_t cp__clock_slow(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*! cp_clock_tick() : the CPU's counter, or 0 where cuprobe knows none. */
static inline uint64_t cp_clock_tick(void)
{
#if defined(__x86_64__)
    /* Not ordered against the code around it: a call's start or end may
     * read up to a few tens of cycles early, far below what a time is used
     * for here (the writer's merge tolerates a record out of order). */
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

/*! cp_now_ns() : CLOCK_MONOTONIC in nanoseconds (see above: from the
 *  counter once the writer fitted its line).  Async-signal-safe, never
 *  waits.  Two reads on one thread may differ from clock_gettime's by a few
 *  microseconds, and a read taken while the line moves may be a few
 *  nanoseconds below one taken just before on another thread. */
static inline uint64_t cp_now_ns(void)
{
    uint32_t c = atomic_load_explicit(&cp__clock.cur, memory_order_acquire);
    if (__builtin_expect(!c, 0))
        return cp__clock_slow();
    struct cp_clock_slot *l = &cp__clock.slot[(c - 1) & 1];
    uint64_t s = atomic_load_explicit(&l->seq, memory_order_acquire);
    uint64_t tick = cp_clock_tick();
    /* Acquire loads (plain moves on x86-64), not a fence, which TSan does
     * not model: the second load of seq cannot move above them. */
    uint64_t t0 = atomic_load_explicit(&l->tick0, memory_order_acquire);
    uint64_t n0 = atomic_load_explicit(&l->ns0, memory_order_acquire);
    uint64_t m = atomic_load_explicit(&l->mult, memory_order_acquire);
    if (__builtin_expect((s & 1) || atomic_load_explicit(&l->seq, memory_order_relaxed) != s, 0))
        return cp__clock_slow();
    /* Signed: a counter read a moment before tick0 (the line was just
     * moved) maps to just before ns0. */
    return n0 + (uint64_t)(int64_t)(((__int128)(int64_t)(tick - t0) * (__int128)m) >> 32);
}

/*! cp_clock_tune() : on each pass of the writer thread: sample the counter against
 *  clock_gettime and fit the line (a new line starts where the old one is
 *  now, with a slope that closes the gap within a second: no jumps).  At
 *  most every 50 ms (the first line 10 ms after the base); the first call
 *  only takes a base sample.  A gap over a millisecond (a counter that
 *  jumped: a migrated VM) restarts the line at the true time; after the
 *  fourth, the counter is given up for good.
 *  Single caller at a time (the writer). */
void cp_clock_tune(void);

/*! cp_clock_state() : what the clock is doing, for logs and tests:
 *  1 reading the counter, 0 not (yet), -1 given up or not usable here
 *  (CUPROBE_TSC=0, no constant counter).  *restarts gets the count of
 *  restarts when not NULL. */
int cp_clock_state(unsigned *restarts);

/*! cp__clock_set() : publish a line (tune and tests: a line off on purpose). */
void cp__clock_set(uint64_t tick0, uint64_t ns0, uint64_t mult);

#endif /* CP_CLOCK_H */
