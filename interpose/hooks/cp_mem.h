/*
 * cp_mem.h - shared by the memory hooks (cp_hooks_mem.c, cp_hooks_vmm.c).
 */
#ifndef CP_MEM_H
#define CP_MEM_H

#include "cp_imap.h"
#include "cp_wrap.h"

/* cp_range.dev placeholder: "the device of the calling context". */
#define CP_DEV_FROM_CTX (-2)

/*! cp_mem_alloc_ev() : record an allocation (CP_REC_ALLOC; size is r->aux for
 *  the handle map) and, when it succeeded and which >= 0, enter r in that
 *  map.  An OOM result adds pool attributes (stream-ordered kinds) and the
 *  OOM snapshot. */
void cp_mem_alloc_ev(const cp_call *c, CUstream s, const cp_range *r, uint64_t flags,
                     CUmemoryPool pool, int which);

/*! cp_mem_free_ev() : record a free of ptr (a handle for CP_IMAP_HANDLE) and,
 *  when it succeeded, drop it from the map; kind is used when the map did
 *  not know ptr. */
void cp_mem_free_ev(const cp_call *c, CUstream s, int which, uint64_t ptr, int kind);

#endif /* CP_MEM_H */
