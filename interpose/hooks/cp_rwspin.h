/*
 * cp_rwspin.h - the interval maps' lock (cp_imap.c): a reader-writer
 * spinlock in one 32-bit word, for sections that last a tree descent and
 * never call out.  Every allocation and free takes it once as a writer, so
 * a writer enters with one atomic OR and leaves with a plain store.
 */
#ifndef CP_RWSPIN_H
#define CP_RWSPIN_H

#include <stdatomic.h>

#include "cp_spin.h"

#define CP_RW_WRITER 1u     /* the word: CP_RW_WRITER bit | readers * CP_RW_READER */
#define CP_RW_READER 2u

/*! cp_rw_wlock() : take *w as the only writer (spins; yields the CPU after
 *  100 tries in a row). */
static inline void cp_rw_wlock(atomic_uint *w)
{
    unsigned spins = 0;
    /* Take the writer bit first: readers arriving after it back off, so a
     * stream of readers cannot starve a writer. */
    while (atomic_fetch_or_explicit(w, CP_RW_WRITER, memory_order_acquire) & CP_RW_WRITER) {
        /* Another writer has it: wait for its store before trying again. */
        do {
            cp_spin_pause(&spins, 100);
        } while (atomic_load_explicit(w, memory_order_relaxed) & CP_RW_WRITER);
    }
    /* Then wait for the readers already inside to leave. */
    while (atomic_load_explicit(w, memory_order_acquire) != CP_RW_WRITER)
        cp_spin_pause(&spins, 100);
}

/*! cp_rw_wunlock() : leave a section taken with cp_rw_wlock(). */
static inline void cp_rw_wunlock(atomic_uint *w)
{
    /* A store, not a read-modify-write (a locked instruction waits for
     * the stores before it, and every allocation and free takes this lock
     * once): while the
     * writer bit is set the word is exactly CP_RW_WRITER.  Readers have
     * left (cp_rw_wlock waited for them), a reader enters only by a CAS
     * from a word without the bit (cp_rw_rlock), and another writer's
     * fetch_or leaves a word with the bit unchanged. */
    atomic_store_explicit(w, 0, memory_order_release);
}

/*! cp_rw_rlock() : take *w as one of any number of readers (spins while a
 *  writer holds or waits for it). */
static inline void cp_rw_rlock(atomic_uint *w)
{
    unsigned spins = 0;
    unsigned v = atomic_load_explicit(w, memory_order_relaxed);
    for (;;) {
        /* Never touch the word while a writer holds or waits for it (see
         * cp_rw_wunlock): a CAS from a word without the writer bit. */
        if (v & CP_RW_WRITER) {
            cp_spin_pause(&spins, 100);
            v = atomic_load_explicit(w, memory_order_relaxed);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(w, &v, v + CP_RW_READER,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
    }
}

/*! cp_rw_runlock() : leave a section taken with cp_rw_rlock(). */
static inline void cp_rw_runlock(atomic_uint *w)
{
    atomic_fetch_sub_explicit(w, CP_RW_READER, memory_order_release);
}

#endif
