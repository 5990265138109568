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

#include "cp_names.h"
#include "cp_record.h"

typedef struct cp_dec cp_dec;


/*! cp_dec_open() : open path and check its 16-byte prefix.
 *  @return : a reader, or NULL with *err set to a message (owned by the
 *  library, valid until the next cp_dec_open call on this thread) such as
 *  "FILE: not a cuprobe trace: file byte 0 is not the magic ..." or "FILE: trace format version 2
 *  is newer than this cuprobe (1); upgrade cuprobe to read it". */
cp_dec *cp_dec_open(const char *path, const char **err);

/*! cp_dec_open_fd() : like cp_dec_open() on fd, already open (a stream:
 *  standard input, a pipe), which the reader now owns (closed on failure
 *  too).  head holds the n_head bytes already read from it (a caller that
 *  looked at the first bytes to tell a trace from a summary): at most
 *  CP_TRACE_PREFIX_BYTES plus ZSTD_DStreamInSize(), read before fd is. */
cp_dec *cp_dec_open_fd(int fd, const char *name, const void *head, size_t n_head,
                       const char **err);

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

#endif /* CP_DECODE_H */
