/*
 * check_errors_version.h - a driver older than the CUDA runtime (or the
 * CUDA Python bindings) of the process, judged by what happened, not by
 * what was asked: runtimes and bindings look up every driver function at
 * the newest version they know, and a lookup that nothing then needed
 * costs nothing.  It is an error only when something failed because of
 * it.  For check_errors.c.
 */
#ifndef CHECK_ERRORS_VERSION_H
#define CHECK_ERRORS_VERSION_H

#include <stdint.h>

#include "cp_checks.h"

#define EV_SYMS 16

typedef struct ev_state {
    uint64_t refused;           /* lookups refused for a version above the driver's */
    uint64_t missing;           /* lookups, above the driver's version, of a function it lacks */
    uint64_t asked_max;         /* the highest version such a lookup asked for */
    const char *syms[EV_SYMS];  /* their functions, distinct, first ones (interned) */
    int n_syms;
    /* what failed because of it */
    uint64_t old_code;          /* a call failed with a "newer driver needed" code */
    const char *old_api;
    const char *used;           /* a refused function that was called and failed */
    const char *exc;            /* a refused function named by the exception the run died of */
    uint64_t exc_code;          /* a "newer driver needed" code that exception names */
} ev_state;

/*! ev_resolve() : a RESOLVE record (a failed lookup, or a new highest
 *  version asked for). */
void ev_resolve(cp_proc *p, ev_state *s, const cp_record *r);

/*! ev_failure() : a call of api (NULL: unknown) failed with code. */
void ev_failure(ev_state *s, const char *api, uint64_t code);

/*! ev_exception() : an "exception" record of the companion is current
 *  (p->fw_ready_json): does its text name a function the driver refused,
 *  or a CUresult that asks for a newer driver? */
void ev_exception(cp_proc *p, ev_state *s);

/*! ev_finish() : when the driver is older than what the process asked for,
 *  a finding of check c: an error naming what failed because of it, else
 *  info. */
void ev_finish(cp_proc *p, ev_state *s, cp_report *rep, const cp_check *c);

#endif /* CHECK_ERRORS_VERSION_H */
