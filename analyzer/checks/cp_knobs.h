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

/*! cp_knob_fixed() : the settings the analyzer suggests verbatim, outside
 *  the advice table's text (which cp_knob_scan() reads).  @return : n
 *  strings "VAR=VALUE". */
const char *const *cp_knob_fixed(size_t *n);

/*! cp_knob_scan() : the next "VAR=VALUE" of a known VAR in text from *pos,
 *  copied into out (cap bytes), *pos moved past it.  @return : 1 found,
 *  0 none left. */
int cp_knob_scan(const char *text, size_t *pos, char *out, size_t cap);

#endif /* CP_KNOBS_H */
