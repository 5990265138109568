/*
 * check_fatal_sync.h - a run that died of a synchronous CUDA error of the
 * device class (cp_curesult.h: an ordinal that is not visible, no device,
 * a device busy or lost): the call that returned it is the culprit, and
 * what explains it is which GPUs the process sees.  For check_fatal.c.
 */
#ifndef CHECK_FATAL_SYNC_H
#define CHECK_FATAL_SYNC_H

#include <stdint.h>

#include "cp_findings.h"
#include "check_fatal_exc.h"

/* The last driver call that failed with a synchronous device-class code. */
typedef struct cp_sync_state {
    int have;
    uint64_t code, stack, ts;
    const char *api;        /* interned */
    int64_t dev;            /* the device ordinal it asked for (a CTX record's), -1 */
} cp_sync_state;

/* The record types cp_sync_rec() reads (failures come as CALL, or as the
 * record of their own kind with a non-zero result). */
#define FS_TYPES (CP_TYPE_BIT(CP_REC_CALL) | CP_TYPE_BIT(CP_REC_CTX))

/*! cp_sync_rec() : keep in *s the last call of r's kind that returned a
 *  synchronous device-class CUresult; other records are ignored. */
void cp_sync_rec(cp_proc *p, cp_sync_state *s, const cp_record *r);

/*! cp_sync_device_asked() : the device index a source line asks for
 *  (set_device(3), "cuda:3", device=3, .cuda(3), torch.device("cuda", 3)).
 *  @return : the index, or -1 when the line names none. */
int cp_sync_device_asked(const char *src);

/*! cp_sync_explain() : the error of exception e (its code, the call that
 *  returned it), the devices this process sees (CUDA_VISIBLE_DEVICES, each
 *  visible ordinal's physical index, name, UUID and PCI address), the
 *  device the source line src (NULL: unknown) or else the failing call
 *  asked for, and the fix, as lines and details of finding f.  e is NULL
 *  for a process that died without an exception (a native program's exit
 *  or abort): the error is then the failing call's.  No advice for
 *  asynchronous errors: the failing call is the one at the user's line. */
void cp_sync_explain(cp_proc *p, const cp_sync_state *s, const cp_exc *e, const char *src, cp_finding *f);

#endif /* CHECK_FATAL_SYNC_H */
