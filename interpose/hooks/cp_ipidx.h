/*
 * cp_ipidx.h - the device map's pending ranges found by address (an index
 * over the entries of cp_imap.c's pending log).
 *
 * Why.  A copy, a memset or a kernel argument inside a tensor (a view, an
 * offset) is not the base of a pending range, so the log's base table
 * cannot answer it.  Moving every pending range into the treap before such
 * a lookup would send a step's tensors through the tree, and their frees
 * with them, each time a training step makes one.  With this index
 * the lookup reads a few buckets and nothing moves.
 *
 * How.  A range of s bytes has the class k, the least with 2^k >= s; it
 * is filed in the bucket of (k, base >> k).  A range of class k holding
 * addr starts in bucket (k, addr >> k) or the one before it, so a lookup
 * reads two buckets per class in use.  Buckets carry the generation they
 * were filled in: starting over is one increment, not a clear.
 *
 * The index is built on demand (cp_ipidx_build(), by a lookup that needs
 * it) and then kept by every insert and free of the log until the log's
 * entries move (compaction, a flush) or it empties: cp_ipidx_off().  A
 * program whose lookups never need it (the base table or a short log
 * answers them all) never pays for it.
 *
 * Not locked: the caller (cp_imap.c) holds the DEV map's lock, as a
 * writer for every function here but cp_ipidx_find() and cp_ipidx_on().
 */
#ifndef CP_IPIDX_H
#define CP_IPIDX_H

#include <stdint.h>

#include "cp_imap.h"

#define CP_IPIDX_CAP 4096           /* log entries indexed at most: 0..CAP-1 */
#define CP_IPIDX_NONE 0xffffffffu

/*! cp_ipidx_on() : 1 while the index holds exactly the live entries of the
 *  log (those with a base), else 0. */
int cp_ipidx_on(void);

/*! cp_ipidx_build() : index the live entries of log[0..n) (n at most
 *  CP_IPIDX_CAP) and turn the index on. */
void cp_ipidx_build(const cp_range *log, unsigned n);

/*! cp_ipidx_off() : the index is stale (entries moved, or none are left):
 *  off until the next build. */
void cp_ipidx_off(void);

/*! cp_ipidx_add() : entry `at` of the log, range r (base not 0), is new.
 *  Nothing when the index is off. */
void cp_ipidx_add(unsigned at, const cp_range *r);

/*! cp_ipidx_del() : entry `at`, range r (as it was added), leaves the log's
 *  live entries.  Nothing when the index is off. */
void cp_ipidx_del(unsigned at, const cp_range *r);

/*! cp_ipidx_find() : the newest (highest) indexed entry of log whose range
 *  holds addr.  The index must be on.  @return : its position, or
 *  CP_IPIDX_NONE. */
unsigned cp_ipidx_find(uint64_t addr, const cp_range *log);

/*! cp_ipidx__check() : for tests: when on, every live entry of log[0..n)
 *  is in its bucket and nothing else is indexed.  @return : 0, or -1. */
int cp_ipidx__check(const cp_range *log, unsigned n);

#endif /* CP_IPIDX_H */
