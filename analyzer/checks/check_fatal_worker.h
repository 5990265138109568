/*
 * check_fatal_worker.h - an exception raised in a worker process and
 * re-raised in its parent: PyTorch's DataLoader catches a worker's
 * exception, sends it to the parent as text (ExceptionWrapper) and raises
 * "Caught <Type> in DataLoader worker process <n>.\nOriginal Traceback
 * (most recent call last):\n  File ..." there.  The worker's own line and
 * error are in that text; the cause, when the worker was forked after the
 * parent initialised CUDA, is in the parent's trace.  For check_fatal.c.
 */
#ifndef CHECK_FATAL_WORKER_H
#define CHECK_FATAL_WORKER_H

#include "cp_findings.h"
#include "check_fatal_exc.h"

typedef struct cp_worker {
    char what[96];          /* "DataLoader worker process 0" */
    char type[128];         /* the worker's exception type */
    char msg[600];          /* its message, first line */
    char cause[736];        /* "type: msg" of the first exception of a chain, "" */
    cp_exc_frame user;          /* the innermost frame of the program's own code */
    cp_exc_frame raise_at;      /* the innermost frame: where it was raised */
    int n_frames;
    int fork_cuda;          /* the error is CUDA refusing a forked child */
} cp_worker;

/*! cp_worker_parse() : the worker's exception out of the re-raised message msg.
 *  @return : 0, or -1 when msg carries no worker traceback. */
int cp_worker_parse(const char *msg, cp_worker *w);

/*! cp_worker_explain() : the worker's exception, and the cause and fix when CUDA
 *  refused the forked worker (where this process initialised CUDA, how
 *  many processes it forked after that), as lines and details of finding
 *  f, whose "Your line" is the worker's. */
void cp_worker_explain(cp_proc *p, const cp_worker *w, cp_finding *f);

#endif /* CHECK_FATAL_WORKER_H */
