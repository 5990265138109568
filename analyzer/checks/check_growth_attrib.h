/*
 * check_growth_attrib.h - memory-growth's sites from a framework's own record
 * of its live allocations (cp_attrib.h): the lines whose live bytes grew
 * from the growth's start to the window's end, which under a caching
 * allocator are the lines that keep the memory; the driver saw the pool
 * refilled elsewhere.  check_growth.c feeds it the samples and asks for the
 * sites at the end.
 */
#ifndef CHECK_GROWTH_ATTRIB_H
#define CHECK_GROWTH_ATTRIB_H

#include <stdint.h>

#include "cp_attrib.h"
#include "cp_findings.h"

/* Samples kept per framework: when full, every other one is dropped (the
 * last one stays), so they stay spread over the run as buckets are. */
#define CP_GATTR_SAMPLES 64

typedef struct cp_gattr_sample {
    int64_t w;                  /* the work clock (launches since the first allocation)
                                 * when taken, -1 before the first allocation */
    uint64_t ts;
    uint64_t held;              /* device memory the process held when taken */
    cp_attrib_row *rows;        /* owned */
    size_t n;
    uint64_t unattributed_bytes;
} cp_gattr_sample;

typedef struct cp_gattr {
    cp_gattr_sample s[CP_ATTR_FW_N][CP_GATTR_SAMPLES];
    size_t n[CP_ATTR_FW_N];
} cp_gattr;

/* What cp_gattr_sites() found. */
typedef struct cp_gattr_out {
    int sites;                  /* sites added to the finding */
    unsigned fw;                /* enum cp_attr_fw bits of the frameworks that gave them */
    unsigned spanned;           /* ... of those with a start and an end sample */
    uint64_t bytes;             /* their bytes */
    uint64_t keeps;             /* ... of sites that still rose in the growth's
                                 * second half: memory kept, not a warm-up's */
    uint64_t ts_from, ts_to;    /* the first and last sample used */
    uint64_t unattributed;      /* growth of memory with no frame of the program's own */
} cp_gattr_out;

/*! cp_gattr_add() : keep sample a, taken at work clock w (-1: before the
 *  first allocation) while the process held `held` bytes of device memory.
 *  *g is allocated on first use.  @return : 0 or -ENOMEM. */
int cp_gattr_add(cp_gattr **g, const cp_attrib_sample *a, int64_t w, uint64_t held);

/*! cp_gattr_sites() : add to f, as sites of p, the lines whose live bytes
 *  grew from the growth's start to its end, per framework: from the last
 *  sample taken by the end of work bucket sb (else the first one after it)
 *  to the more a line held of two ends: the last sample taken by the end
 *  of bucket eb or while the process still held nearly held_end (the
 *  growth's last level: the teardown had freed little yet), or the last
 *  of all when the window runs to the end (held_end 0, no teardown: the
 *  exit's, with no step's temporaries live); and the last one taken by
 *  t_grown, the growth's last memory event (what the program
 *  freed after its growth but before it exited).  Buckets are 2^width_log
 *  launches wide.  Sites holding less than 1/64 of what all grew are left
 *  out.  A site whose live bytes in the last sample by the middle of the
 *  work (buckets sb..eb) lie strictly between its start and its end still
 *  rose in the growth's second half: its bytes count in keeps.
 *  @return : what was added, in *out (sites 0: nothing to say). */
void cp_gattr_sites(const cp_gattr *g, cp_finding *f, cp_proc *p, uint32_t sb, uint32_t eb,
                    unsigned width_log, uint64_t held_end, uint64_t t_grown,
                    cp_gattr_out *out);

/*! cp_gattr_remap() : the work buckets moved (cp_gwin_respread()): a
 *  sample taken in old bucket j < n (2^width_log launches wide) is now in
 *  bucket map[j].  NULL is fine. */
void cp_gattr_remap(cp_gattr *g, const uint32_t *map, uint32_t n, unsigned width_log);

/*! cp_gattr_free() : free g and its samples (NULL is fine). */
void cp_gattr_free(cp_gattr *g);

#endif /* CHECK_GROWTH_ATTRIB_H */
