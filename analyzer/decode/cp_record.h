/*
 * cp_record.h - what the reader hands out: a decoded record, its fields laid
 * out from the record table (include/cp_records.h), and the facts a trace
 * states about itself.
 */
#ifndef CP_RECORD_H
#define CP_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cp_trace.h"

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

#endif /* CP_RECORD_H */
