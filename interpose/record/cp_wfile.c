/*
 * cp_wfile.c - one trace file's encoding (cp_wfile.h): records in file
 * encoding, zstd, and the end of a file on a full file system.
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <zstd.h>

#include "cp_rec.h"
#include "cp_wfile.h"
#include "cp_writer.h"

/* ---- encoding and compression ------------------------------------------- */

static void cp_wfile_nospace(struct cp_wfile *w, int err);

static int cp_wfile_fail(struct cp_wfile *w, int rc)
{
    w->err = rc;
    if ((rc == -ENOSPC || rc == -EDQUOT) && !w->nospace_ts)
        cp_wfile_nospace(w, -rc);
    return rc;
}

int cp_wfile_compress(struct cp_wfile *w, ZSTD_EndDirective mode)
{
    if (w->err)
        return w->err;
    ZSTD_inBuffer in = {w->in, w->in_len, 0};
    /* The frame's checksum, should the file system fill up before it ends
     * (cp_tfile.c); zstd consumes all of the input in this call. */
    cp_tf_content(&w->tf, w->in, w->in_len);
    w->in_total += w->in_len;
    for (;;) {
        ZSTD_outBuffer out = {w->out, w->out_cap, 0};
        size_t r = ZSTD_compressStream2(w->cctx, &out, &in, mode);
        if (ZSTD_isError(r))
            return cp_wfile_fail(w, -EIO);
        if (out.pos) {
            int rc = cp_tf_write(&w->tf, w->out, out.pos);
            if (rc < 0)
                return cp_wfile_fail(w, rc);
        }
        if (mode == ZSTD_e_continue ? in.pos == in.size : r == 0)
            break;
    }
    w->frame_in += w->in_len;
    w->unflushed += w->in_len;
    w->in_len = 0;
    if (mode == ZSTD_e_end) {
        w->frame_in = 0;
        w->unflushed = 0;
    } else if (mode == ZSTD_e_flush) {
        w->unflushed = 0;
    }
    if (mode != ZSTD_e_continue) {
        int rc = cp_tf_point(&w->tf, mode == ZSTD_e_end, w->prev_ts, w->records, w->in_total);
        if (rc < 0)
            return cp_wfile_fail(w, rc);
    }
    if (w->frame_in >= CP_FRAME_MAX_BYTES)
        return cp_wfile_compress(w, ZSTD_e_end);
    return 0;
}

/* Whether a record says anything about the program (as opposed to the
 * file's own set-up: header, thread names, id announcements, exec, end). */
static int cp_wfile_is_event(unsigned type)
{
    switch (type) {
    case CP_REC_HEADER: case CP_REC_THREAD: case CP_REC_MODULE:
    case CP_REC_MODULE_RESET: case CP_REC_STRING: case CP_REC_STACK:
    case CP_REC_API: case CP_REC_PYFRAME: case CP_REC_EXEC: case CP_REC_END:
    case CP_REC_HOSTINFO: case CP_REC_HOSTMEM:   /* the writer's own samples */
    case CP_REC_FD_LOST:
        return 0;
    default:
        return 1;
    }
}

/* cp__emit_fn: one record in file encoding:
 * u8 type | varint len | varint ts_delta | varint tid | fields. */
void cp_wfile_emit(void *ctx, uint32_t tid, unsigned type, uint64_t ts,
                           const uint8_t *fields, uint32_t len)
{
    struct cp_wfile *w = ctx;
    uint8_t pre[2 * CP_VARINT_MAX];
    if (w->err)
        return;   /* the file failed: records are dropped (NOSPACE counts them) */
    /* Records arrive in non-decreasing ts order; the clamp only guards the
     * format's promise if a clock ever stepped back. */
    uint64_t delta = ts > w->prev_ts ? ts - w->prev_ts : 0;
    w->prev_ts += delta;
    uint8_t *q = cp_put_u(pre, delta);
    q = cp_put_u(q, tid);
    size_t plen = (size_t)(q - pre) + len;
    size_t need = 1 + CP_VARINT_MAX + plen;
    if (w->in_len + need > w->in_cap) {
        if (cp_wfile_compress(w, ZSTD_e_continue) < 0)
            return;
        if (need > w->in_cap) {
            uint8_t *n = w->emergency ? NULL : realloc(w->in, need);
            if (!n)
                return;
            w->in = n;
            w->in_cap = need;
        }
    }
    uint8_t *p = w->in + w->in_len;
    *p++ = (uint8_t)type;
    p = cp_put_u(p, plen);
    memcpy(p, pre, (size_t)(q - pre));
    p += q - pre;
    memcpy(p, fields, len);
    w->in_len = (size_t)(p + len - w->in);
    w->records++;
    w->events += cp_wfile_is_event(type);
    /* The HEADER, the file's first record, is made a place the file can
     * stop at at once: on a file system with little room left, what comes
     * next may not fit, and a trace that at least says whose it is and
     * that the disk was full (NOSPACE) beats none. */
    if (type == CP_REC_HEADER && w->records == 1)
        cp_wfile_compress(w, ZSTD_e_flush);
}

/* A record the writer makes itself (LOST, SIGNAL, END). */
void cp_wfile_own(struct cp_wfile *w, uint32_t tid, unsigned type,
                          const uint8_t *f, const uint8_t *end)
{
    uint64_t now = cp_now_ns();
    cp_wfile_emit(w, tid, type, now > w->prev_ts ? now : w->prev_ts, f,
                   (uint32_t)(end - f));
}

void cp_wfile_report_lost(struct cp_wfile *w)
{
    uint64_t lost = cp__rec_lost() - w->lost_base;
    if (lost <= w->lost_reported)
        return;
    static const char why[] = "writer backlog limit reached or record nested in a signal handler";
    enum { why_len = sizeof why - 1 };
    uint8_t f[CP_REC_BOUND(LOST)];
    uint8_t *p = cp_enc_lost(f, lost - w->lost_reported, why, why_len);
    w->lost_reported = lost;
    cp_wfile_own(w, 0, CP_REC_LOST, f, p);
}

void cp_wfile_report_fd(struct cp_wfile *w)
{
    int how, old_fd, new_fd;
    if (!cp_tf_fd_event(&w->tf, &how, &old_fd, &new_fd))
        return;
    uint8_t f[CP_REC_BOUND(FD_LOST)];
    uint8_t *p = cp_enc_fd_lost(f, (uint64_t)how, (uint64_t)old_fd, (uint64_t)new_fd);
    cp_wfile_own(w, 0, CP_REC_FD_LOST, f, p);
}

/* END(reason, status), after SIGNAL when sig (fields sig..sig_end from
 * thread tid) is given. */
static void cp_wfile_finish(struct cp_wfile *w, int reason, int64_t status, uint32_t tid,
                            const uint8_t *sig, const uint8_t *sig_end)
{
    uint8_t f[CP_REC_BOUND(END)];
    uint8_t *p;
    if (w->nospace_ts) {
        /* The file system was full: the last records go into the room kept
         * for them after NOSPACE, as a frame of its own (SIGNAL and END
         * together are far below CP_TF_FINAL_MAX). */
        int err = w->err;
        w->err = 0;
        w->in_len = 0;
        if (sig)
            cp_wfile_own(w, tid, CP_REC_SIGNAL, sig, sig_end);
        p = cp_enc_end(f, (uint64_t)reason, status, w->records, cp__rec_lost() - w->lost_base);
        cp_wfile_own(w, 0, CP_REC_END, f, p);
        cp_tf_end(&w->tf, w->in, w->in_len);
        w->in_len = 0;
        w->err = err;
        return;
    }
    cp_wfile_report_lost(w);
    cp_wfile_report_fd(w);
    if (sig)
        cp_wfile_own(w, tid, CP_REC_SIGNAL, sig, sig_end);
    p = cp_enc_end(f, (uint64_t)reason, status, w->records, cp__rec_lost() - w->lost_base);
    cp_wfile_own(w, 0, CP_REC_END, f, p);
    cp_wfile_compress(w, ZSTD_e_end);
    if (w->nospace_ts)   /* this very write found the file system full */
        cp_wfile_finish(w, reason, status, tid, sig, sig_end);
}

void cp_wfile_end(struct cp_wfile *w, int reason, int64_t status)
{
    cp_wfile_finish(w, reason, status, 0, NULL, NULL);
}

void cp_wfile_end_signal(struct cp_wfile *w, uint32_t tid, int sig, int code, uint64_t addr)
{
    uint8_t f[CP_REC_BOUND(SIGNAL)];
    uint8_t *p = cp_enc_signal(f, (uint64_t)sig, code, addr);
    cp_wfile_finish(w, CP_END_SIGNAL, sig, tid, f, p);
}

void cp_wfile_close(struct cp_wfile *w)
{
    cp_tf_close(&w->tf);
}

/* The file system is full (err ENOSPC or EDQUOT): end the file at the last
 * flush with a NOSPACE record, in space reserved for it, and stop; the
 * program goes on untraced.  The records since that flush are lost (they
 * are counted).  Async-signal-safe, as the emergency path may get here. */
static void cp_wfile_nospace(struct cp_wfile *w, int err)
{
    uint64_t now = cp_now_ns();
    uint64_t recs = w->records, bytes = w->in_total + w->in_len;
    const cp_tpoint *pt;
    int saved = w->err;
    w->err = 0;   /* cp_wfile_emit drops records after a failure */
    for (int i = 0; (pt = cp_tf_stop_point(&w->tf, i)); i++) {
        if (pt->records == 0)
            continue;   /* not even the HEADER is in the file */
        w->in_len = 0;
        w->prev_ts = pt->prev_ts;
        w->records = pt->records;
        uint8_t f[CP_REC_BOUND(NOSPACE)];
        uint8_t *p = cp_enc_nospace(f, (uint64_t)err, recs - pt->records,
                                    bytes - pt->in_bytes, pt->off);
        cp_wfile_emit(w, 0, CP_REC_NOSPACE, now > w->prev_ts ? now : w->prev_ts, f,
                       (uint32_t)(p - f));
        if (cp_tf_stop(&w->tf, pt, w->in, w->in_len) == 0) {
            w->nospace_ts = now;
            w->in_len = 0;
            w->err = saved;
            return;
        }
    }
    w->err = saved;
    /* No point to end at (the file system could not even take the first
     * flush): a file without its HEADER would only confuse the analyzer. */
    w->in_len = 0;
    unlink(w->path);
}

