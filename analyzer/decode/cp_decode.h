/*
 * cp_decode.h - streaming reader of cuprobe trace files (include/cp_trace.h).
 *
 *   cp_dec *d = cp_dec_open(path, &err);        // err: static text on failure
 *   cp_record r;
 *   int rc;
 *   while ((rc = cp_dec_next(d, &r)) == 1)
 *       use(&r);                                // strings valid until next call
 *   if (rc < 0) fprintf(stderr, "%s\n", cp_dec_err(d));
 *   cp_dec_close(d);
 *
 * Memory stays bounded (a decompression window plus the largest record);
 * no allocation per record.  Corrupt input never crashes the reader: it
 * ends with an error "FILE: offset N: reason", where N is the offset of the
 * record in the decompressed record stream, or "FILE: offset N (file
 * offset): zstd: reason" when the compressed layer itself is damaged.
 */
#ifndef CP_DECODE_H
#define CP_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cp_trace.h"

typedef struct cp_dec cp_dec;

/* A string inside the current record: not NUL-terminated. */
typedef struct cp_str {
    const char *p;
    size_t n;
} cp_str;

/*! cp_str_dup() : s as an owned NUL-terminated copy (for what outlives the
 *  record).  @return : the copy (free() it), or NULL out of memory. */
static inline char *cp_str_dup(cp_str s)
{
    char *c = malloc(s.n + 1);
    if (c) {
        memcpy(c, s.p, s.n);
        c[s.n] = 0;
    }
    return c;
}

/* Decoded fields of each record kind (include/cp_records.h). */
#define CP_DECL(k, n, a, fmt) CP_DECL_##k(n, a, fmt)
#define CP_DECL_U(n, a, fmt) uint64_t n;
#define CP_DECL_UOPT(n, a, fmt) uint64_t n;
#define CP_DECL_S(n, a, fmt) int64_t n;
#define CP_DECL_STR(n, a, fmt) cp_str n;
#define CP_DECL_BYTES(n, a, fmt) uint8_t n[a];
#define CP_DECL_UARR(n, a, fmt) uint64_t a; const uint64_t *n;
#define CP_DECL_PAIRS(n, a, fmt) uint64_t a; const CP_PAIR_##fmt##_T *n;
#define CP_DECL_STRARR(n, a, fmt) uint64_t a; const cp_str *n;
#define CP_DECL_KVARR(n, a, fmt) uint64_t a; const cp_str *n##_name, *n##_value;
#define CP_DECL_REC_(N, id, l, shape, doc) struct { CP_F_##N(CP_DECL) } l;

/* The event prefix ("EV") shared by the call records. */
typedef struct cp_ev {
    CP_EV_FIELDS(CP_DECL)
} cp_ev;

/* A COPY/SYNC/ALLOC `launches` field older writers did not append. */
#define CP_LAUNCHES_UNKNOWN CP_FIELD_ABSENT

typedef struct cp_record {
    unsigned type;          /* enum cp_rec_type, or an unknown value */
    uint64_t ts;            /* absolute CLOCK_MONOTONIC ns of the writer */
    uint64_t tid;           /* cuprobe thread index (0 = the recorder) */
    cp_ev ev;               /* valid for the records that start with EV */
    /* Only the member of `type` is valid: the decoder thread hands a record
     * to the reader without the bytes past that member (cp_rec_bytes), so
     * another member holds whatever an earlier record left there. */
    union {
        CP_RECORDS(CP_DECL_REC_)   /* r->u.alloc.size, r->u.header.argv... */
    } u;
    /* Last, past every member: with cp_dec_lean_records(1) the decoder
     * thread does not hand these over for records of a known type other
     * than HEADER, API, STRING, LOST, END, STACK and OOM (the report never
     * reads them, and they took ALLOC and LAUNCH_COUNT to a third cache
     * line).  Valid otherwise. */
    uint64_t offset;        /* record start in the decompressed stream */
    const uint8_t *payload; /* fields after the ts/tid prefix */
    size_t payload_len;
} cp_record;

/* What the file said about itself, kept beyond the current record. */
typedef struct cp_trace_info {
    uint64_t pid, ppid, wall_ns, root, page_size, start_ts;
    uint64_t run_id;        /* 0 outside `cuprobe run`, CP_FIELD_ABSENT not recorded */
    char *host, *exe, *shim_version;
    char *cmdline;          /* argv joined with spaces */
    int header_seen, end_seen;
    uint64_t end_reason, end_records, end_dropped;
    int64_t end_status;
    uint64_t lost;          /* sum of CP_REC_LOST records */
} cp_trace_info;

/*! cp_dec_open() : open path and check its 16-byte prefix.
 *  @return : a reader, or NULL with *err set to a message (owned by the
 *  library, valid until the next cp_dec_open call on this thread) such as
 *  "FILE: not a cuprobe trace: file byte 0 is not the magic ..." or "FILE: trace format version 2
 *  is newer than this cuprobe (1); upgrade cuprobe to read it". */
cp_dec *cp_dec_open(const char *path, const char **err);

/*! cp_dec_next() : decode the next record into *out.  Strings and arrays
 *  point into the reader and stay valid until the next call.
 *  @return : 1 = a record, 0 = clean end (an END record was seen and nothing
 *  follows), < 0 = error: cp_dec_err() says why (a truncated file, with no
 *  END, is an error too; cp_dec_truncated() tells it apart from damage). */
int cp_dec_next(cp_dec *d, cp_record *out);

/*! cp_dec_next_ref() : like cp_dec_next() without copying the record:
 *  *out points at it (inside the reader) until the next call.
 *  @return : as cp_dec_next(). */
int cp_dec_next_ref(cp_dec *d, const cp_record **out);

/*! cp_dec_next_run() : like cp_dec_next_ref() for several records at once:
 *  *recs points at *n (>= 1) consecutive records (inside the reader) until
 *  the next call.  Cheaper per record than cp_dec_next_ref() when a decoder
 *  thread fills batches; the records are in trace order and every name a
 *  record of the run announces is known by the time the call returns.
 *  @return : as cp_dec_next_ref() (*n is set only when it returns 1). */
int cp_dec_next_run(cp_dec *d, const cp_record **recs, size_t *n);

/*! cp_dec_spin_waits() : (process-wide) on != 0: the reader and its
 *  decoder thread watch for each other's batch a short while (about one
 *  batch's decoding time) before sleeping, instead of sleeping at once and
 *  being woken for every batch.  Worth it only with a free CPU for each of
 *  the two threads: off by default. */
void cp_dec_spin_waits(int on);

/*! cp_dec_lean_records() : (process-wide, for readers opened after the
 *  call) on != 0: a decoder thread hands over records of known types
 *  without offset, payload and payload_len, except HEADER, API, STRING,
 *  LOST, END, STACK and OOM: fewer bytes between the threads.  For
 *  readers that never look at those three fields (the report, dump
 *  without --stats).  Off by default: every field of every record valid. */
void cp_dec_lean_records(int on);

/*! cp_dec_err() : the last error text, "" if none. */
const char *cp_dec_err(const cp_dec *d);

/*! cp_dec_truncated() : non-zero when the error was "the file just stops"
 *  (process killed, disk full) rather than damaged data. */
int cp_dec_truncated(const cp_dec *d);

/*! cp_dec_records() : records delivered so far. */
uint64_t cp_dec_records(const cp_dec *d);

/*! cp_dec_info() : header and end facts seen so far. */
const cp_trace_info *cp_dec_info(const cp_dec *d);

/*! cp_dec_file_offset() : how many bytes of the file the decoder has
 *  consumed so far (for progress reports). */
uint64_t cp_dec_file_offset(const cp_dec *d);

/*! cp_dec_api_name() : the ELF name announced for api id by CP_REC_API.
 *  @return : NUL-terminated name, or NULL when not announced. */
const char *cp_dec_api_name(const cp_dec *d, uint64_t id);

/*! cp_dec_string() : the text announced for id by CP_REC_STRING.
 *  @return : NUL-terminated text, or NULL when not announced. */
const char *cp_dec_string(const cp_dec *d, uint64_t id);

/*! cp_dec_path() : the path given to cp_dec_open(). */
const char *cp_dec_path(const cp_dec *d);

/*! cp_dec_close() : free the reader (NULL is fine). */
void cp_dec_close(cp_dec *d);

/*! cp_dec_open_mem() : like cp_dec_open() on a memory buffer holding a
 *  whole file (fuzzing, tests).  `name` is used in messages.  The buffer
 *  must outlive the reader. */
cp_dec *cp_dec_open_mem(const void *buf, size_t len, const char *name, const char **err);

/* ---- names for enums (cp_names.c); never NULL ---------------------------- */

/*! cp_rec_type_name() : "HEADER", "ALLOC", ...; "UNKNOWN" otherwise. */
const char *cp_rec_type_name(unsigned type);
/*! cp_mem_class_name() : "device", "pinned", ... ; "?" when unknown. */
const char *cp_mem_class_name(uint64_t c);
/*! cp_mem_kind_name() : "device", "async", "pool", ... */
const char *cp_mem_kind_name(uint64_t k);
/*! cp_op_name() : the op enum of record `type` (CTX, STREAM, VMM, POOL, SYNC). */
const char *cp_op_name(unsigned type, uint64_t op);
/*! cp_route_name(), cp_libkind_name(), cp_end_reason_name() : enum names. */
const char *cp_route_name(uint64_t r);
const char *cp_libkind_name(uint64_t k);
const char *cp_end_reason_name(uint64_t r);
/*! cp_copy_flags_str() : "async|2d|..." for enum cp_copy_flags, "0" if none. */
const char *cp_copy_flags_str(uint64_t f, char *buf, size_t cap);

#endif /* CP_DECODE_H */
