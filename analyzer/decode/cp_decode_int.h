/*
 * cp_decode_int.h - internals shared by cp_decode.c (stream, framing,
 * tables) and cp_decode_fields.c (per-type field parsing).
 */
#ifndef CP_DECODE_INT_H
#define CP_DECODE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cp_decode.h"

/* Reusable arrays for the variable-length parts of a record (argv, env,
 * stack frames, OOM process lists): grown, never shrunk, so steady-state
 * decoding allocates nothing. */
struct cp_scratch {
    cp_str *strs;
    size_t strs_cap;
    uint64_t *u64;
    size_t u64_cap;
    cp_oom_proc *procs;
    size_t procs_cap;
};

/*! cp__dec_fields() : parse r->payload (r->type known) into r->ev / r->u.
 *  Fields beyond the ones this version knows are ignored.
 *  @return : 0, or -1 with *why naming the field that does not fit (a
 *  static string), or -2 when out of memory. */
int cp__dec_fields(struct cp_scratch *s, cp_record *r, const char **why);

/*! cp__dec_scratch_free() : release the scratch arrays. */
void cp__dec_scratch_free(struct cp_scratch *s);

#endif /* CP_DECODE_INT_H */
