/*
 * cp_checks.h - the check registry (cp_checks.c): every check of
 * `cuprobe-analyze report` (one file each, check_*.c, listed once in the
 * registry), and their state while a trace is read.
 */
#ifndef CP_CHECKS_H
#define CP_CHECKS_H

#include "cp_cuda.h"
#include "cp_findings.h"

/* The checks running on one trace; the registry owns their state. */
typedef struct cp_check_run cp_check_run;

/*! cp_checks() : the table of every check, in report order; *n its size. */
const cp_check *const *cp_checks(size_t *n);

/*! cp_check_find() : the check with this id, or NULL. */
const cp_check *cp_check_find(const char *id);

/*! cp_checks_start() : start, on process p, the checks with selected[i] set
 *  (i indexes cp_checks()); a check whose state cannot be set up is left out.
 *  @return : the run, or NULL when out of memory. */
cp_check_run *cp_checks_start(cp_proc *p, const unsigned char *selected);

/* Hands record r to the running checks that read its type. */
typedef void (*cp_checks_fn)(cp_check_run *run, cp_proc *p, const cp_record *r);

/*! cp_checks_fns() : per record type (0..255: a byte of the trace), the
 *  function that hands a record of that type to the running checks that
 *  must see it before the model (after_model 0), or after, or NULL when
 *  none does (most records have no check before the model, and a call per
 *  record costs more than the test): fns[r->type](run, p, r).
 *  @return : the table of 256, valid while run is. */
const cp_checks_fn *cp_checks_fns(const cp_check_run *run, int after_model);

/*! cp_checks_finish() : every running check turns what it saw into findings
 *  of rep; then their state is freed, and the run (NULL is fine). */
void cp_checks_finish(cp_check_run *run, cp_proc *p, cp_report *rep);

/*! cp_checks_discard() : end run's checks without a finding: the trace
 *  held no process to judge (nothing decoded).  Frees run (NULL is fine). */
void cp_checks_discard(cp_check_run *run);

/*! cp_check_<name>_rec() : check <name>'s `rec` (cp_findings.h), for the
 *  checks whose `rec` is a test or two that the common records do not get
 *  past, then a call to the rest: the registry's dispatch calls these by
 *  name, and the analyzer's LTO build inlines them there (through `rec`
 *  they are not inlined: a call and a frame for every record and check).
 *  The rest of memory-growth, blocking-copy, fragmentation and
 *  cross-device-access is inline too: the dispatch's function for each
 *  common record type keeps only that type's part, in the one frame it
 *  has for all its checks. */
void cp_check_errors_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_xdev_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_pageable_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_growth_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_blocking_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_oom_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_fatal_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_frag_rec(cp_proc *p, void *st, const cp_record *r);
void cp_check_leak_rec(cp_proc *p, void *st, const cp_record *r);

/* Checks whose findings another check looks up (check_fatal.c joins the
 * run's fatal error to them, memory-growth folds into a leak); every other
 * check is reached only through the registry. */
extern const cp_check cp_check_nogpu, cp_check_errors, cp_check_oom, cp_check_leak;

/* The tag (cp_finding.tag) of a leak finding about memory the program lost
 * (at exit, or when its context was destroyed), as opposed to memory an
 * allocator, a library or a framework held: memory-growth folds growth
 * that such a leak explains into it (check_growth.c). */
#define CP_LEAK_TAG_LOST 1

#endif /* CP_CHECKS_H */
