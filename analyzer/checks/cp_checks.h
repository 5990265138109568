/*
 * cp_checks.h - every check of `cuprobe-analyze report` (one file each,
 * check_*.c) and what they share.
 */
#ifndef REPORT_CHECKS_H
#define REPORT_CHECKS_H

#include "cp_cuda.h"
#include "cp_findings.h"

extern const cp_check cp_check_nogpu;          /* no-gpu-used */
extern const cp_check cp_check_killed;         /* killed */
extern const cp_check cp_check_errors;         /* cuda-errors */
extern const cp_check cp_check_oom;            /* oom */
extern const cp_check cp_check_xdev;           /* cross-device-access */
extern const cp_check cp_check_stray;          /* stray-device */
extern const cp_check cp_check_rank;           /* rank-placement */
extern const cp_check cp_check_fork;           /* fork-after-init */
extern const cp_check cp_check_pageable;       /* pageable-async-copy */
extern const cp_check cp_check_leak;           /* leak */
extern const cp_check cp_check_growth;         /* memory-growth */
extern const cp_check cp_check_frag;           /* fragmentation */
extern const cp_check cp_check_blocking;       /* blocking-copy */
extern const cp_check cp_check_fatal;          /* fatal-error */

#endif /* REPORT_CHECKS_H */
