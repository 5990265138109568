/*
 * cp_backward.h - call sites for memory allocated in PyTorch's backward
 * pass.  The autograd engine runs the backward pass on threads of its own
 * (one per device, named pt_autograd_N) that never run Python: what they
 * allocate has native frames only, and the report could name no line of
 * the program.  The framework companion writes a torch.backward record on
 * the thread that calls torch.autograd.backward (Tensor.backward goes
 * through it) when it starts and when it returns, with the innermost frame
 * of the program's own code (docs/framework.md).  An allocation with no
 * Python frame made on another thread in between is the backward pass's:
 * its stack gets that frame as its Python caller, so every finding names
 * the line that called backward().  Without the record, allocations on
 * autograd threads are still known as the backward pass's, in words.
 */
#ifndef CP_BACKWARD_H
#define CP_BACKWARD_H

#include <stdint.h>

#include "cp_model.h"

/*! cp_bw_thread() : a THREAD record: note PyTorch's autograd threads. */
void cp_bw_thread(cp_proc *p, const cp_record *r);

/*! cp_bw_framework() : a complete framework record is current
 *  (p->fw_ready_*): a torch.backward record begins or ends a backward
 *  pass.  @return : 0 or -ENOMEM. */
int cp_bw_framework(cp_proc *p, const cp_record *r);

/*! cp_bw_alloc() : an ALLOC record, while p->bw is set: give its stack the
 *  caller of the running backward pass when it has no Python frame of its
 *  own.  @return : 0 or -ENOMEM. */
int cp_bw_alloc(cp_proc *p, const cp_record *r);

/*! cp_bw_kind() : CP_BW_NAMED for a stack that allocated in a backward
 *  pass whose caller is known (its Python frame is that line),
 *  CP_BW_AUTOGRAD for one that allocated on an autograd thread with no
 *  caller known, 0 for any other stack. */
enum { CP_BW_NAMED = 1, CP_BW_AUTOGRAD = 2 };
int cp_bw_kind(const cp_proc *p, uint64_t stack);

/*! cp_bw_note() : for a stack that allocated in a backward pass, the words
 *  a site shows: "allocated in the backward pass of the model called at
 *  FILE:LINE", or that it ran on an autograd thread without the line that
 *  called backward().  @return : an interned string, or NULL for any other
 *  stack. */
const char *cp_bw_note(const cp_proc *p, uint64_t stack);

/*! cp_bw_free() : free p's backward-pass state (NULL is fine). */
void cp_bw_free(cp_proc *p);

#endif /* CP_BACKWARD_H */
