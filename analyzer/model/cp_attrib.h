/*
 * cp_attrib.h - the lines that allocated the memory a framework's pool
 * still holds: the companion's torch.attrib and cupy.attrib records
 * (docs/framework.md), read into samples of live bytes per site.
 *
 * A caching allocator takes memory from the driver where its cache runs
 * dry, so the driver-level call site of a growing pool is the line that
 * refilled it, not the line that keeps the memory.  With attribution on
 * (`cuprobe run --attribute`) the companion counts every live pool
 * allocation under the first frame of the program's own code that made it
 * and writes the totals per site.  Each site's stack (that frame and its
 * callers) becomes a Python-only stack of the process's own, with ids the
 * shim never hands out, so labels, summaries and every check see an
 * ordinary Python call site.  The allocator backend PyTorch reports is
 * kept too: under cudaMallocAsync there is no pool to attribute.
 */
#ifndef CP_ATTRIB_H
#define CP_ATTRIB_H

#include <stdint.h>

#include "cp_model.h"

/* The frameworks whose pools are attributed. */
enum cp_attr_fw { CP_ATTR_TORCH = 0, CP_ATTR_CUPY = 1, CP_ATTR_FW_N };

/* Attribution of a framework in a process: never heard of (no record),
 * on, or turned off (why: cp_attrib_state()). */
enum cp_attr_state { CP_ATTR_NONE = 0, CP_ATTR_ON = 1, CP_ATTR_OFF = 2 };

/* A site's live pool memory in one sample. */
typedef struct cp_attrib_row {
    uint64_t stack;             /* the site's stack id in p->stacks */
    uint64_t bytes, blocks;
} cp_attrib_row;

/* One sample of a framework's live pool allocations, by site.  Sites not
 * listed hold nothing, or are among the smallest beyond the record's cap
 * (other_bytes). */
typedef struct cp_attrib_sample {
    int fw;                     /* enum cp_attr_fw */
    int at_exit;                /* taken by the companion's exit handler */
    uint64_t ts;                /* trace clock */
    cp_attrib_row *rows;
    size_t n;
    uint64_t live_bytes, unattributed_bytes, other_bytes;
} cp_attrib_sample;

/*! cp_attrib_framework() : a complete framework record is current
 *  (p->fw_ready_*, after the model applied record r): read a torch.attrib
 *  or cupy.attrib record, announcing its sites' stacks.  Until the next
 *  call, cp_attrib_current() is its sample when it was one.
 *  @return : 0 or -ENOMEM. */
int cp_attrib_framework(cp_proc *p, const cp_record *r);

/*! cp_attrib_current() : the sample of the framework record being read,
 *  or NULL when it is none. */
const cp_attrib_sample *cp_attrib_current(const cp_proc *p);

/*! cp_attrib_last() : framework fw's last sample (its exit's, once read),
 *  or NULL when none came. */
const cp_attrib_sample *cp_attrib_last(const cp_proc *p, int fw);

/*! cp_attrib_state() : enum cp_attr_state of framework fw in p; for
 *  CP_ATTR_OFF, *why says why in words (may be NULL). */
int cp_attrib_state(const cp_proc *p, int fw, const char **why);

/*! cp_attrib_torch_async() : 1 when the companion saw PyTorch's allocator
 *  run on backend:cudaMallocAsync (companion.info, torch.exit), where every
 *  tensor is a driver allocation with its own call site and no history can
 *  be recorded; else 0. */
int cp_attrib_torch_async(const cp_proc *p);

/*! cp_attrib_free() : free p's attribution state (NULL is fine). */
void cp_attrib_free(cp_proc *p);

#endif /* CP_ATTRIB_H */
