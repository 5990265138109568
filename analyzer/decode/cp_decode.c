/*
 * cp_decode.c - the streaming trace reader: file prefix, zstd frames, record
 * framing, error reporting and the id -> name tables.  Field layouts live in
 * cp_decode_fields.c.
 *
 * The decompressed stream is read through a window `buf`: records are
 * parsed in place and the window is refilled (the unread tail moved to the
 * front) when the next record is not complete in it.  A record larger than
 * the window grows it, up to CP_DEC_MAX_RECORD.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "cp_varint.h"

#define CP_DEC_WINDOW (1u << 20)
#define CP_DEC_MAX_RECORD (64u << 20)

/* id -> owned NUL-terminated text, open addressing. */
struct cp_idmap {
    uint64_t *keys;
    char **vals;
    size_t cap, n;
};

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
    struct cp_idmap apis, strings;
    cp_trace_info info;
};

static char g_open_err[600];

/* ---- id maps ------------------------------------------------------------ */

static size_t cp_idmap_slot(const struct cp_idmap *m, uint64_t id)
{
    size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
    while (m->vals[i] && m->keys[i] != id)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int cp_idmap_put(struct cp_idmap *m, uint64_t id, const char *s, size_t n)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct cp_idmap g = {0};
        g.cap = m->cap ? m->cap * 2 : 256;
        g.keys = calloc(g.cap, sizeof *g.keys);
        g.vals = calloc(g.cap, sizeof *g.vals);
        if (!g.keys || !g.vals) {
            free(g.keys);
            free(g.vals);
            return -ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->vals[i])
                continue;
            size_t j = cp_idmap_slot(&g, m->keys[i]);
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
        }
        g.n = m->n;
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    char *v = malloc(n + 1);
    if (!v)
        return -ENOMEM;
    memcpy(v, s, n);
    v[n] = 0;
    size_t i = cp_idmap_slot(m, id);
    if (m->vals[i])
        free(m->vals[i]);
    else
        m->n++;
    m->keys[i] = id;
    m->vals[i] = v;
    return 0;
}

static const char *cp_idmap_get(const struct cp_idmap *m, uint64_t id)
{
    return m->cap ? m->vals[cp_idmap_slot(m, id)] : NULL;
}

static void cp_idmap_free(struct cp_idmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->vals[i]);
    free(m->keys);
    free(m->vals);
}

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
    return d;
}

void cp_dec_close(cp_dec *d)
{
    if (!d)
        return;
    if (d->fd >= 0)
        close(d->fd);
    if (!d->mem)
        free(d->in);
    ZSTD_freeDCtx(d->dctx);
    free(d->buf);
    free(d->path);
    cp__dec_scratch_free(&d->scratch);
    cp_idmap_free(&d->apis);
    cp_idmap_free(&d->strings);
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

/* Make `need` bytes available at buf[pos].  @return : 1 when they are, 0 at
 * the end of the input, < 0 on error (d->err set). */
static int cp_fill(cp_dec *d, size_t need)
{
    while (d->len - d->pos < need) {
        if (d->pos && d->cap - d->pos < need + CP_DEC_WINDOW / 2) {
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

static char *cp_strndup0(cp_str s)
{
    char *p = malloc(s.n + 1);
    if (p) {
        memcpy(p, s.p, s.n);
        p[s.n] = 0;
    }
    return p;
}

/* Keep what later questions need: header facts, names, end facts. */
static int cp_dec_note(cp_dec *d, const cp_record *r)
{
    cp_trace_info *in = &d->info;
    switch (r->type) {
    case CP_REC_HEADER: {
        const typeof(r->u.header) *h = &r->u.header;
        in->pid = h->pid;
        in->ppid = h->ppid;
        in->wall_ns = h->wall_ns;
        in->root = h->root;
        in->page_size = h->page_size;
        in->start_ts = r->ts;
        in->header_seen = 1;
        free(in->host);
        free(in->exe);
        free(in->shim_version);
        free(in->cmdline);
        in->host = cp_strndup0(h->host);
        in->exe = cp_strndup0(h->exe);
        in->shim_version = cp_strndup0(h->shim_version);
        size_t n = 1;
        for (uint64_t i = 0; i < h->argc; i++)
            n += h->argv[i].n + 1;
        in->cmdline = malloc(n);
        if (!in->host || !in->exe || !in->shim_version || !in->cmdline)
            return -ENOMEM;
        char *p = in->cmdline;
        for (uint64_t i = 0; i < h->argc; i++) {
            if (i)
                *p++ = ' ';
            memcpy(p, h->argv[i].p, h->argv[i].n);
            p += h->argv[i].n;
        }
        *p = 0;
        return 0;
    }
    case CP_REC_API:
        return cp_idmap_put(&d->apis, r->u.api.api_id, r->u.api.elf_name.p,
                            r->u.api.elf_name.n);
    case CP_REC_STRING:
        return cp_idmap_put(&d->strings, r->u.string.id, r->u.string.text.p,
                            r->u.string.text.n);
    case CP_REC_LOST:
        in->lost += r->u.lost.records_lost;
        return 0;
    case CP_REC_END:
        in->end_seen = 1;
        in->end_reason = r->u.end.reason;
        in->end_status = r->u.end.status;
        in->end_records = r->u.end.records;
        in->end_dropped = r->u.end.dropped;
        return 0;
    default:
        return 0;
    }
}

static int cp_dec_truncated_at(cp_dec *d, uint64_t off)
{
    return cp_dec_fail(d, 1, "at decompressed byte %llu: truncated after %llu records "
                             "(no END record: the process was killed or the file cut)",
                       (unsigned long long)off, (unsigned long long)d->nrec);
}

int cp_dec_next(cp_dec *d, cp_record *r)
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
    uint64_t plen;
    if (cp_get_u(&p, e, &plen)) {
        if (rc == 0 && e - p < CP_VARINT_MAX)
            return cp_dec_truncated_at(d, off);
        return cp_dec_fail(d, 0, "at decompressed byte %llu: bad record length", (unsigned long long)off);
    }
    if (type == 0)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: record type 0 (not a record)",
                           (unsigned long long)off);
    if (plen > CP_DEC_MAX_RECORD)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: record length %llu exceeds the %u-byte limit",
                           (unsigned long long)off, (unsigned long long)plen,
                           CP_DEC_MAX_RECORD);
    size_t hdr = (size_t)(p - (d->buf + d->pos));
    rc = cp_fill(d, hdr + (size_t)plen);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return cp_dec_truncated_at(d, off);

    /* cp_fill may have moved the window. */
    p = d->buf + d->pos + hdr;
    e = p + plen;
    uint64_t delta, tid;
    if (cp_get_u(&p, e, &delta) || cp_get_u(&p, e, &tid))
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
    int frc = cp__dec_fields(&d->scratch, r, &why);
    if (frc == -2)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory", (unsigned long long)off);
    if (frc < 0)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: bad %s record: field '%s' does not fit "
                                 "in its %llu bytes",
                           (unsigned long long)off, cp_rec_type_name(type), why,
                           (unsigned long long)plen);
    if (cp_dec_note(d, r) < 0)
        return cp_dec_fail(d, 0, "at decompressed byte %llu: out of memory", (unsigned long long)off);
    d->pos += hdr + (size_t)plen;
    d->nrec++;
    if (type == CP_REC_END)
        d->state = CP_DS_END;
    return 1;
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
    return d->nrec;
}

const cp_trace_info *cp_dec_info(const cp_dec *d)
{
    return &d->info;
}

uint64_t cp_dec_file_offset(const cp_dec *d)
{
    return d->in_file_off + d->in_pos;
}

const char *cp_dec_api_name(const cp_dec *d, uint64_t id)
{
    return cp_idmap_get(&d->apis, id);
}

const char *cp_dec_string(const cp_dec *d, uint64_t id)
{
    return cp_idmap_get(&d->strings, id);
}

const char *cp_dec_path(const cp_dec *d)
{
    return d->path;
}
