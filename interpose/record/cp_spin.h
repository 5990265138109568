/*
 * cp_spin.h - waiting in the shim's spin loops (the record buffers' lock,
 * the interval maps' lock, an API name another thread is writing): a CPU
 * hint between tries, and the CPU given away when the holder seems to have
 * been preempted.
 */
#ifndef CP_SPIN_H
#define CP_SPIN_H

#include <sched.h>

/*! cp_cpu_relax() : a hint to the CPU inside a spin loop (pause on x86,
 *  yield on AArch64, nothing elsewhere). */
static inline void cp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/*! cp_spin_pause() : one wait of a spin loop whose count is *spins (0 at
 *  the loop's start): a CPU hint, or every yield_after + 1 tries
 *  sched_yield() (the holder may have been preempted: give it the CPU). */
static inline void cp_spin_pause(unsigned *spins, unsigned yield_after)
{
    if (++*spins > yield_after) {
        sched_yield();
        *spins = 0;
    } else {
        cp_cpu_relax();
    }
}

#endif
