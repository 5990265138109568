/*
 * cp_spin.h - waiting in the shim's spin loops (the record buffers' lock,
 * the interval maps' lock, an API name another thread is writing): a CPU
 * hint between tries, and the CPU given away when the holder seems to have
 * been preempted.
 */
#ifndef CP_SPIN_H
#define CP_SPIN_H

#include <pthread.h>
#include <sched.h>
#include <time.h>

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

/*! cp_mutex_lock_bounded() : lock mu, trying every millisecond for at most
 *  ms milliseconds.  Exit paths use it: they may run in a signal handler
 *  that interrupted a holder of this very mutex, and must never block forever.
 *  @return : 1 when locked, 0 when it gave up. */
static inline int cp_mutex_lock_bounded(pthread_mutex_t *mu, unsigned ms)
{
    struct timespec ns = {0, 1000000};
    for (unsigned i = 0; i <= ms; i++) {
        if (pthread_mutex_trylock(mu) == 0)
            return 1;
        nanosleep(&ns, NULL);
    }
    return 0;
}

#endif
