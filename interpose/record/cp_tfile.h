/*
 * cp_tfile.h - the trace file's bytes, for the writer (cp_writer.c): it
 * writes what zstd produced in order, keeps a reserve of allocated blocks
 * ahead of the end (fallocate FALLOC_FL_KEEP_SIZE: the file's length stays
 * its real one, so a SIGKILLed trace has no zeros at its end), remembers the
 * last place a reader can stop at cleanly, and when the file system is full
 * (ENOSPC, EDQUOT) writes the last records there, inside that reserve.
 *
 * How a full file system ends a trace (docs/trace-format.md):
 *   ... frames up to the last flush | last block (raw, Last_Block=1) with the
 *   NOSPACE record + the frame's checksum, or, at a frame boundary, a small
 *   frame of its own | a skippable frame (padding) | later, over the
 *   padding, one frame with END when the process exits.
 * Everything is written with pwrite into space the reserve or the bytes
 * already written hold, so nothing needs a new block.
 *
 * The descriptor is the shim's alone: it sits near the top of the
 * descriptor limit, close-on-exec, and before every write, cut or close
 * its identity (device, inode) is checked.  When the program closed it or
 * put another file at its number, nothing is ever written to that number:
 * the trace is opened again by its name (checked to be the same file) and
 * goes on, and the writer records what happened; if that fails, the file
 * is given up (cp_tfile.fd_gone).
 */
#ifndef CP_TFILE_H
#define CP_TFILE_H

#include <stddef.h>
#include <stdint.h>

#include "cp_ownfd.h"

/* Streaming XXH64 (seed 0) of a zstd frame's content: its checksum is the
 * low 32 bits.  zstd keeps its own but does not hand it out. */
typedef struct cp_xxh64 {
    uint64_t v[4], total;
    uint8_t mem[32];
    uint32_t memsize;
} cp_xxh64;

/* A place a reader can stop at: all blocks before it are whole. */
typedef struct cp_tpoint {
    uint64_t off;           /* file bytes before it; 0: none yet */
    int in_frame;           /* 1: after a flush inside a frame; 0: between frames */
    cp_xxh64 h;             /* the frame's content so far */
    uint64_t prev_ts;       /* the writer's: time of the last record before it */
    uint64_t records;       /* records before it */
    uint64_t in_bytes;      /* record bytes before it */
} cp_tpoint;

typedef struct cp_tfile {
    int fd;                 /* -1 once closed or given up */
    struct cp_ownfd_id id;  /* the trace file's identity */
    const char *path;       /* its absolute name, to open it again by */
    int fd_event;           /* CP_OWNFD_CLOSED or _REPLACED: met and mended, not yet reported */
    int fd_event_no;        /* the number the descriptor had then */
    int fd_gone;            /* CP_OWNFD_*: met, and the file could not be opened again */
    int fd_gone_err;        /* why not (an errno; ESTALE: another file has its name) */
    uint64_t off;           /* the next write's offset */
    uint64_t alloc_end;     /* blocks allocated ahead up to here */
    int no_prealloc;        /* the file system cannot (best effort then) */
    cp_xxh64 h;             /* the current frame's content so far */
    cp_tpoint good;         /* the last flush or frame end fully written */
    cp_tpoint safe;         /* the last one with the reserve after it */
    uint64_t end_off;       /* after cp_tf_stop: where the END frame goes */
    uint64_t end_room;      /* bytes of padding there */
} cp_tfile;

/* Record bytes cp_tf_stop() and cp_tf_end() take at most each. */
#define CP_TF_FINAL_MAX 768u

/*! cp_tf_open() : start on fd, the file named path (absolute, kept by
 *  the caller for as long as t is used), whose first `off` bytes (the
 *  prefix) are written.  Moves fd near the top of the descriptor limit
 *  (closing the old number) and reserves the first blocks ahead. */
void cp_tf_open(cp_tfile *t, int fd, uint64_t off, const char *path);

/*! cp_tf_guard() : whether t->fd is still the trace file; if the program
 *  closed it or put another file at its number, the trace is opened again
 *  by its name (a new number; the old one is the program's from then on).
 *  Every write, cut and close of t does this first; the writer also does
 *  it at the start of a pass, before it opens files of its own, which
 *  could take a number the program freed.  @return : 0, or -EBADF (given
 *  up: fd_gone, fd_gone_err say how and why). */
int cp_tf_guard(cp_tfile *t);

/*! cp_tf_fd_event() : whether the program closed or replaced the
 *  descriptor since the last call, and the file was opened again (once
 *  per event): *how (CP_OWNFD_CLOSED or _REPLACED), the number it had (*old_fd) and has now
 *  (*new_fd).  @return : 1 when there is one to report. */
int cp_tf_fd_event(cp_tfile *t, int *how, int *old_fd, int *new_fd);

/*! cp_tf_release() : close the descriptor if it is still the trace file's
 *  (a fork child's copy), without writing.  Async-signal-safe. */
void cp_tf_release(cp_tfile *t);

/*! cp_tf_content() : n bytes of records handed to zstd in the current frame. */
void cp_tf_content(cp_tfile *t, const void *p, size_t n);

/*! cp_tf_write() : append n bytes (zstd's output).  @return : 0 or -errno
 *  (-EBADF: the descriptor was lost, fd_gone says how). */
int cp_tf_write(cp_tfile *t, const void *p, size_t n);

/*! cp_tf_point() : a flush (frame_end 0) or frame end (1) is fully written;
 *  the writer's prev_ts, records and in_bytes then.  Keeps the reserve
 *  ahead.  @return : 0, or -ENOSPC / -EDQUOT when the reserve cannot be
 *  kept (the file system is full: stop now, cp_tf_stop). */
int cp_tf_point(cp_tfile *t, int frame_end, uint64_t prev_ts, uint64_t records,
                uint64_t in_bytes);

/*! cp_tf_stop_point() : the i-th place (0, 1) to try to end the file at
 *  after a failed write.  @return : it, or NULL when there is no i-th. */
const cp_tpoint *cp_tf_stop_point(const cp_tfile *t, int i);

/*! cp_tf_stop() : end the file at pt with `len` bytes of records (encoded
 *  after pt's prev_ts, at most CP_TF_FINAL_MAX) and padding for the END
 *  frame, then cut it there.  @return : 0 or -errno (try the next point). */
int cp_tf_stop(cp_tfile *t, const cp_tpoint *pt, const uint8_t *recs, size_t len);

/*! cp_tf_end() : after cp_tf_stop: write `len` bytes of records (END) as a
 *  frame over the padding and cut the file after it.  @return : 0 or -errno. */
int cp_tf_end(cp_tfile *t, const uint8_t *recs, size_t len);

/*! cp_tf_close() : cut the file at t->off (a normal close: frees the
 *  reserve ahead) and close it.  Async-signal-safe. */
void cp_tf_close(cp_tfile *t);

#endif /* CP_TFILE_H */
