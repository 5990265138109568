/*
 * cp_decode_int.h - internals shared by the reader's files: cp_decode.c
 * (framing, the decoder thread), cp_decode_window.c (the decompressed
 * window: input, zstd frames, errors), cp_decode_fields.c (per-type field
 * parsing) and cp_decode_ring.c (batches).
 */
#ifndef CP_DECODE_INT_H
#define CP_DECODE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include "cp_decode.h"
#include "cp_decode_note.h"
#include "cp_varint.h"

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

/* Bytes readable after the end of the decompressed window (allocated
 * with it, zeroed): the fast parser reads each varint with one 8-byte load
 * and checks the record's bounds only after its last field, so a damaged
 * record may run past its end by at most CP_VARINT_MAX bytes a field before
 * the check sees it (cp_decode_fields.c asserts every record's fields fit). */
#define CP_DEC_SLACK 512

/*! cp__get_u_slack() : read a varint at p inside the window, which has
 *  CP_DEC_SLACK readable bytes after its end: no bound to check.
 *  One 8-byte load; one byte (most fields), two (times, small sizes) and up
 *  to eight (pointers) without a loop.
 *  @return : the byte after the varint (up to CP_VARINT_MAX bytes on), or
 *  NULL when it is longer than CP_VARINT_MAX bytes. */
static inline __attribute__((always_inline)) const uint8_t *
cp__get_u_slack(const uint8_t *p, uint64_t *v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    memcpy(&w, p, 8);
    if (__builtin_expect(!(w & 0x80), 1)) {
        *v = w & 0x7f;
        return p + 1;
    }
    if (!(w & 0x8000)) {
        *v = (w & 0x7f) | (w >> 1 & 0x3f80);
        return p + 2;
    }
    uint64_t stop = ~w & 0x8080808080808080ull;
    if (stop) {
        unsigned bits = (unsigned)__builtin_ctzll(stop) + 1;
        uint64_t x = w & 0x7f7f7f7f7f7f7f7full;
        if (bits < 64)
            x &= (1ull << bits) - 1;
        x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
        x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
        x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
        *v = x;
        return p + bits / 8;
    }
#endif
    return cp_get_u(&p, p + CP_VARINT_MAX, v) ? NULL : p;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define CP_DEC_HAVE_BMI2 1
/*! cp__get_u_slack_bmi2() : cp__get_u_slack() with BMI2 (call it only where
 *  cp__dec_bmi2_fast() said yes): a varint of two to eight bytes is one
 *  pext of its 7-bit groups, without a branch on its length.
 *  @return : as cp__get_u_slack(). */
static inline __attribute__((always_inline, target("bmi,bmi2"))) const uint8_t *
cp__get_u_slack_bmi2(const uint8_t *p, uint64_t *v)
{
    uint64_t w;
    memcpy(&w, p, 8);
    if (__builtin_expect(!(w & 0x80), 1)) {
        *v = w & 0x7f;
        return p + 1;
    }
    uint64_t stop = ~w & 0x8080808080808080ull;
    if (__builtin_expect(stop != 0, 1)) {
        unsigned bits = (unsigned)__builtin_ctzll(stop) + 1;
        *v = __builtin_ia32_pext_di(w, __builtin_ia32_bzhi_di(0x7f7f7f7f7f7f7f7full, bits));
        return p + bits / 8;
    }
    return cp_get_u(&p, p + CP_VARINT_MAX, v) ? NULL : p;
}

/*! cp__dec_bmi2_fast() : non-zero when this CPU has BMI2 and its pext is
 *  fast (not AMD families 15h and 17h, where it is microcoded). */
static inline int cp__dec_bmi2_fast(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("amdfam15h") &&
           !__builtin_cpu_is("amdfam17h");
}
#endif

/*! cp__dec_window() : (re)allocate a decompressed window of cap bytes
 *  (old: the window to grow, or NULL), with CP_DEC_SLACK zeroed bytes
 *  after it.  @return : the window, or NULL (old untouched). */
uint8_t *cp__dec_window(uint8_t *old, size_t cap);

/*! cp__dec_fields_fast() : cp__dec_fields(), faster: varints are read
 *  with cp__get_u_slack() (r->payload lies in a window with CP_DEC_SLACK
 *  bytes after it) and the record's bounds checked once at its end; a
 *  record that does not parse that way, or has array fields, goes through
 *  cp__dec_fields().  @return : as cp__dec_fields(). */
int cp__dec_fields_fast(struct cp_scratch *s, cp_record *r, const char **why);

/*! cp__dec_fields_direct() : (decoder thread) the EV fields (zeroed for a
 *  type without them) and the type's fields of a record, payload p..e (in
 *  a window with CP_DEC_SLACK bytes after it), written straight into r (a
 *  batch slot); r->type, ts, tid and the rest are the caller's.  Only
 *  where cp__dec_fields_direct_ok() says so (a fast pext).
 *  @return : 0, or -1: parse the record with cp__dec_fields_fast() instead
 *  (it may have left some of r written). */
int cp__dec_fields_direct(unsigned type, const uint8_t *p, const uint8_t *e, cp_record *r);

/*! cp__dec_lean_run() : (decoder thread, and the reader in a raw batch;
 *  only where cp__dec_fields_direct_ok() says so) from buf[*pos] on (a window of len
 *  bytes with CP_DEC_SLACK after it), the records whole in it with a
 *  one-byte length and a type direct[] allows, each framed, its time (from
 *  *ts on) and thread decoded and, unless raw, parsed into recs[n], recs[n
 *  + 1] ... as cp__dec_fields_direct() does, while n < cap.  Ends before
 *  any other record, or one that does not parse that way.
 *  @return : the records taken, *pos and *ts moved past them. */
size_t cp__dec_lean_run(const uint8_t *buf, size_t *pos, size_t len, cp_record *recs, size_t n,
                        size_t cap, uint64_t *ts, int raw, const uint8_t *direct);

/*! cp__dec_fields_direct_ok() : non-zero when cp__dec_fields_direct() can
 *  parse. */
int cp__dec_fields_direct_ok(void);

/*! cp__dec_fields() : parse r->payload (r->type known) into r->ev / r->u.
 *  Fields beyond the ones this version knows are ignored.
 *  @return : 0, or -1 with *why naming the field that does not fit (a
 *  static string), or -2 when out of memory. */
int cp__dec_fields(struct cp_scratch *s, cp_record *r, const char **why);

/*! cp__dec_scratch_free() : release the scratch arrays. */
void cp__dec_scratch_free(struct cp_scratch *s);

/* ---- the decoder thread's hand-off (cp_decode_ring.c) -------------------- */

/* Arrays of HEADER, STACK and OOM records, copied out of the scratch so
 * they outlive the next record of the batch. */
struct cp_arena_blk {
    struct cp_arena_blk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
};

/* A run of decoded records and the decompressed bytes they point into.
 * Each batch has cache lines of its own: the decoder thread bumps `n` of
 * the one it fills for every record while the reader reads `n` of the
 * one it empties, and sharing a line made each record a cache miss.
 *
 * A raw batch leaves its lean records to the reader (cp_decode_defer.c)
 * with nothing written for them: the batch's records lie whole and in
 * order in buf from byte 0 on, so the reader frames them again and
 * decodes their time (from ts0 on) and thread itself.  Only the records
 * the decoder thread parsed anyway (the first of the trace, the ones with
 * names or arrays, unknown types, the ones the fast parser refused) have
 * their slots written, and are listed in `slotted`.  (No stash of each lean
 * record's time, thread and bounds beside its slot: it would cost both
 * threads a cache line every few records.) */
#define CP_CACHE_LINE 64
typedef struct cp_batch {
    _Alignas(CP_CACHE_LINE) uint8_t *buf;
    size_t cap;
    cp_record *recs;
    size_t n, recs_cap;
    struct cp_arena_blk *arena;
    int last;               /* the decoder thread stopped after this batch */
    /* Its lean records' fields are left to the reader (cp_decode_defer.c):
     * set when the reader had caught up as the batch began. */
    int raw;
    uint64_t ts0;           /* raw: the time before buf's first record */
    uint64_t base;          /* raw: the stream offset of buf[0] */
    size_t *slotted;        /* raw: the records with written slots, in order */
    size_t n_slotted, slotted_cap;
    /* Indices of the records with names or facts to note (cp__dec_noted()),
     * in order: the reader's runs end there without reading every
     * record's type ahead of handling it. */
    size_t *noted;
    size_t n_noted, noted_cap;
} cp_batch;

#define CP_RING_SLOTS 4

/* Batches circulate: the decoder thread takes a free one, fills it and
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

/*! cp__ring_put_full() : (decoder thread) hand b over to the reader.
 *  @return : the full batches now waiting for the reader, b included (1:
 *  the reader has caught up with the decoder thread). */
size_t cp__ring_put_full(cp_ring *q, cp_batch *b);

/*! cp__ring_take_full() : (reader) wait for the next full batch. */
cp_batch *cp__ring_take_full(cp_ring *q);

/*! cp__ring_put_free() : (reader) give b back for reuse. */
void cp__ring_put_free(cp_ring *q, cp_batch *b);

/*! cp__ring_spin_waits() : cp_dec_spin_waits(), for the ring's waits. */
void cp__ring_spin_waits(int on);

/*! cp__ring_stop() : make every wait of the decoder thread return NULL. */
void cp__ring_stop(cp_ring *q);

/*! cp__ring_free() : release the ring and every batch (no thread may
 *  still use it). */
void cp__ring_free(cp_ring *q);

/*! cp__arena_copy() : a copy of n bytes at p in b's arena, 16-aligned.
 *  @return : the copy, or NULL when out of memory. */
void *cp__arena_copy(cp_batch *b, const void *p, size_t n);

/*! cp__batch_has_arrays() : non-zero for the record types whose arrays
 *  cp__batch_keep_arrays() moves. */
static inline int cp__batch_has_arrays(unsigned type)
{
    return type == CP_REC_HEADER || type == CP_REC_STACK || type == CP_REC_OOM;
}

/*! cp__batch_keep_arrays() : (decoder thread) move the arrays record r
 *  borrowed from the scratch (HEADER argv/env, STACK frames, OOM processes)
 *  into b, where they stay until the reader gives b back.
 *  @return : 0, or -1 when out of memory. */
int cp__batch_keep_arrays(cp_batch *b, cp_record *r);

/* ---- the reader's state (cp_decode.c, cp_decode_window.c) ---------------- */

/* The decompressed stream is read through a window `buf`: records are
 * parsed in place and the window is refilled (the unread tail moved to the
 * front) when the next record is not complete in it.  A record larger than
 * the window grows it, up to CP_DEC_MAX_RECORD. */
#define CP_DEC_WINDOW (1u << 20)
#define CP_DEC_MAX_RECORD (64u << 20)
/* Decoder thread: a batch's window (about 5,000 records), and the file
 * size from which the thread pays for itself. */
#define CP_DEC_BATCH_WINDOW (128u << 10)
#define CP_DEC_THREAD_MIN (1u << 20)
/* Records of a raw batch the reader parses per call: handed out next,
 * while still in its cache. */
#define CP_DEC_RUN 64

enum { CP_DS_OK = 0, CP_DS_END = 1, CP_DS_ERR = 2 };

struct cp_dec {
    char *path;
    int fd;                     /* -1 for a memory buffer */
    const uint8_t *mem;
    size_t mem_len;
    ZSTD_DCtx *dctx;
    uint8_t *in;                /* compressed input (fd mode) */
    size_t in_cap, in_len, in_pos;
    uint64_t in_file_off;       /* file offset of in[0] */
    int in_eof;
    /* The zstd frame being decoded: its first bytes (magic and frame
     * header descriptor, to see the checksum flag) and where it started. */
    uint8_t fh[5];
    unsigned fh_n;
    uint64_t frame_off;
    int mid_frame;              /* zstd still expects bytes of this frame */
    uint8_t *buf;               /* decompressed window */
    size_t cap, pos, len;
    uint64_t base;              /* stream offset of buf[0] */
    uint64_t prev_ts, nrec;
    int state, truncated, rc;
    cp_batch *fill;             /* decoder thread: the batch being filled */
    char err[512];
    struct cp_scratch scratch;
    cp_record one;              /* the record handed out, without a thread */
    /* The reader's side: names and facts of records handed out.  On cache
     * lines of their own: the reader writes cur_i and delivered for every
     * record, and the decoder thread reads fill and writes pos for every
     * record; on one line they made each record a cache miss on both. */
    _Alignas(CP_CACHE_LINE) cp_dec_names names;
    uint64_t delivered;
    /* Decoder thread, when there is one.  The fields above `names` belong
     * to it until it handed over its last batch. */
    cp_ring *ring;
    pthread_t thread;
    int threaded, joined, stopped;
    int lean;                   /* cp_dec_lean_records() when the thread started */
    int defer;                  /* CP_DEFER_*: who parses the lean records' fields */
    const uint8_t *direct;      /* the types of lean records parsed straight into a slot */
    int buf_in_ring;            /* buf went to the first batch */
    cp_batch *cur;              /* reader: the batch being handed out */
    size_t cur_i;
    size_t cur_noted;           /* cur->noted[] entries before cur_i (or about to be) */
    size_t cur_parsed;          /* cur's records before it have their fields */
    /* A raw cur: records run_base .. cur_parsed - 1 are in run[]; the
     * next one to parse starts at cur->buf[raw_off], after the time raw_ts;
     * cur->slotted[] entries before cur_slotted are behind it. */
    size_t run_base, raw_off, cur_slotted;
    uint64_t raw_ts;
    struct cp_scratch rscratch; /* the reader's, for a raw batch's records */
    /* Decoder thread, once per refill; the reader reads it for progress. */
    _Alignas(CP_CACHE_LINE) uint64_t progress;  /* file offset decoded (atomic) */
    /* A raw batch's records are parsed into this run, a few kilobytes that
     * stay in the reader's cache, not into the batch's slots (hundreds of
     * kilobytes a batch, which the reader then wrote through to a cache
     * further away, and read back). */
    _Alignas(CP_CACHE_LINE) cp_record run[CP_DEC_RUN];
};

/*! cp__dec_cur_rec() : (reader) record i of d->cur: in run[] for a raw
 *  batch (i from run_base to cur_parsed - 1), in its slot otherwise. */
static inline const cp_record *cp__dec_cur_rec(const cp_dec *d, size_t i)
{
    return d->cur->raw ? &d->run[i - d->run_base] : &d->cur->recs[i];
}

/* The lean records' fields: parsed by the decoder thread (NONE), by the
 * reader in the batches begun while it was waiting (AUTO, the default
 * with lean records and a fast pext), or by the reader in every batch
 * (ALL: CUPROBE_DECODE_THREAD=2, for tests). */
enum { CP_DEFER_NONE = 0, CP_DEFER_AUTO = 1, CP_DEFER_ALL = 2 };

/*! cp__dec_take() : (reader) the next record of the decoder thread's
 *  batches, its fields parsed here when its batch came raw (the rest of
 *  a raw batch's records are parsed a run at a time, as they come up).
 *  @return : 1 and *out, 0 at the clean end, or < 0: d->rc, the
 *  decoder thread's error, or the reader's own at a raw record that does
 *  not parse (the same message the decoder thread gives it). */
int cp__dec_take(cp_dec *d, const cp_record **out);

/*! cp__dec_stop_thread() : stop the decoder thread (if any) and wait for
 *  it: from then on the reader's calls end with d->rc. */
void cp__dec_stop_thread(cp_dec *d);

/*! cp__dec_fail() : set d's error "PATH: <fmt...>" and its state: a
 *  truncated trace (truncated != 0) ends with -EPIPE, damage with -EINVAL.
 *  @return : d->rc. */
__attribute__((format(printf, 3, 4)))
int cp__dec_fail(cp_dec *d, int truncated, const char *fmt, ...);

/*! cp__dec_fields_fail() : cp__dec_fail() for a record at stream offset
 *  off, of `type` and payload length plen, whose fields did not parse:
 *  frc and why as cp__dec_fields_fast() left them (-2: out of memory).
 *  The decoder thread and the reader (a raw batch's record) give the same
 *  message.  @return : d->rc. */
int cp__dec_fields_fail(cp_dec *d, int frc, uint64_t off, unsigned type, const char *why,
                        uint64_t plen);

/*! cp__dec_refill() : decompress until `need` bytes stand at buf[pos]
 *  (growing the window, or on the decoder thread moving on to the next
 *  batch).  @return : 1 when they do, 0 at the end of the input, < 0 on
 *  error (d->err set). */
int cp__dec_refill(cp_dec *d, size_t need);

/*! cp__dec_fill() : cp__dec_refill() once the window runs short; a record
 *  already in the window costs one comparison. */
static inline int cp__dec_fill(cp_dec *d, size_t need)
{
    return d->len - d->pos >= need ? 1 : cp__dec_refill(d, need);
}

#endif /* CP_DECODE_INT_H */
