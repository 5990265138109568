/*
 * cp_imap.h - cuprobe's own maps of live memory: device allocations (by
 * device) and host memory CUDA knows (pinned, registered).  Copies are
 * classified from these first; the driver is asked only on a miss.
 */
#ifndef CP_IMAP_H
#define CP_IMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct cp_range {
    uint64_t base;
    uint64_t size;
    int dev;            /* device ordinal; -1 for host memory */
    uint8_t mclass;     /* enum cp_mem_class */
    uint8_t kind;       /* enum cp_mem_kind */
    uint64_t aux;       /* handle map: the physical allocation's bytes */
} cp_range;

/* DEV: device, managed and mapped VMM ranges.  HOST: pinned, registered and
 * host-located VMM ranges.  HANDLE: VMM physical handles (base = handle,
 * size 1, aux = bytes). */
enum cp_imap_which { CP_IMAP_DEV = 0, CP_IMAP_HOST = 1, CP_IMAP_HANDLE = 2, CP_IMAP_N = 3 };

/*! cp_imap_insert() : add a live range (replacing any it overlaps: in DEV
 *  once it reaches the tree, at the next lookup or when the pending layer
 *  fills; one freed before that replaced nothing).
 *  @return : 1 when the process's device memory grew: in DEV, when the
 *  bytes of r->dev's live ranges (0..63) reached a new high since the
 *  start (or the fork); in HANDLE, always (a new physical allocation);
 *  0 otherwise (HOST: always 0); -ENOMEM (the range is then simply not
 *  known, nor counted). */
int cp_imap_insert(int which, const cp_range *r);

/*! cp_imap_remove() : remove the range starting exactly at base; its data is
 *  copied to *out when out is not NULL.  @return : 0, or -ENOENT. */
int cp_imap_remove(int which, uint64_t base, cp_range *out);

/*! cp_imap_find() : the live range containing addr.  @return : 0 and *out,
 *  or -ENOENT.  Readers run in parallel (rwlock); in DEV the first lookup
 *  inside a pending range of a long log indexes the log by address, as a
 *  writer (cp_ipidx.h); later ones read the index. */
int cp_imap_find(int which, uint64_t addr, cp_range *out);

/*! cp_imap_dev_mask() : bit d set while device d has live device memory
 *  (devices 0..63).  One relaxed load: the launch check's fast path. */
uint64_t cp_imap_dev_mask(void);

/* The DEV map's slow paths, counted since the start (or the fork): its
 * pending layer moved into the tree because the log was full with more
 * than half live, or for another reason (a base already pending, base 0,
 * a test); the log indexed by address for a lookup; the ranges the
 * flushes moved; compactions of the log; frees found in the tree (not
 * pending). */
enum cp_imap_stat {
    CP_IMAP_ST_FLUSH_FULL, CP_IMAP_ST_INDEX, CP_IMAP_ST_FLUSH_OTHER,
    CP_IMAP_ST_MOVED, CP_IMAP_ST_COMPACT, CP_IMAP_ST_TREE_FREES, CP_IMAP_ST_N
};

/*! cp_imap_stats() : the DEV map's counts (enum cp_imap_stat) into out. */
void cp_imap_stats(uint64_t out[CP_IMAP_ST_N]);

/*! cp_imap_reset() : forget everything (a forked child). */
void cp_imap_reset(void);

/*! cp_imap__flush() : for tests: move the DEV map's pending ranges into
 *  the tree (as a lookup does when more than a few are pending). */
void cp_imap__flush(void);

/*! cp_imap__pend_cap() : for tests: flush as cp_imap__flush(), then use at
 *  most n entries of the DEV map's pending log (capped at its size; n = 0
 *  keeps the cap).  @return : the previous cap. */
unsigned cp_imap__pend_cap(unsigned n);

/*! cp_imap__check() : for tests: verify map `which` is a treap (bases in
 *  order, ranges disjoint, every node's priority at least its kids').
 *  @return : the tree's height, or -1 when it is broken. */
int cp_imap__check(int which);

#endif /* CP_IMAP_H */
