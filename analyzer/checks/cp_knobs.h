/*
 * cp_knobs.h - the rules of the framework settings advice may suggest
 * (PYTORCH_CUDA_ALLOC_CONF as c10/cuda/CUDAAllocatorConfig.cpp parses it,
 * JAX's XLA_PYTHON_CLIENT_* variables), in one table (cp_knobs.c), so no
 * advice names a value the framework would refuse at start-up.
 */
#ifndef CP_KNOBS_H
#define CP_KNOBS_H

#include <stddef.h>
#include <stdint.h>

/* The smallest max_split_size_mb every PyTorch release accepts: the
 * allocator packs large blocks in 20 MiB and older releases require more
 * than that (newer ones take 20 itself). */
#define CP_KNOB_MAX_SPLIT_MIN_MB 21

/* XLA's settings the out-of-memory advice names verbatim (and the table of
 * suggested settings lists, so that the unit test holds them to the rules). */
#define CP_KNOB_XLA_NO_PREALLOC "XLA_PYTHON_CLIENT_PREALLOCATE=false"
#define CP_KNOB_XLA_PREALLOC "XLA_PYTHON_CLIENT_PREALLOCATE=true"
#define CP_KNOB_XLA_PLATFORM "XLA_PYTHON_CLIENT_ALLOCATOR=platform"
/* The largest memory fraction suggested: XLA's pool beside the context, the
 * libraries' workspaces and the driver's own memory on the card. */
#define CP_KNOB_XLA_FRACTION_MAX 95

/*! cp_knob_check() : setting "VAR=VALUE" checked against the rules of the
 *  framework that reads VAR (each key:value of PYTORCH_CUDA_ALLOC_CONF, and
 *  the combinations it rejects or ignores).  why (cap bytes) gets the rule
 *  broken.  @return : 0 valid, -EINVAL not, -ENOENT VAR has no rules. */
int cp_knob_check(const char *setting, char *why, size_t cap);

/*! cp_knob_max_split_mb() : the max_split_size_mb that keeps cached blocks
 *  of about request bytes whole (half the request, in MiB).  @return : the
 *  value, or 0 when no value PyTorch accepts can help a request that small
 *  (the caller then gives other advice). */
uint64_t cp_knob_max_split_mb(uint64_t request);

/*! cp_knob_xla_fraction() : the XLA memory fraction to suggest for a pool
 *  that must hold need bytes on a card of total bytes: a multiple of .05
 *  at least 2 points above need/total, in hundredths.  @return : it, or 0
 *  when even CP_KNOB_XLA_FRACTION_MAX would not hold need (or total is 0). */
unsigned cp_knob_xla_fraction(uint64_t need, uint64_t total);

/*! cp_knob_fixed() : the settings the analyzer suggests verbatim, outside
 *  the advice table's text (which cp_knob_scan() reads).  @return : n
 *  strings "VAR=VALUE". */
const char *const *cp_knob_fixed(size_t *n);

/*! cp_knob_scan() : the next "VAR=VALUE" of a known VAR in text from *pos,
 *  copied into out (cap bytes), *pos moved past it.  @return : 1 found,
 *  0 none left. */
int cp_knob_scan(const char *text, size_t *pos, char *out, size_t cap);

#endif /* CP_KNOBS_H */
