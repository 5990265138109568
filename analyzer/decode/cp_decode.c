/*
 * cp_decode.c - the streaming trace reader: file prefix, record framing and
 * the decoder thread.  The decompressed window (file input, zstd frames and
 * their checksums, errors) lives in cp_decode_window.c, field layouts in
 * cp_decode_fields.c, the id -> name tables in cp_decode_note.c.
 *
 * Records are parsed in place in the decompressed window `buf`
 * (cp_decode_window.c refills it when the next record is not complete in
 * it).
 *
 * A trace file of CP_DEC_THREAD_MIN bytes or more is decoded on a thread
 * of its own (decompression, framing and fields: a large share of a
 * report), so the reader's thread only runs the model and the checks.  The
 * thread fills batches (cp_decode_ring.c): each owns the window its records
 * point into, so a refill starts a new batch instead of moving bytes that
 * records handed out still point at.  Names and header facts are noted
 * as records are handed out, on the reader's thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "cp_decode.h"
#include "cp_decode_int.h"
#include "cp_decode_note.h"
#include "cp_file.h"
#include "cp_grow.h"
#include "cp_varint.h"

static _Thread_local char g_open_err[600];  /* traces open on several threads */

static void cp_dec_maybe_thread(cp_dec *d);

/* ---- opening ------------------------------------------------------------ */

static cp_dec *cp_dec_new(const char *path)
{
    /* Aligned: the decoder thread's and the reader's fields sit on cache
     * lines of their own (cp_decode_int.h). */
    cp_dec *d = aligned_alloc(_Alignof(cp_dec), sizeof *d);
    if (!d)
        return NULL;
    memset(d, 0, sizeof *d);
    d->fd = -1;
    d->path = strdup(path ? path : "(trace)");
    d->dctx = ZSTD_createDCtx();
    d->cap = CP_DEC_WINDOW;
    d->buf = cp__dec_window(NULL, d->cap);
    if (!d->path || !d->dctx || !d->buf) {
        cp_dec_close(d);
        return NULL;
    }
    return d;
}

static int cp_check_prefix(const char *path, const uint8_t *p, size_t n, const char **err)
{
    static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
    if (n == 0) {
        snprintf(g_open_err, sizeof g_open_err, "%s: not a cuprobe trace: the file is empty",
                 path);
    } else if (memcmp(p, CP_TRACE_MAGIC, n < 8 ? n : 8) != 0) {
        snprintf(g_open_err, sizeof g_open_err,
                 "%s: not a cuprobe trace: file byte 0 is not the magic \"CUPROBE\"%s", path,
                 n >= 4 && memcmp(p, elf, 4) == 0 ? " (an ELF file)" : "");
    } else if (n < CP_TRACE_PREFIX_BYTES) {
        snprintf(g_open_err, sizeof g_open_err,
                 "%s: not a cuprobe trace: only %zu bytes, the prefix needs %u",
                 path, n, CP_TRACE_PREFIX_BYTES);
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
    mode_t mode = 0;
    int fd = cp_file_open_in(path, 0, &mode);
    if (fd < 0) {
        if (fd == -EISDIR)
            snprintf(g_open_err, sizeof g_open_err, "%s: is a directory, not a trace file",
                     path);
        else if (fd == -EINVAL)
            snprintf(g_open_err, sizeof g_open_err, "%s: %s, not a regular file: skipped",
                     path, cp_file_kind(mode));
        else
            snprintf(g_open_err, sizeof g_open_err, "%s: %s", path, strerror(-fd));
        *err = g_open_err;
        return NULL;
    }
    return cp_dec_open_fd(fd, path, NULL, 0, err);
}

cp_dec *cp_dec_open_fd(int fd, const char *name, const void *head, size_t n_head,
                       const char **err)
{
    uint8_t pre[CP_TRACE_PREFIX_BYTES];
    size_t got = n_head < sizeof pre ? n_head : sizeof pre;
    if (got)
        memcpy(pre, head, got);
    while (got < sizeof pre) {
        ssize_t r = read(fd, pre + got, sizeof pre - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (cp_check_prefix(name, pre, got, err) < 0) {
        close(fd);
        return NULL;
    }
    cp_dec *d = cp_dec_new(name);
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
    /* Bytes read past the prefix (a stream cannot be read twice) are the
     * first input. */
    if (n_head > CP_TRACE_PREFIX_BYTES) {
        size_t k = n_head - CP_TRACE_PREFIX_BYTES;
        if (k > d->in_cap)
            k = d->in_cap;
        memcpy(d->in, (const uint8_t *)head + CP_TRACE_PREFIX_BYTES, k);
        d->in_len = k;
    }
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
    cp__dec_stop_thread(d);
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
    cp__dec_scratch_free(&d->rscratch);
    cp__dec_names_free(&d->names);
    free(d);
}

/* ---- records ------------------------------------------------------------ */

static int cp_dec_truncated_at(cp_dec *d, uint64_t off)
{
    return cp__dec_fail(d, 1, "at decompressed byte %llu: truncated after %llu records "
                             "(no END record: the process was killed or the file cut)",
                       (unsigned long long)off, (unsigned long long)d->nrec);
}

/* Bring the next record's bytes into the window: its header is *hdr bytes,
 * its payload *plen.  @return : 1, 0 at a clean end, < 0 on error. */
static int cp_dec_frame_slow(cp_dec *d, size_t *hdr, uint64_t *plen)
{
    if (d->state == CP_DS_ERR)
        return d->rc;
    int rc = cp__dec_fill(d, 1 + CP_VARINT_MAX);
    if (rc < 0)
        return rc;
    uint64_t off = d->base + d->pos;
    if (d->len == d->pos) {
        if (d->state == CP_DS_END && d->mid_frame)
            return cp__dec_fail(d, 1, "at file byte %llu: the file ends inside its last zstd "
                                     "frame (started at file byte %llu), after the END "
                                     "record: the file was cut short",
                               (unsigned long long)cp_dec_file_offset(d),
                               (unsigned long long)d->frame_off);
        if (d->state == CP_DS_END)
            return 0;
        return cp_dec_truncated_at(d, off);
    }
    if (d->state == CP_DS_END)
        return cp__dec_fail(d, 0, "at decompressed byte %llu: data after the END record",
                           (unsigned long long)off);

    const uint8_t *p = d->buf + d->pos + 1, *e = d->buf + d->len;
    unsigned type = d->buf[d->pos];
    if (cp_get_u(&p, e, plen)) {
        if (rc == 0 && e - p < CP_VARINT_MAX)
            return cp_dec_truncated_at(d, off);
        return cp__dec_fail(d, 0, "at decompressed byte %llu: bad record length", (unsigned long long)off);
    }
    if (type == 0)
        return cp__dec_fail(d, 0, "at decompressed byte %llu: record type 0 (not a record)",
                           (unsigned long long)off);
    if (*plen > CP_DEC_MAX_RECORD)
        return cp__dec_fail(d, 0, "at decompressed byte %llu: record length %llu exceeds the %u-byte limit",
                           (unsigned long long)off, (unsigned long long)*plen,
                           CP_DEC_MAX_RECORD);
    *hdr = (size_t)(p - (d->buf + d->pos));
    rc = cp__dec_fill(d, *hdr + (size_t)*plen);
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
/* Inline: once per record on the decoder thread, where a call cost as much
 * as the framing. */
static inline __attribute__((always_inline)) int
cp_dec_parse(cp_dec *d, cp_record *r, size_t hdr, uint64_t plen)
{
    uint64_t off = d->base + d->pos;
    unsigned type = d->buf[d->pos];
    const uint8_t *p = d->buf + d->pos + hdr, *e = p + plen;
    uint64_t delta, tid;
    /* The record is whole in the window, which has slack after it. */
    if (!(p = cp__get_u_slack(p, &delta)) || !(p = cp__get_u_slack(p, &tid)) || p > e)
        return cp__dec_fail(d, 0, "at decompressed byte %llu: %s record too short for its time and thread",
                           (unsigned long long)off, cp_rec_type_name(type));
    if (d->nrec == 0 && type != CP_REC_HEADER)
        return cp__dec_fail(d, 0, "at decompressed byte %llu: first record is %s, not HEADER",
                           (unsigned long long)off, cp_rec_type_name(type));
    /* The parser writes every EV field of a record that has them. */
    if (!cp_rec_has_ev(type))
        memset(&r->ev, 0, sizeof r->ev);
    r->type = type;
    r->ts = d->prev_ts += delta;
    r->tid = tid;
    r->offset = off;
    r->payload = p;
    r->payload_len = (size_t)(e - p);
    const char *why = "";
    int frc = cp__dec_fields_fast(&d->scratch, r, &why);
    if (frc < 0)
        return cp__dec_fields_fail(d, frc, off, type, why, plen);
    d->pos += hdr + (size_t)plen;
    d->nrec++;
    if (type == CP_REC_END)
        d->state = CP_DS_END;
    return 1;
}

/* Bytes of a record of each type that hold its fields: the prefix, EV and
 * the type's member of the union (0: an unknown type, all of them).  The
 * rest of the union is never read for that type: copying it to the
 * reader cost both threads memory bandwidth (COPY needs 160 of 240).
 * offset, payload and payload_len come after the union: a lean record
 * (cp_dec_lean_records()) goes without them. */
#define CP_REC_BYTES_(N, id, l, shape, doc) \
    [id] = offsetof(cp_record, u) + sizeof(((cp_record *)0)->u.l),
static const uint8_t cp_rec_bytes[256] = { CP_RECORDS(CP_REC_BYTES_) };
_Static_assert(offsetof(cp_record, offset) >= offsetof(cp_record, u) + sizeof(((cp_record *)0)->u),
               "offset, payload and payload_len follow every member of the union");

/* Per record type (a byte on the wire): what the decoder thread does
 * beyond parsing, from cp__batch_has_arrays() and cp__dec_noted(), so the
 * common record costs one load and one branch instead of eight compares. */
enum { CP_DEC_ARRAYS = 1, CP_DEC_NOTED = 2 };
static uint8_t g_dec_extra[256];
/* The bytes the decoder thread copies of each type: all (0) of records
 * that keep their offset (unknown types, and the ones with names or arrays:
 * the reader's own error messages name their offset), or cp_rec_bytes. */
static uint8_t g_rec_lean[256];
static const uint8_t g_rec_whole[256];  /* every record whole */
/* The lean records parsed straight into their slot (cp__dec_fields_direct()):
 * known types with nothing to keep or note (LAUNCH_COUNT among them: a
 * sixth of a training run's records). */
static uint8_t g_rec_direct[256];
static const uint8_t g_rec_none[256];
__attribute__((constructor)) static void cp_dec_extra_init(void)
{
    for (unsigned t = 0; t < 256; t++) {
        g_dec_extra[t] = (uint8_t)((cp__batch_has_arrays(t) ? CP_DEC_ARRAYS : 0) |
                                   (cp__dec_noted(t) ? CP_DEC_NOTED : 0));
        g_rec_lean[t] = g_dec_extra[t] ? 0 : cp_rec_bytes[t];
        g_rec_direct[t] = g_rec_lean[t] != 0;
    }
}

/* A lean record whose type g_rec_direct[] allows, the (b->n)th of batch b:
 * parsed straight into its slot, or in a raw batch left for the reader to
 * frame and parse again with nothing written (cp_decode_defer.c).  Its
 * time and thread are decoded here either way: the time accumulates, and
 * a record without them fails here (cp_dec_parse()), so the reader's
 * framing of a raw record cannot.  @return : 1, or 0 when it does not
 * parse that way: cp_dec_parse() then parses it again from the start (and
 * names what is wrong), nothing of d changed. */
static inline __attribute__((always_inline)) int
cp_dec_lean(cp_dec *d, cp_batch *b, unsigned type, size_t hdr, uint64_t plen)
{
    const uint8_t *p = d->buf + d->pos + hdr, *e = p + plen;
    uint64_t delta, tid;
    if (!(p = cp__get_u_slack(p, &delta)) || !(p = cp__get_u_slack(p, &tid)) || p > e)
        return 0;
    uint64_t ts = d->prev_ts + delta;
    if (!b->raw) {
        cp_record *slot = &b->recs[b->n];
        if (cp__dec_fields_direct(type, p, e, slot) < 0)
            return 0;
        slot->type = type;
        slot->ts = ts;
        slot->tid = tid;
    }
    d->prev_ts = ts;
    d->pos += hdr + (size_t)plen;
    d->nrec++;
    return 1;
}

/* The decoder thread's common case (cp__dec_lean_run()), its position,
 * count and time in registers: through d and b they would be stored and
 * loaded again at every record.  Only
 * while d->state is CP_DS_OK and a record was taken: none of the records
 * it takes ends the stream or is the first. */
static inline __attribute__((always_inline)) void
cp_dec_lean_run(cp_dec *d, cp_batch *b, const uint8_t *direct)
{
    size_t pos = d->pos;
    uint64_t ts = d->prev_ts;
    size_t k = cp__dec_lean_run(d->buf, &pos, d->len, b->recs, b->n, b->recs_cap, &ts, b->raw,
                                direct);
    d->pos = pos;
    d->prev_ts = ts;
    d->nrec += k;
    b->n += k;
}

static int g_lean;

void cp_dec_lean_records(int on)
{
    __atomic_store_n(&g_lean, on, __ATOMIC_RELAXED);
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
    d->fill->raw = d->defer == CP_DEFER_ALL;
    d->fill->ts0 = d->prev_ts;
    d->fill->base = d->base;
    d->buf_in_ring = 1;
    const uint8_t *rec_bytes = d->lean ? g_rec_lean : g_rec_whole;
    const uint8_t *direct = d->direct;
    for (;;) {
        size_t hdr;
        uint64_t plen;
        if (direct != g_rec_none && d->state == CP_DS_OK && d->nrec)
            cp_dec_lean_run(d, d->fill, direct);
        rc = cp_dec_frame(d, &hdr, &plen);
        if (rc != 1)
            break;
        /* Framing may have started a new batch: only now is it known. */
        cp_batch *b = d->fill;
        if (b->n == b->recs_cap &&
            cp_grow((void **)&b->recs, &b->recs_cap, b->n + 1, sizeof *b->recs, 1024)) {
            rc = cp__dec_fail(d, 0, "at decompressed byte %llu: out of memory",
                             (unsigned long long)(d->base + d->pos));
            break;
        }
        unsigned type = d->buf[d->pos];
        if (direct[type] && d->nrec && cp_dec_lean(d, b, type, hdr, plen)) {
            b->n++;
            continue;
        }
        /* Parsed here (the record's arrays and names need the whole of
         * it first), then copied into the batch. */
        _Alignas(16) cp_record one;
        rc = cp_dec_parse(d, &one, hdr, plen);
        if (rc < 0)
            break;
        unsigned extra = g_dec_extra[one.type & 255];
        if (__builtin_expect(extra != 0 || b->raw, 0)) {
            if (((extra & CP_DEC_ARRAYS) && cp__batch_keep_arrays(b, &one) < 0) ||
                ((extra & CP_DEC_NOTED) &&
                 cp_grow((void **)&b->noted, &b->noted_cap, b->n_noted + 1, sizeof *b->noted, 16)) ||
                (b->raw && cp_grow((void **)&b->slotted, &b->slotted_cap, b->n_slotted + 1,
                                   sizeof *b->slotted, 16))) {
                rc = cp__dec_fail(d, 0, "at decompressed byte %llu: out of memory",
                                 (unsigned long long)one.offset);
                break;
            }
            if (extra & CP_DEC_NOTED)
                b->noted[b->n_noted++] = b->n;
            if (b->raw)
                b->slotted[b->n_slotted++] = b->n;
        }
        size_t bytes = rec_bytes[one.type & 255];
        memcpy(&b->recs[b->n], &one, bytes ? bytes : sizeof one);
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
 * (CUPROBE_DECODE_THREAD: 0 never, 1 always, 2 always and every lean
 * record's fields parsed by the reader).  Falls back to decoding on
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
    d->lean = __atomic_load_n(&g_lean, __ATOMIC_RELAXED);
    d->defer = !d->lean || !cp__dec_fields_direct_ok() ? CP_DEFER_NONE
             : env && strcmp(env, "2") == 0 ? CP_DEFER_ALL : CP_DEFER_AUTO;
    d->direct = d->lean && cp__dec_fields_direct_ok() ? g_rec_direct : g_rec_none;
    d->ring = cp__ring_new();
    if (!d->ring)
        return;
    /* The opening window becomes the first batch: a batch's size, so the
     * records of one batch stay about a megabyte. */
    uint8_t *b = cp__dec_window(d->buf, CP_DEC_BATCH_WINDOW);
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

/* Note the names and facts of r, a record handed out.  @return : 0, or
 * d's failure (out of memory) with its thread stopped. */
static int cp_dec_note(cp_dec *d, const cp_record *r)
{
    if (cp__dec_note(&d->names, r) >= 0)
        return 0;
    cp__dec_stop_thread(d);  /* before touching what it owns */
    return cp__dec_fail(d, 0, "at decompressed byte %llu: out of memory",
                       (unsigned long long)r->offset);
}

int cp_dec_next_ref(cp_dec *d, const cp_record **out)
{
    int rc;
    if (d->threaded) {
        rc = cp__dec_take(d, out);
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
    if (cp__dec_noted((*out)->type) && (rc = cp_dec_note(d, *out)) < 0)
        return rc;
    d->delivered++;
    return 1;
}

int cp_dec_next_run(cp_dec *d, const cp_record **recs, size_t *n)
{
    if (!d->threaded) {
        *n = 1;
        return cp_dec_next_ref(d, recs);
    }
    const cp_record *r;
    int rc = cp__dec_take(d, &r);
    if (rc != 1)
        return rc;
    if (cp__dec_noted(r->type)) {
        /* A record with names or facts to note goes alone: noted before
         * anything after it is read. */
        if ((rc = cp_dec_note(d, r)) < 0)
            return rc;
        *n = 1;
    } else {
        /* The rest of the batch up to the next record to note: nothing to
         * do for each but hand it out. */
        const cp_batch *b = d->cur;
        size_t start = d->cur_i - 1, i = d->cur_i;
        while (d->cur_noted < b->n_noted && b->noted[d->cur_noted] < i)
            d->cur_noted++;
        i = d->cur_noted < b->n_noted ? b->noted[d->cur_noted] : b->n;
        if (i > d->cur_parsed)
            i = d->cur_parsed;      /* the rest of a raw batch is not parsed yet */
        d->cur_i = i;
        *n = i - start;
    }
    *recs = r;
    d->delivered += *n;
    return 1;
}

int cp_dec_next(cp_dec *d, cp_record *r)
{
    const cp_record *p = NULL;    /* set whenever rc is 1; gcc -flto cannot see it */
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
    return &d->names.info;
}

uint64_t cp_dec_file_offset(const cp_dec *d)
{
    if (d->threaded)
        return __atomic_load_n(&d->progress, __ATOMIC_RELAXED);
    return d->in_file_off + d->in_pos;
}

const char *cp_dec_api_name(const cp_dec *d, uint64_t id)
{
    return cp__dec_names_api(&d->names, id);
}

const char *cp_dec_string(const cp_dec *d, uint64_t id)
{
    return cp__dec_names_string(&d->names, id);
}

const char *cp_dec_path(const cp_dec *d)
{
    return d->path;
}

void cp_dec_spin_waits(int on)
{
    cp__ring_spin_waits(on);
}
