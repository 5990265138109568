/*
 * cp_stack.h - call sites: native stacks (libunwind, raw IPs + module map,
 * symbolized offline) and Python frames of the calling thread, interned so
 * that a hot site costs a few bytes per event.
 */
#ifndef CP_STACK_H
#define CP_STACK_H

#include <stdint.h>

/*! cp_stack_capture() : take the calling thread's call site, intern it and
 *  return its stack id for the EV prefix (0 = none: stacks disabled by
 *  CUPROBE_STACK_DEPTH=0, or nothing could be taken).  New modules, strings,
 *  Python frames and the stack itself are recorded (CP_REC_MODULE,
 *  CP_REC_STRING, CP_REC_PYFRAME, CP_REC_STACK) before it returns, so they
 *  precede the event that uses the id.  `skip` native frames above the
 *  caller are dropped (cuprobe's own).  Python frames are added when
 *  `with_python` and CUPROBE_PYTHON is not 0.  Must not be called between
 *  cp_rec_begin() and cp_rec_commit().  Thread-safe, no CUDA calls. */
uint64_t cp_stack_capture(int skip, int with_python);

/*! cp_stack_intern() : a stack id for a call site taken earlier: native
 *  code addresses (innermost first, already minus one) and Python frame ids
 *  (from cp_pystack_intern_raw).  Records what it needs as
 *  cp_stack_capture() does; same rules.  @return : the id, or 0. */
uint64_t cp_stack_intern(const uint64_t *ips, int n_native, const uint64_t *py, int n_py);

#endif /* CP_STACK_H */
