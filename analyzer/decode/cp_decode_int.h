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

/* id -> owned NUL-terminated text, open addressing (cp_decode_note.c). */
struct cp_idmap {
    uint64_t *keys;
    char **vals;
    size_t cap, n;
};

/*! cp__idmap_get() : @return : the text of id, or NULL. */
const char *cp__idmap_get(const struct cp_idmap *m, uint64_t id);

/*! cp__idmap_free() : release every entry and the table. */
void cp__idmap_free(struct cp_idmap *m);

/*! cp__dec_note() : keep what later questions need from record r: header
 *  and end facts into *in, API and STRING names into the tables.
 *  @return : 0, or -ENOMEM. */
int cp__dec_note(struct cp_idmap *apis, struct cp_idmap *strings, cp_trace_info *in,
                 const cp_record *r);

/* ---- the decoder thread's hand-off (cp_decode_ring.c) -------------------- */

/* Arrays of HEADER, STACK and OOM records, copied out of the scratch so
 * they outlive the next record of the batch. */
struct cp_arena_blk {
    struct cp_arena_blk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
};

/* A run of decoded records and the decompressed bytes they point into. */
typedef struct cp_batch {
    uint8_t *buf;
    size_t cap;
    cp_record *recs;
    size_t n, recs_cap;
    struct cp_arena_blk *arena;
    int last;               /* the decoder thread stopped after this batch */
} cp_batch;

#define CP_RING_SLOTS 4

/* Batches go round: the decoder thread takes a free one, fills it and
 * hands it over full; the reader takes full ones in order and gives them
 * back. */
typedef struct cp_ring cp_ring;

/*! cp__ring_new() : a ring of CP_RING_SLOTS empty batches.
 *  @return : the ring, or NULL when out of memory. */
cp_ring *cp__ring_new(void);

/*! cp__ring_take_free() : (decoder thread) wait for a free batch.
 *  @return : it, emptied (n = 0, arena released, buf kept), or NULL once
 *  cp__ring_stop() was called. */
cp_batch *cp__ring_take_free(cp_ring *q);

/*! cp__ring_put_full() : (decoder thread) hand b over to the reader. */
void cp__ring_put_full(cp_ring *q, cp_batch *b);

/*! cp__ring_take_full() : (reader) wait for the next full batch. */
cp_batch *cp__ring_take_full(cp_ring *q);

/*! cp__ring_put_free() : (reader) give b back for reuse. */
void cp__ring_put_free(cp_ring *q, cp_batch *b);

/*! cp__ring_stop() : make every wait of the decoder thread return NULL. */
void cp__ring_stop(cp_ring *q);

/*! cp__ring_free() : release the ring and every batch (no thread may
 *  still use it). */
void cp__ring_free(cp_ring *q);

/*! cp__arena_copy() : a copy of n bytes at p in b's arena, 16-aligned.
 *  @return : the copy, or NULL when out of memory. */
void *cp__arena_copy(cp_batch *b, const void *p, size_t n);

/*! cp__batch_keep_arrays() : (decoder thread) move the arrays record r
 *  borrowed from the scratch (HEADER argv/env, STACK frames, OOM processes)
 *  into b, where they stay until the reader gives b back.
 *  @return : 0, or -1 when out of memory. */
int cp__batch_keep_arrays(cp_batch *b, cp_record *r);

#endif /* CP_DECODE_INT_H */
