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

#include "cp_trace.h"

typedef struct cp_dec cp_dec;

/* A string inside the current record: not NUL-terminated. */
typedef struct cp_str {
    const char *p;
    size_t n;
} cp_str;

/* The event prefix ("EV") shared by the call records. */
typedef struct cp_ev {
    uint64_t api, result, ctx;
    int64_t dev;
    uint64_t stream, dur_ns, stack;
} cp_ev;

typedef struct cp_oom_proc {
    uint64_t pid, used_bytes;
} cp_oom_proc;

/* A COPY/SYNC `launches` field older writers did not append. */
#define CP_LAUNCHES_UNKNOWN UINT64_MAX

typedef struct cp_record {
    unsigned type;          /* enum cp_rec_type, or an unknown value */
    uint64_t ts;            /* absolute CLOCK_MONOTONIC ns of the writer */
    uint64_t tid;           /* cuprobe thread index (0 = the recorder) */
    uint64_t offset;        /* record start in the decompressed stream */
    const uint8_t *payload; /* fields after the ts/tid prefix */
    size_t payload_len;
    cp_ev ev;               /* valid for CALL..SYNC records that have EV */
    union {
        struct {
            uint64_t pid, ppid, wall_ns, root;
            cp_str host, exe, shim_version;
            uint64_t argc;
            const cp_str *argv;
            uint64_t nenv;
            const cp_str *env_name, *env_value;
            uint64_t page_size;
        } header;
        struct { uint64_t os_tid; cp_str name; } thread;
        struct { uint64_t base, size, file_offset; cp_str path, build_id; } module;
        struct { uint64_t id; cp_str text; } string;
        struct {
            uint64_t id, n_native;
            const uint64_t *ip;
            uint64_t n_py;
            const uint64_t *pyframe;
        } stack;
        struct { uint64_t api_id; cp_str elf_name; uint64_t routes; } api;
        struct {
            cp_str symbol;
            int64_t cuda_version;
            uint64_t flags, result, status, route, handed_out;
        } resolve;
        struct {
            cp_str requested;
            uint64_t flags, ok;
            cp_str found_path, error;
            uint64_t lib_kind;
        } dlopen;
        struct { int64_t driver_version; uint64_t result; } driver;
        struct {
            uint64_t ordinal;
            cp_str name;
            uint8_t uuid[16];
            uint64_t pci_domain, pci_bus, pci_device, cc_major, cc_minor,
                total_mem, pageable_access, uses_host_page_tables, sm_count;
        } device;
        struct { uint64_t kind, ptr, size, flags, pool; } alloc;
        struct { uint64_t kind, ptr, size; } free;
        struct {
            uint64_t bytes, dst_class;
            int64_t dst_dev;
            uint64_t src_class;
            int64_t src_dev;
            uint64_t dst_ptr, src_ptr, flags, n_batch;
            uint64_t launches;   /* CP_LAUNCHES_UNKNOWN in traces without it */
        } copy;
        struct { uint64_t dst_ptr, bytes, dst_class; int64_t dst_dev; } memset;
        struct { uint64_t op, target_ctx; int64_t target_dev; uint64_t flags; } ctx;
        struct { uint64_t op, target_stream, flags; int64_t priority; } stream;
        struct {
            uint64_t op, va, size, handle, loc_type;
            int64_t loc_id;
            uint64_t offset, flags;
        } vmm;
        struct { uint64_t op, pool; int64_t pool_dev; uint64_t attr, value; } pool;
        struct { uint64_t api, func, count; cp_str name; } launch_count;
        struct {
            uint64_t func, param_index, ptr;
            int64_t ptr_dev;
            uint64_t alloc_base, alloc_size;
            cp_str func_name;
        } xdev;
        struct {
            uint64_t requested, free, total, n_procs;
            const cp_oom_proc *procs;
        } oom;
        struct { uint64_t op, launches; } sync;
        struct { uint64_t child_pid; } fork;
        struct { cp_str path; int64_t errno_after; } exec;
        struct { uint64_t signo; int64_t code; uint64_t addr; } signal;
        struct { uint64_t records_lost; cp_str why; } lost;
        struct { uint64_t level; cp_str text; } log;
        struct { cp_str kind, json; } framework;
        struct { uint64_t id, file_str, func_str, line; } pyframe;
        struct { uint64_t reason; int64_t status; uint64_t records, dropped; } end;
    } u;
} cp_record;

/* What the file said about itself, kept beyond the current record. */
typedef struct cp_trace_info {
    uint64_t pid, ppid, wall_ns, root, page_size, start_ts;
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
 *  "FILE: not a cuprobe trace (bad magic)" or "FILE: trace format version 2
 *  is newer than this cuprobe (1); upgrade cuprobe to read it". */
cp_dec *cp_dec_open(const char *path, const char **err);

/*! cp_dec_next() : decode the next record into *out.  Strings and arrays
 *  point into the reader and stay valid until the next call.
 *  @return : 1 = a record, 0 = clean end (an END record was seen and nothing
 *  follows), < 0 = error: cp_dec_err() says why (a truncated file, with no
 *  END, is an error too; cp_dec_truncated() tells it apart from damage). */
int cp_dec_next(cp_dec *d, cp_record *out);

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
