/*
 * cp_launch.h - launch counting and kernel names (cp_hooks_launch.c).
 */
#ifndef CP_LAUNCH_H
#define CP_LAUNCH_H

#include <stdint.h>

/*! cp_launch_flush() : record every thread's pending launch counts
 *  (CP_REC_LAUNCH_COUNT).  Called at flush points (exit, OOM) by the shim. */
void cp_launch_flush(void);

/*! cp_launch_take() : kernel launches the calling thread made since the
 *  previous call, and reset the count (for COPY and SYNC records). */
uint64_t cp_launch_take(void);

/*! cp_launch_total() : kernel launches the calling thread made so far (for
 *  ALLOC records: the work done between two allocations). */
uint64_t cp_launch_total(void);

/*! cp_launch_after_fork() : in a forked child: forget the other threads'
 *  counters (they do not exist here) and the parent's pending counts, and
 *  re-initialise the lock another thread may have held at the fork. */
void cp_launch_after_fork(void);

/*! cp_launch_name_set() / cp_launch_name() : kernel names by CUfunction or
 *  CUkernel handle, learned when the program looks them up. */
void cp_launch_name_set(const void *handle, const char *name);
const char *cp_launch_name(const void *handle);

/*! cp_stack_capture_for_finding() : the call site of a finding (native and
 *  Python frames). */
uint64_t cp_stack_capture_for_finding(void);

#endif /* CP_LAUNCH_H */
