/*
 * cp_decode.c - the streaming trace reader: file prefix, zstd frames, record
 * framing, error reporting and the decoder thread.  Field layouts live in
 * cp_decode_fields.c, the id -> name tables in cp_decode_note.c.
 *
 * The decompressed stream is read through a window `buf`: records are
 * parsed in place and the window is refilled (the unread tail moved to the
 * front) when the next record is not complete in it.  A record larger than
 * the window grows it, up to CP_DEC_MAX_RECORD.
 *
 * A trace file of CP_DEC_THREAD_MIN bytes or more is decoded on a thread
 * of its own (decompression, framing and fields: about half the work of a
 * report), so the reader's thread only runs the model and the checks.  The
 * thread fills batches (cp_decode_ring.c): each owns the window its records
 * point into, so a refill starts a new batch instead of moving bytes that
 * records handed out still point at.  Names and header facts are noted as
 * records are handed out, on the reader's thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "cp_decode.h"
#include "cp_decode_int.h"
#include "cp_grow.h"
#include "cp_varint.h"

#define CP_DEC_WINDOW (1u << 20)
#define CP_DEC_MAX_RECORD (64u << 20)
/* Decoder thread: a batch's window (about 5,000 records), and the file
 * size from which the thread pays for itself. */
#define CP_DEC_BATCH_WINDOW (128u << 10)
#define CP_DEC_THREAD_MIN (1u << 20)

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
    char err[512];
    struct cp_scratch scratch;
    cp_record one;              /* the record handed out, without a thread */
    /* The reader's side: names and facts of records handed out. */
    struct cp_idmap apis, strings;
    cp_trace_info info;
    uint64_t delivered;
    /* Decoder thread, when there is one.  The fields above `apis` belong
     * to it until it handed over its last batch. */
    cp_ring *ring;
    pthread_t thread;
    int threaded, joined, stopped;
    int buf_in_ring;            /* buf went to the first batch */
    cp_batch *fill;             /* decoder thread: the batch being filled */
    cp_batch *cur;              /* reader: the batch being handed out */
    size_t cur_i;
    uint64_t progress;          /* file offset decoded (atomic) */
};

static _Thread_local char g_open_err[600];  /* traces open on several threads */

static void cp_dec_maybe_thread(cp_dec *d);

/* ---- errors ------------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int cp_dec_fail(cp_dec *d, int truncated, const char *fmt, ...)
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

/* Stop the decoder thread (if any) and wait for it: from then on the
 * reader's calls end with d->rc. */
static void cp_dec_stop_thread(cp_dec *d)
{
    if (!d->threaded || d->joined)
        return;
    cp__ring_stop(d->ring);
    pthread_join(d->thread, NULL);
    d->joined = 1;
    d->stopped = 1;
}

/* ---- opening ------------------------------------------------------------ */

static cp_dec *cp_dec_new(const char *path)
{
    cp_dec *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->fd = -1;
    d->path = strdup(path ? path : "(trace)");
    d->dctx = ZSTD_createDCtx();
    d->cap = CP_DEC_WINDOW;
    d->buf = malloc(d->cap);
    if (!d->path || !d->dctx || !d->buf) {
        cp_dec_close(d);
        return NULL;
    }
    return d;
}

static int cp_check_prefix(const char *path, const uint8_t *p, size_t n, const char **err)
{
    if (n < CP_TRACE_PREFIX_BYTES) {
        snprintf(g_open_err, sizeof g_open_err,
                 "%s: not a cuprobe trace (only %zu bytes, the prefix needs %u)",
                 path, n, CP_TRACE_PREFIX_BYTES);
    } else if (memcmp(p, CP_TRACE_MAGIC, 8) != 0) {
        snprintf(g_open_err, sizeof g_open_err, "%s: not a cuprobe trace (bad magic)", path);
    } else {
        uint32_t v = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 |
                     (uint32_t)p[11] << 24;
        if (v >= 1 && v <= CP_TRACE_VERSION)
            return 0;
        if (v > CP_TRACE_VERSION)
            snprintf(g_open_err, sizeof g_open_err,
                     "%s: trace format version %u is newer than this cuprobe "
                     "(reads up to %u); upgrade cuprobe to read it",
                     path, v, CP_TRACE_VERSION);
        else
            snprintf(g_open_err, sizeof g_open_err,
                     "%s: not a cuprobe trace (format version 0)", path);
    }
    *err = g_open_err;
    return -1;
}

cp_dec *cp_dec_open(const char *path, const char **err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(g_open_err, sizeof g_open_err, "%s: %s", path, strerror(errno));
        *err = g_open_err;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(g_open_err, sizeof g_open_err, "%s: is a directory, not a trace file", path);
        *err = g_open_err;
        close(fd);
        return NULL;
    }
    uint8_t pre[CP_TRACE_PREFIX_BYTES];
    size_t got = 0;
    while (got < sizeof pre) {
        ssize_t r = read(fd, pre + got, sizeof pre - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (cp_check_prefix(path, pre, got, err) < 0) {
        close(fd);
        return NULL;
    }
    cp_dec *d = cp_dec_new(path);
    if (d) {
        d->in_cap = ZSTD_DStreamInSize();
        d->in = malloc(d->in_cap);
    }
    if (!d || !d->in) {
        close(fd);
        cp_dec_close(d);
        *err = "out of memory";
        return NULL;
    }
    d->fd = fd;
    d->in_file_off = CP_TRACE_PREFIX_BYTES;
    d->frame_off = CP_TRACE_PREFIX_BYTES;
    cp_dec_maybe_thread(d);
    return d;
}

cp_dec *cp_dec_open_mem(const void *buf, size_t len, const char *name, const char **err)
{
    if (cp_check_prefix(name, buf, len, err) < 0)
        return NULL;
    cp_dec *d = cp_dec_new(name);
    if (!d) {
        *err = "out of memory";
        return NULL;
    }
    /* The whole remainder is one input buffer; nothing to read. */
    d->mem = buf;
    d->mem_len = len;
    d->in = (uint8_t *)buf + CP_TRACE_PREFIX_BYTES;
    d->in_len = len - CP_TRACE_PREFIX_BYTES;
    d->in_file_off = CP_TRACE_PREFIX_BYTES;
    d->frame_off = CP_TRACE_PREFIX_BYTES;
    d->in_eof = 1;
    cp_dec_maybe_thread(d);
    return d;
}

void cp_dec_close(cp_dec *d)
{
    if (!d)
        return;
    cp_dec_stop_thread(d);
    if (d->buf_in_ring)
        d->buf = NULL;          /* a batch's window: the ring frees it */
    cp__ring_free(d->ring);
    if (d->fd >= 0)
        close(d->fd);
    if (!d->mem)
        free(d->in);
    ZSTD_freeDCtx(d->dctx);
    free(d->buf);
    free(d->path);
    cp__dec_scratch_free(&d->scratch);
    cp__idmap_free(&d->apis);
    cp__idmap_free(&d->strings);
    free(d->info.host);
    free(d->info.exe);
    free(d->info.shim_version);
    free(d->info.cmdline);
    free(d);
}

/* ---- the decompressed window -------------------------------------------- */

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
            return cp_dec_fail(d, 0, "at file byte %llu: read: %s",
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
        return cp_dec_fail(d, 0, "at file byte %llu: the checksum of the zstd frame that "
                                 "starts at file byte %llu does not match its data "
                                 "(the file is damaged)",
                           (unsigned long long)at, (unsigned long long)d->frame_off);
    return cp_dec_fail(d, 0, "at file byte %llu: zstd: %s", (unsigned long long)at,
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
        return cp_dec_fail(d, 0, "at file byte %llu: the zstd frame that starts here has "
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
        return cp_dec_fail(d, 0, "at decompressed byte %llu: reader stopped",
                           (unsigned long long)(d->base + d->pos));
    size_t tail = d->len - d->pos;
    size_t want = need + CP_DEC_BATCH_WINDOW;
    if (nb->cap < want) {
        free(nb->buf);
        nb->buf = malloc(want);
        nb->cap = nb->buf ? want : 0;
        if (!nb->buf) {
            cp__ring_put_free(d->ring, nb);
            return cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory for a %zu-byte record",
                               (unsigned long long)(d->base + d->pos), need);
        }
    }
    memcpy(nb->buf, d->buf + d->pos, tail);
    d->fill->buf = d->buf;
    d->fill->cap = d->cap;
    cp__ring_put_full(d->ring, d->fill);
    d->fill = nb;
    d->buf = nb->buf;
    d->cap = nb->cap;
    d->base += d->pos;
    d->len = tail;
    d->pos = 0;
    return 0;
}

/* Make `need` bytes available at buf[pos].  @return : 1 when they are, 0 at
 * the end of the input, < 0 on error (d->err set). */
static int cp_fill(cp_dec *d, size_t need)
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
            uint8_t *b = realloc(d->buf, c);
            if (!b)
                return cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory for a "
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

/* ---- records ------------------------------------------------------------ */

static int cp_dec_truncated_at(cp_dec *d, uint64_t off)
{
    return cp_dec_fail(d, 1, "at decompressed byte %llu: truncated after %llu records "
                             "(no END record: the process was killed or the file cut)",
                       (unsigned long long)off, (unsigned long long)d->nrec);
}

/* Bring the next record's bytes into the window: its header is *hdr bytes,
 * its payload *plen.  @return : 1, 0 at a clean end, < 0 on error. */
static int cp_dec_frame_slow(cp_dec *d, size_t *hdr, uint64_t *plen)
{
    if (d->state == CP_DS_ERR)
        return d->rc;
    int rc = cp_fill(d, 1 + CP_VARINT_MAX);
    if (rc < 0)
        return rc;
    uint64_t off = d->base + d->pos;
    if (d->len == d->pos) {
        if (d->state == CP_DS_END && d->mid_frame)
            return cp_dec_fail(d, 1, "at file byte %llu: the file ends inside its last zstd "
                                     "frame (started at file byte %llu), after the END "
                                     "record: the file was cut short",
                               (unsigned long long)cp_dec_file_offset(d),
                               (unsigned long long)d->frame_off);
        if (d->state == CP_DS_END)
            return 0;
        return cp_dec_truncated_at(d, off);
    }
    if (d->state == CP_DS_END)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: data after the END record",
                           (unsigned long long)off);

    const uint8_t *p = d->buf + d->pos + 1, *e = d->buf + d->len;
    unsigned type = d->buf[d->pos];
    if (cp_get_u(&p, e, plen)) {
        if (rc == 0 && e - p < CP_VARINT_MAX)
            return cp_dec_truncated_at(d, off);
        return cp_dec_fail(d, 0, "at decompressed byte %llu: bad record length", (unsigned long long)off);
    }
    if (type == 0)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: record type 0 (not a record)",
                           (unsigned long long)off);
    if (*plen > CP_DEC_MAX_RECORD)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: record length %llu exceeds the %u-byte limit",
                           (unsigned long long)off, (unsigned long long)*plen,
                           CP_DEC_MAX_RECORD);
    *hdr = (size_t)(p - (d->buf + d->pos));
    rc = cp_fill(d, *hdr + (size_t)*plen);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return cp_dec_truncated_at(d, off);
    return 1;
}

/* cp_dec_frame_slow() when the record is not already whole in the window:
 * most records are (a window holds thousands) and have a one-byte length. */
static inline int cp_dec_frame(cp_dec *d, size_t *hdr, uint64_t *plen)
{
    size_t avail = d->len - d->pos;
    if (__builtin_expect(d->state == CP_DS_OK && avail >= 2, 1)) {
        const uint8_t *b = d->buf + d->pos;
        if (b[0] != 0 && b[1] < 0x80 && avail >= 2 + (size_t)b[1]) {
            *hdr = 2;
            *plen = b[1];
            return 1;
        }
    }
    return cp_dec_frame_slow(d, hdr, plen);
}

/* Decode the record cp_dec_frame() brought in.  @return : 1 or < 0. */
static int cp_dec_parse(cp_dec *d, cp_record *r, size_t hdr, uint64_t plen)
{
    uint64_t off = d->base + d->pos;
    unsigned type = d->buf[d->pos];
    const uint8_t *p = d->buf + d->pos + hdr, *e = p + plen, *lim = d->buf + d->len;
    uint64_t delta, tid;
    if (!(p = cp__get_u_fast(p, lim, &delta)) || !(p = cp__get_u_fast(p, lim, &tid)) || p > e)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: %s record too short for its time and thread",
                           (unsigned long long)off, cp_rec_type_name(type));
    if (d->nrec == 0 && type != CP_REC_HEADER)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: first record is %s, not HEADER",
                           (unsigned long long)off, cp_rec_type_name(type));
    memset(&r->ev, 0, sizeof r->ev);
    r->type = type;
    r->ts = d->prev_ts += delta;
    r->tid = tid;
    r->offset = off;
    r->payload = p;
    r->payload_len = (size_t)(e - p);
    const char *why = "";
    int frc = cp__dec_fields_fast(&d->scratch, r, lim, &why);
    if (frc == -2)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory", (unsigned long long)off);
    if (frc < 0)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: bad %s record: field '%s' does not fit "
                                 "in its %llu bytes",
                           (unsigned long long)off, cp_rec_type_name(type), why,
                           (unsigned long long)plen);
    d->pos += hdr + (size_t)plen;
    d->nrec++;
    if (type == CP_REC_END)
        d->state = CP_DS_END;
    return 1;
}

static void *cp_dec_thread_main(void *arg)
{
    cp_dec *d = arg;
    int rc = 0;
    d->fill = cp__ring_take_free(d->ring);
    if (!d->fill)
        return NULL;
    /* The window opened with starts the first batch. */
    free(d->fill->buf);
    d->fill->buf = d->buf;
    d->fill->cap = d->cap;
    d->buf_in_ring = 1;
    for (;;) {
        size_t hdr;
        uint64_t plen;
        rc = cp_dec_frame(d, &hdr, &plen);
        if (rc != 1)
            break;
        /* Framing may have started a new batch: only now is it known. */
        cp_batch *b = d->fill;
        if (b->n == b->recs_cap &&
            cp_grow((void **)&b->recs, &b->recs_cap, b->n + 1, sizeof *b->recs, 1024)) {
            rc = cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory",
                             (unsigned long long)(d->base + d->pos));
            break;
        }
        cp_record *r = &b->recs[b->n];
        rc = cp_dec_parse(d, r, hdr, plen);
        if (rc < 0)
            break;
        if (cp__batch_has_arrays(r->type) && cp__batch_keep_arrays(b, r) < 0) {
            rc = cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory", (unsigned long long)r->offset);
            break;
        }
        b->n++;
    }
    d->fill->buf = d->buf;
    d->fill->cap = d->cap;
    d->fill->last = 1;
    d->rc = rc;
    cp__ring_put_full(d->ring, d->fill);
    d->fill = NULL;
    return NULL;
}

/* Decode on a thread when the file is big enough to gain from it
 * (CUPROBE_DECODE_THREAD: 0 never, 1 always).  Falls back to decoding on
 * the caller's thread when the thread cannot start. */
static void cp_dec_maybe_thread(cp_dec *d)
{
    const char *env = getenv("CUPROBE_DECODE_THREAD");
    struct stat st;
    uint64_t size = d->mem ? d->mem_len
                  : fstat(d->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    int want = env && *env ? strcmp(env, "0") != 0 : size >= CP_DEC_THREAD_MIN;
    if (!want)
        return;
    d->ring = cp__ring_new();
    if (!d->ring)
        return;
    /* The opening window becomes the first batch: a batch's size, so the
     * records of one batch stay about a megabyte. */
    uint8_t *b = realloc(d->buf, CP_DEC_BATCH_WINDOW);
    if (b) {
        d->buf = b;
        d->cap = CP_DEC_BATCH_WINDOW;
    }
    if (pthread_create(&d->thread, NULL, cp_dec_thread_main, d) != 0) {
        cp__ring_free(d->ring);
        d->ring = NULL;
        return;
    }
    pthread_setname_np(d->thread, "cp-decode");   /* for perf and top */
    d->threaded = 1;
}

/* The reader's side of the thread.  @return : as cp_dec_next_ref(). */
static int cp_dec_take(cp_dec *d, const cp_record **out)
{
    while (!d->cur || d->cur_i == d->cur->n) {
        if (d->stopped)
            return d->rc;
        if (d->cur && d->cur->last) {
            if (!d->joined) {
                pthread_join(d->thread, NULL);
                d->joined = 1;
            }
            return d->rc;
        }
        if (d->cur)
            cp__ring_put_free(d->ring, d->cur);
        d->cur = cp__ring_take_full(d->ring);
        d->cur_i = 0;
    }
    *out = &d->cur->recs[d->cur_i++];
    return 1;
}

int cp_dec_next_ref(cp_dec *d, const cp_record **out)
{
    int rc;
    if (d->threaded) {
        rc = cp_dec_take(d, out);
    } else {
        size_t hdr;
        uint64_t plen;
        rc = cp_dec_frame(d, &hdr, &plen);
        if (rc == 1)
            rc = cp_dec_parse(d, &d->one, hdr, plen);
        *out = &d->one;
    }
    if (rc != 1)
        return rc;
    if (cp__dec_noted((*out)->type) && cp__dec_note(&d->apis, &d->strings, &d->info, *out) < 0) {
        cp_dec_stop_thread(d);  /* before touching what it owns */
        return cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory",
                           (unsigned long long)(*out)->offset);
    }
    d->delivered++;
    return 1;
}

int cp_dec_next(cp_dec *d, cp_record *r)
{
    const cp_record *p;
    int rc = cp_dec_next_ref(d, &p);
    if (rc == 1)
        *r = *p;
    return rc;
}

/* ---- accessors ---------------------------------------------------------- */

const char *cp_dec_err(const cp_dec *d)
{
    return d->err;
}

int cp_dec_truncated(const cp_dec *d)
{
    return d->truncated;
}

uint64_t cp_dec_records(const cp_dec *d)
{
    return d->delivered;
}

const cp_trace_info *cp_dec_info(const cp_dec *d)
{
    return &d->info;
}

uint64_t cp_dec_file_offset(const cp_dec *d)
{
    if (d->threaded)
        return __atomic_load_n(&d->progress, __ATOMIC_RELAXED);
    return d->in_file_off + d->in_pos;
}

const char *cp_dec_api_name(const cp_dec *d, uint64_t id)
{
    return cp__idmap_get(&d->apis, id);
}

const char *cp_dec_string(const cp_dec *d, uint64_t id)
{
    return cp__idmap_get(&d->strings, id);
}

const char *cp_dec_path(const cp_dec *d)
{
    return d->path;
}
