/*
 * cp_wfile.h - one trace file as the writer thread (cp_writer.c) fills it:
 * records encoded into the file format, compressed with zstd and handed to
 * cp_tfile (the bytes, the reserve, the stop at a full file system).  The
 * thread, its locks and the lifecycle stay in cp_writer.c; nothing here
 * calls back into it.
 */
#ifndef CP_WFILE_H
#define CP_WFILE_H

#include <limits.h>
#include <stdint.h>
#include <zstd.h>

#include "cp_tfile.h"

struct cp_wfile {
    cp_tfile tf;               /* its bytes: reserve, stop points; tf.fd -1 when closed */
    char path[PATH_MAX];
    ZSTD_CCtx *cctx;
    uint8_t *in;               /* encoded records waiting for zstd */
    size_t in_len, in_cap;
    uint8_t *out;
    size_t out_cap;
    uint64_t frame_in;         /* input bytes in the current frame */
    uint64_t unflushed;        /* input bytes since the last flush */
    uint64_t prev_ts;          /* for ts deltas; 0 at file start */
    uint64_t start_ts;         /* records older than this are discarded */
    uint64_t records;
    uint64_t events;           /* records beyond the file's own bookkeeping */
    uint64_t lost_base, lost_reported;
    uint64_t in_total;         /* record bytes handed to zstd */
    uint64_t nospace_ts;       /* the file system filled up then: NOSPACE written */
    int err;                   /* first negative errno, sticky */
    int emergency;             /* encoding from a signal handler */
};

/*! cp_wfile_compress() : hand w->in to zstd with mode (continue, flush or
 *  end the frame) and write its output; a flush or frame end is a place the
 *  file can stop at.  A full file system ends the file with NOSPACE
 *  (cp_tf_stop).  @return : 0 or w->err (sticky). */
int cp_wfile_compress(struct cp_wfile *w, ZSTD_EndDirective mode);

/*! cp_wfile_emit() : a cp__emit_fn (ctx is the cp_wfile): one record into
 *  w->in in file encoding, compressing when it is full.  Dropped once the
 *  file failed. */
void cp_wfile_emit(void *ctx, uint32_t tid, unsigned type, uint64_t ts,
                   const uint8_t *fields, uint32_t len);

/*! cp_wfile_own() : a record the writer makes itself (LOST, SIGNAL, END),
 *  timed now (never before the previous record). */
void cp_wfile_own(struct cp_wfile *w, uint32_t tid, unsigned type, const uint8_t *f,
                  const uint8_t *end);

/*! cp_wfile_report_lost() : a LOST record for records the recorder dropped
 *  since the last one. */
void cp_wfile_report_lost(struct cp_wfile *w);

/*! cp_wfile_report_fd() : an FD_LOST record when the program closed or
 *  replaced the trace's descriptor and the file was opened again since the
 *  last call (cp_tf_fd_event). */
void cp_wfile_report_fd(struct cp_wfile *w);

/*! cp_wfile_end() : END(reason, status) and the frame's end; after NOSPACE
 *  END goes into the room kept for it. */
void cp_wfile_end(struct cp_wfile *w, int reason, int64_t status);

/*! cp_wfile_end_signal() : SIGNAL(sig, code, addr) of thread tid, then
 *  END(signal, sig) and the frame's end, as cp_wfile_end (after NOSPACE
 *  both go into the room kept for END).  Async-signal-safe once w->emergency
 *  is set. */
void cp_wfile_end_signal(struct cp_wfile *w, uint32_t tid, int sig, int code, uint64_t addr);

/*! cp_wfile_close() : give back the blocks reserved ahead and close
 *  (nothing, when the descriptor is no longer the trace's). */
void cp_wfile_close(struct cp_wfile *w);

#endif /* CP_WFILE_H */
