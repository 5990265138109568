/*
 * check_leak_owner.h - who holds an allocation still live at exit, judged
 * from the allocation itself: its call site's modules and Python packages,
 * then the companion's record of PyTorch's own segments; never from which
 * frameworks the process merely loaded (a numba array in a process that
 * also imported PyTorch is numba's).  For check_leak.c.
 */
#ifndef CHECK_LEAK_OWNER_H
#define CHECK_LEAK_OWNER_H

#include <stddef.h>
#include <stdint.h>

#include "cp_checks.h"

/* What a live allocation is at exit. */
enum { CL_LEAK = 0, CL_ALLOC, CL_LIB, CL_OTHER, CL_N };

/* PyTorch's segments as its allocator listed them at exit (torch.exit). */
typedef struct lo_seg {
    uint64_t addr, size;
} lo_seg;

typedef struct lo_state {
    lo_seg *seg;
    size_t n, cap;
    int listed;             /* a torch.exit record listed every segment of a
                             * native-backend allocator: a device pointer
                             * outside them is not PyTorch's */
} lo_state;

/* The record types lo_rec() reads. */
#define LO_TYPES CP_TYPE_BIT(CP_REC_FRAMEWORK)

/*! lo_rec() : keep the segments of the companion's torch.exit record. */
void lo_rec(cp_proc *p, lo_state *s, const cp_record *r);

/*! lo_by_stack() : what the call site of stack id says: enum CL_* with
 *  *who the allocator's, library's or framework's name (NULL for the
 *  program's own leak), or -1 when the site does not decide (no frame of
 *  a known library, package or of the program).  Depends on the stack
 *  only: cacheable by stack. */
int lo_by_stack(cp_proc *p, uint64_t stack, const char **who);

/*! lo_alloc_fw() : the framework (enum cp_fw bits, cp_libs.h) whose caching
 *  allocator made the allocation of stack id, by lo_by_stack()'s evidence;
 *  0 when it was not a caching allocator's. */
unsigned lo_alloc_fw(cp_proc *p, uint64_t stack);

/*! lo_by_pointer() : for an allocation its site did not decide: the
 *  companion's record of PyTorch's segments, else (a process with one
 *  caching allocator and no other framework that allocates from Python)
 *  the allocator's segment sizes.  @return : enum CL_* with *who. */
int lo_by_pointer(cp_proc *p, const lo_state *s, uint64_t ptr, const cp_live *l,
                  const char **who);

/*! lo_free() : free s's segment list. */
void lo_free(lo_state *s);

#endif /* CHECK_LEAK_OWNER_H */
