/*
 * cp_scache.h - the per-thread call-site cache: a repeated native call site
 * is recognised without unwinding, by checking that every return address
 * the last full unwind found is still in its stack slot.
 *
 * Why this is exact, not a guess from a short prefix: an entry remembers,
 * for EVERY frame the full unwind walked (up to the configured depth plus
 * the shim's own frames), the stack address of the frame's return-address
 * slot and the value it held, and the stack pointer at which the walk
 * started.  A hit needs the same starting stack pointer and every slot to
 * hold the same return address, so a different caller at any depth the
 * stack records (the 2nd frame or the 24th) writes a different return
 * address into its slot and misses.  Each frame's size follows from its
 * return address (the unwind tables of that code), so the same addresses
 * from the same start reproduce the same walk.  The one layout this cannot
 * see is a frame whose size varies at run time (alloca, stack realignment)
 * in which a stale copy of the old return address survives at exactly the
 * old slot: such a frame makes the next slot move, and the entry is only
 * trusted when the return address the call pushed is read back from the
 * slot at fill time (see cp_scache_fill()).
 *
 * x86-64 only (the return address sits at CFA - 8); elsewhere every lookup
 * misses and capture unwinds as before.
 */
#ifndef CP_SCACHE_H
#define CP_SCACHE_H

#include <stddef.h>
#include <stdint.h>

#define CP_SCACHE_FRAMES 40     /* longest walk an entry can hold */

struct cp_scache_ent {
    uintptr_t sp;               /* CFA of cp_stack_capture; 0 = empty */
    uintptr_t tag;              /* return address into the hook, mixed with skip */
    uint64_t epoch;             /* cp_itab_epoch() when filled */
    uint64_t id;                /* stack id without Python frames, 0 = not known yet */
    const void *py_key;         /* the last full key with Python frames (interned copy) */
    uint64_t py_len, py_id;     /* its length in bytes and id */
    uint64_t serial;            /* this thread's fill count when filled: names the native walk */
    uint16_t n_slots;           /* return-address slots checked */
    uint16_t first;             /* slot index of the first frame the stack keeps */
    uint16_t n_native;          /* frames the stack keeps */
    uint32_t off[CP_SCACHE_FRAMES];   /* slot address - (sp - 8) */
    uint64_t ret[CP_SCACHE_FRAMES];   /* the return address the slot held */
};

/*! cp_scache_find() : the calling thread's entry for a walk that starts at
 *  stack pointer sp with tag, if every slot it recorded still holds the
 *  same return address and it was filled in file epoch `epoch`.
 *  @return : the entry (valid until this thread's next cp_scache_fill), or
 *  NULL (a miss: unwind). */
struct cp_scache_ent *cp_scache_find(uintptr_t sp, uintptr_t tag, uint64_t epoch);

/*! cp_scache_fill() : remember an unwind (unw_backtrace's ips[0..got-1]:
 *  ips[0] in cp_stack_capture itself, then return addresses) that started
 *  at stack pointer sp; `first` and `n_native` are the frames the stack
 *  keeps.  Each frame's slot is computed from the frame sizes learned by
 *  cp_scache_learn() and read back.  Nothing is stored when the walk is too
 *  long, leaves the thread's stack, or a return address is not found where
 *  its frame size puts it (a frame whose size varies: alloca, realignment,
 *  a signal frame): that site then unwinds on every capture, as without
 *  the cache.  @return : the new entry, or NULL; *unknown is set when a
 *  frame's size was never learned (one cursor walk can teach it). */
struct cp_scache_ent *cp_scache_fill(uintptr_t sp, uintptr_t tag, uint64_t epoch,
                                     const uintptr_t *ips, int got, int first, int n_native,
                                     int *unknown);

/*! cp_scache_learn() : learn the frame size of every return address of a
 *  cursor walk (ips[i], sps[i] each frame's IP and stack pointer as
 *  libunwind reports them, sps[1] == sp; sps NULL when the walk gave
 *  none), so that cp_scache_fill() can place their slots from then on.
 *  Frames that cannot be learned are marked never to be walked for again.
 *  Process-wide, lock-free; once per return address in practice. */
void cp_scache_learn(uintptr_t sp, const uintptr_t *ips, const uintptr_t *sps, int got);

/*! cp_scache_enable() : turn the calling thread's cache on (1) or off (0:
 *  every capture unwinds), for the tests that compare the two; without
 *  it, CUPROBE_STACK_CACHE decides (default on, x86-64 only). */
void cp_scache_enable(int on);

/*! cp_scache_aux() : a pointer slot on the calling thread's cache for a
 *  caller's own per-thread table (cp_stack.c's walk memo), freed with the
 *  cache when the thread ends (free()).  @return : NULL when the thread
 *  has no cache yet. */
void **cp_scache_aux(void);

/*! cp_scache_count_py() : count, on the calling thread's cache, a Python
 *  chain found repeated (repeated != 0: cp_stack.c's walk memo answered)
 *  or walked in full at a cache hit; summed into the exit line. */
void cp_scache_count_py(int repeated);

/*! cp_scache_scratch() : len bytes of memory, 64-aligned, for the
 *  calling thread's walk (its buffers, libunwind's cursor and
 *  context), kept with its table: a thread takes them from one that ended,
 *  whose pages are in memory, where its own stack's next pages may not be
 *  (a new thread's first walk would fault them in).  Give it back with
 *  cp_scache_scratch_done() before returning.
 *  @return : it, or NULL when it is in use (a signal handler interrupted
 *  a walk of this thread) or out of memory: use the stack. */
void *cp_scache_scratch(size_t len);

/*! cp_scache_scratch_done() : the calling thread is done with the memory
 *  cp_scache_scratch() gave it. */
void cp_scache_scratch_done(void);

/*! cp_scache_enabled() : whether the calling thread looks up its cache. */
int cp_scache_enabled(void);

/*! cp_scache_sets() : how many sets the calling thread's table has now (0:
 *  no table yet).  For tests and benchmarks. */
unsigned cp_scache_sets(void);

#endif /* CP_SCACHE_H */
