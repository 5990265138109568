/*
 * cp_tid.h - the calling thread's kernel id (what gettid() returns),
 * without a system call where glibc says where it keeps it.
 *
 * A thread's THREAD record names its kernel id, and a system call is the
 * costliest part of a short-lived thread's first event in a guest whose
 * system calls trap to the host.  glibc stores the id in the thread's
 * descriptor (its own mutexes read it from there) and publishes the
 * field's offset for libthread_db in _thread_db_pthread_tid; that offset
 * is checked once against gettid() and, if anything disagrees or is
 * missing, the system call is used instead.
 */
#ifndef CP_TID_H
#define CP_TID_H

#include <sys/types.h>

/*! cp_tid() : the calling thread's kernel id.  Async-signal-safe once
 *  cp_tid_init() ran; never fails. */
pid_t cp_tid(void);

/*! cp_tid_init() : look the offset up and check it on the calling thread
 *  (idempotent; cp_tid() calls it when it has not run).  Not from a signal
 *  handler: it calls dlvsym.
 *  @return : 1 when cp_tid() reads the descriptor, 0 when it asks the
 *  kernel. */
int cp_tid_init(void);

#endif /* CP_TID_H */
