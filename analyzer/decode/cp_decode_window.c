/*
 * cp_decode_window.c - the trace reader's decompressed window: reading the
 * file (or the memory buffer), decompressing its zstd frames and insisting
 * on their checksums, growing the window for a large record or, on the
 * decoder thread, moving on to the next batch; and the reader's error
 * state ("PATH: at file byte N: ...").  Framing records in the window is
 * cp_decode.c's; the state both share is struct cp_dec (cp_decode_int.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "cp_decode_int.h"

/* ---- errors ------------------------------------------------------------- */

int cp__dec_fail(cp_dec *d, int truncated, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(d->err, sizeof d->err, "%s: ", d->path);
    if (n > 0 && (size_t)n < sizeof d->err)
        vsnprintf(d->err + n, sizeof d->err - (size_t)n, fmt, ap);
    va_end(ap);
    d->state = CP_DS_ERR;
    d->truncated = truncated;
    d->rc = truncated ? -EPIPE : -EINVAL;
    return d->rc;
}

int cp__dec_fields_fail(cp_dec *d, int frc, uint64_t off, unsigned type, const char *why,
                        uint64_t plen)
{
    if (frc == -2)
        return cp__dec_fail(d, 0, "at decompressed byte %llu: out of memory", (unsigned long long)off);
    return cp__dec_fail(d, 0, "at decompressed byte %llu: bad %s record: field '%s' does not fit "
                              "in its %llu bytes",
                        (unsigned long long)off, cp_rec_type_name(type), why,
                        (unsigned long long)plen);
}

/* ---- the decompressed window -------------------------------------------- */

uint8_t *cp__dec_window(uint8_t *old, size_t cap)
{
    uint8_t *b = realloc(old, cap + CP_DEC_SLACK);
    if (b)
        memset(b + cap, 0, CP_DEC_SLACK);
    return b;
}

static int cp_read_input(cp_dec *d)
{
    if (d->in_eof)
        return 0;
    d->in_file_off += d->in_len;
    d->in_len = d->in_pos = 0;
    for (;;) {
        ssize_t r = read(d->fd, d->in, d->in_cap);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return cp__dec_fail(d, 0, "at file byte %llu: read: %s",
                               (unsigned long long)d->in_file_off, strerror(errno));
        if (r == 0)
            d->in_eof = 1;
        d->in_len = (size_t)r;
        return 0;
    }
}

static int cp_dec_zstd_fail(cp_dec *d, size_t r, uint64_t at)
{
    if (ZSTD_getErrorCode(r) == ZSTD_error_checksum_wrong)
        return cp__dec_fail(d, 0, "at file byte %llu: the checksum of the zstd frame that "
                                 "starts at file byte %llu does not match its data "
                                 "(the file is damaged)",
                           (unsigned long long)at, (unsigned long long)d->frame_off);
    return cp__dec_fail(d, 0, "at file byte %llu: zstd: %s", (unsigned long long)at,
                       ZSTD_getErrorName(r));
}

/* Bytes of the current frame that zstd just consumed: keep its first five
 * and, once they are there, insist on the content checksum the format
 * requires (without it a file cut inside the last frame could not be told
 * from a complete one, and damage would go unseen).  @return : 0 or < 0. */
static int cp_dec_frame_bytes(cp_dec *d, const uint8_t *p, size_t n)
{
    static const uint8_t zmagic[4] = {0x28, 0xb5, 0x2f, 0xfd};
    if (d->fh_n >= sizeof d->fh || n == 0)
        return 0;
    size_t k = sizeof d->fh - d->fh_n < n ? sizeof d->fh - d->fh_n : n;
    memcpy(d->fh + d->fh_n, p, k);
    d->fh_n += (unsigned)k;
    if (d->fh_n < sizeof d->fh || memcmp(d->fh, zmagic, 4) != 0)
        return 0;
    if (!(d->fh[4] & 0x04))   /* Frame_Header_Descriptor: Content_Checksum_flag */
        return cp__dec_fail(d, 0, "at file byte %llu: the zstd frame that starts here has "
                                 "no checksum (cuprobe writes one in every frame: the "
                                 "file was not written by cuprobe, or was rewritten)",
                           (unsigned long long)d->frame_off);
    return 0;
}

/* Decoder thread: hand the filled batch over and continue in a fresh one,
 * starting with the unread tail.  @return : 0, or < 0 (stopped, memory). */
static int cp_next_batch(cp_dec *d, size_t need)
{
    cp_batch *nb = cp__ring_take_free(d->ring);
    if (!nb)
        return cp__dec_fail(d, 0, "at decompressed byte %llu: reader stopped",
                           (unsigned long long)(d->base + d->pos));
    size_t tail = d->len - d->pos;
    size_t want = need + CP_DEC_BATCH_WINDOW;
    if (nb->cap < want) {
        free(nb->buf);
        nb->buf = cp__dec_window(NULL, want);
        nb->cap = nb->buf ? want : 0;
        if (!nb->buf) {
            cp__ring_put_free(d->ring, nb);
            return cp__dec_fail(d, 0, "at decompressed byte %llu: out of memory for a %zu-byte record",
                               (unsigned long long)(d->base + d->pos), need);
        }
    }
    memcpy(nb->buf, d->buf + d->pos, tail);
    d->fill->buf = d->buf;
    d->fill->cap = d->cap;
    /* The reader had caught up (nothing else waits for it): it can take
     * the next batch's fields on, and the two threads share the work. */
    size_t waiting = cp__ring_put_full(d->ring, d->fill);
    nb->raw = d->defer == CP_DEFER_ALL || (d->defer == CP_DEFER_AUTO && waiting <= 1);
    d->fill = nb;
    d->buf = nb->buf;
    d->cap = nb->cap;
    d->base += d->pos;
    d->len = tail;
    d->pos = 0;
    nb->ts0 = d->prev_ts;
    nb->base = d->base;
    return 0;
}

int cp__dec_refill(cp_dec *d, size_t need)
{
    while (d->len - d->pos < need) {
        if (d->fill && d->fill->n) {
            /* Records of this batch point into buf: never move it.  Go on
             * in the next batch once this window is (nearly) full. */
            if (d->cap - d->len < 4096 || d->cap - d->pos < need) {
                int rc = cp_next_batch(d, need);
                if (rc < 0)
                    return rc;
            }
        } else if (d->pos && d->cap - d->pos < need + CP_DEC_WINDOW / 2) {
            memmove(d->buf, d->buf + d->pos, d->len - d->pos);
            d->base += d->pos;
            d->len -= d->pos;
            d->pos = 0;
        }
        if (d->cap - d->pos < need) {
            size_t c = d->pos + need + CP_DEC_WINDOW;
            uint8_t *b = cp__dec_window(d->buf, c);
            if (!b)
                return cp__dec_fail(d, 0, "at decompressed byte %llu: out of memory for a "
                                         "%zu-byte record",
                                   (unsigned long long)(d->base + d->pos), need);
            d->buf = b;
            d->cap = c;
        }
        ZSTD_inBuffer in = {d->in, d->in_len, d->in_pos};
        ZSTD_outBuffer out = {d->buf, d->cap, d->len};
        size_t r = ZSTD_decompressStream(d->dctx, &out, &in);
        if (ZSTD_isError(r))
            return cp_dec_zstd_fail(d, r, d->in_file_off + in.pos);
        int progress = out.pos != d->len || in.pos != d->in_pos;
        if (cp_dec_frame_bytes(d, d->in + d->in_pos, in.pos - d->in_pos) < 0)
            return d->rc;
        d->in_pos = in.pos;
        d->len = out.pos;
        if (progress) {
            /* r == 0: the frame is complete (its checksum verified); one
             * call never runs past the end of a frame.  A call without
             * progress says nothing: at a frame boundary zstd asks for the
             * next frame's header. */
            d->mid_frame = r != 0;
            if (r == 0) {
                d->fh_n = 0;
                d->frame_off = d->in_file_off + in.pos;
            }
        }
        __atomic_store_n(&d->progress, d->in_file_off + d->in_pos, __ATOMIC_RELAXED);
        if (progress)
            continue;
        if (d->in_eof)
            return 0;
        int rc = cp_read_input(d);
        if (rc < 0)
            return rc;
    }
    return 1;
}
