/*
 * cp_tfile.c - the trace file's bytes: appends, the reserve kept ahead, the
 * places a reader can stop at, and the frames that end a file on a full
 * file system (cp_tfile.h says how they look); the descriptor's guard.
 * Writer thread only, or a fatal-signal handler holding the writer's output
 * lock: every call here is async-signal-safe (write, pwrite, fallocate,
 * ftruncate, fstat, open, fcntl, lseek).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_io.h"
#include "cp_ownfd.h"
#include "cp_tfile.h"

/* Blocks kept allocated ahead of the end: extended by CP_TF_CHUNK whenever
 * less than CP_TF_LOW is left, so fallocate runs about once per 48 KiB of
 * compressed output, never on a hook.  A SIGKILLed process leaves at most
 * CP_TF_CHUNK allocated past its end (the length is the real one). */
#define CP_TF_LOW (16u << 10)
#define CP_TF_CHUNK (64u << 10)

/* A hand-made frame: magic, Frame_Header_Descriptor (Content_Checksum_flag
 * only), Window_Descriptor 0 (1 KiB window, so blocks up to 1 KiB), one raw
 * last block, the checksum. */
#define CP_TF_FRAME_OVER 13u
/* The skippable frame that holds room for the END frame. */
#define CP_TF_PAD_BYTES (CP_TF_FINAL_MAX + CP_TF_FRAME_OVER - 8u)
/* What ending at a point needs after it, at most. */
#define CP_TF_STOP_NEED (CP_TF_FRAME_OVER + CP_TF_FINAL_MAX + 8u + CP_TF_PAD_BYTES)

/* ---- XXH64 ------------------------------------------------------------------ */

#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static uint64_t rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);   /* x86-64 and arm64 Linux: little-endian */
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t xxh_round(uint64_t acc, uint64_t in)
{
    return rotl(acc + in * P2, 31) * P1;
}

static uint64_t xxh_merge(uint64_t h, uint64_t v)
{
    return (h ^ xxh_round(0, v)) * P1 + P4;
}

static void xxh_reset(cp_xxh64 *s)
{
    memset(s, 0, sizeof *s);
    s->v[0] = P1 + P2;
    s->v[1] = P2;
    s->v[2] = 0;
    s->v[3] = -P1;
}

static void xxh_stripe(cp_xxh64 *s, const uint8_t *p)
{
    for (int i = 0; i < 4; i++)
        s->v[i] = xxh_round(s->v[i], rd64(p + 8 * i));
}

static void xxh_update(cp_xxh64 *s, const uint8_t *p, size_t n)
{
    s->total += n;
    if (s->memsize + n < 32) {
        memcpy(s->mem + s->memsize, p, n);
        s->memsize += (uint32_t)n;
        return;
    }
    if (s->memsize) {
        size_t k = 32 - s->memsize;
        memcpy(s->mem + s->memsize, p, k);
        xxh_stripe(s, s->mem);
        p += k;
        n -= k;
        s->memsize = 0;
    }
    for (; n >= 32; p += 32, n -= 32)
        xxh_stripe(s, p);
    memcpy(s->mem, p, n);
    s->memsize = (uint32_t)n;
}

static uint64_t xxh_digest(const cp_xxh64 *s)
{
    uint64_t h;
    if (s->total >= 32) {
        h = rotl(s->v[0], 1) + rotl(s->v[1], 7) + rotl(s->v[2], 12) + rotl(s->v[3], 18);
        for (int i = 0; i < 4; i++)
            h = xxh_merge(h, s->v[i]);
    } else {
        h = s->v[2] + P5;
    }
    h += s->total;
    const uint8_t *p = s->mem, *e = s->mem + s->memsize;
    for (; e - p >= 8; p += 8)
        h = rotl(h ^ xxh_round(0, rd64(p)), 27) * P1 + P4;
    if (e - p >= 4) {
        h = rotl(h ^ (uint64_t)rd32(p) * P1, 23) * P2 + P3;
        p += 4;
    }
    for (; p < e; p++)
        h = rotl(h ^ *p * P5, 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

/* ---- the descriptor ------------------------------------------------------ */

/* The trace opened again by its name: only the same file (device, inode),
 * never through a link planted under its name (O_NOFOLLOW) nor a FIFO
 * (O_NONBLOCK: no wait for a reader).  Not O_APPEND: the end of a trace on
 * a full file system writes at an earlier offset (cp_tf_stop), where
 * Linux's pwrite would append.  @return : the descriptor, positioned at
 * t->off, or -errno (-ESTALE: another file has the name now). */
static int cp_tf_reopen(const cp_tfile *t)
{
    struct stat st;
    int fd, rc = 0;
    if (!t->path || t->path[0] != '/')
        return -ENOENT;
    do
        fd = open(t->path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode) || cp_ownfd_check(fd, &t->id) != CP_OWNFD_OURS)
        rc = -ESTALE;
    else if (fcntl(fd, F_SETFL, 0) != 0 || lseek(fd, (off_t)t->off, SEEK_SET) != (off_t)t->off)
        rc = -errno;
    if (rc < 0) {
        close(fd);
        return rc;
    }
    return cp_ownfd_high(fd);
}

/* Before anything touches t->fd: is it still the trace file?  If the
 * program closed it or put another file at its number, that number is the
 * program's from now on (never written, cut or closed by us) and the trace
 * is opened again.  One fstat: the writer calls this at its flushes and
 * writes, never a hook.  @return : 0 (t->fd is the trace), or -EBADF
 * (given up: t->fd_gone, t->fd_gone_err). */
int cp_tf_guard(cp_tfile *t)
{
    if (t->fd < 0)
        return -EBADF;
    int how = cp_ownfd_check(t->fd, &t->id);
    if (how == CP_OWNFD_OURS)
        return 0;
    int fd = cp_tf_reopen(t);
    t->fd_event_no = t->fd;
    if (fd < 0) {
        t->fd = -1;
        t->fd_gone = how;
        t->fd_gone_err = -fd;
        return -EBADF;
    }
    t->fd = fd;
    t->fd_event = how;
    return 0;
}

int cp_tf_fd_event(cp_tfile *t, int *how, int *old_fd, int *new_fd)
{
    if (!t->fd_event)
        return 0;
    *how = t->fd_event;
    *old_fd = t->fd_event_no;
    *new_fd = t->fd;
    t->fd_event = 0;
    return 1;
}

void cp_tf_release(cp_tfile *t)
{
    cp_ownfd_close(&t->fd, &t->id);
}

/* ---- the file ------------------------------------------------------------- */

/* Allocate [off, off + CP_TF_CHUNK) without changing the length, or, when
 * the file system has less room than that, [off, off + CP_TF_STOP_NEED):
 * what ending the file at off takes, so that the file goes on taking what
 * fits (a point at off is then a safe one, and the next point asks again).
 * @return : 0, -ENOSPC / -EDQUOT when not even that fits, or 0 with
 * no_prealloc set when the file system cannot (NFS, some FUSE): the final
 * records then go where the last block has room, best effort. */
static int cp_tf_reserve(cp_tfile *t, uint64_t off)
{
    static const unsigned sizes[] = {CP_TF_CHUNK, CP_TF_STOP_NEED};
    if (t->no_prealloc)
        return 0;
    for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int rc;
        do
            rc = fallocate(t->fd, FALLOC_FL_KEEP_SIZE, (off_t)off, sizes[i]);
        while (rc < 0 && errno == EINTR);
        if (rc == 0) {
            t->alloc_end = off + sizes[i];
            return 0;
        }
        if (errno != ENOSPC && errno != EDQUOT) {
            t->no_prealloc = 1;
            return 0;
        }
    }
    return -errno;
}

void cp_tf_open(cp_tfile *t, int fd, uint64_t off, const char *path)
{
    memset(t, 0, sizeof *t);
    t->id = cp_ownfd_id(fd);
    t->fd = cp_ownfd_high(fd);
    t->path = path;
    t->off = off;
    xxh_reset(&t->h);
    t->good.off = off;
    t->good.h = t->h;
    /* A file system already full at open: the first flush will tell. */
    if (cp_tf_reserve(t, off) == 0 || t->alloc_end)
        t->safe = t->good;
}

void cp_tf_content(cp_tfile *t, const void *p, size_t n)
{
    xxh_update(&t->h, p, n);
}

int cp_tf_write(cp_tfile *t, const void *p, size_t n)
{
    int rc = cp_tf_guard(t);
    if (rc == 0)
        rc = cp__write_all(t->fd, p, n);
    /* Closed after the guard looked: opened again at t->off, the whole
     * buffer goes there (what part of it was written is rewritten). */
    if (rc == -EBADF && cp_tf_guard(t) == 0)
        rc = cp__write_all(t->fd, p, n);
    /* A short write moved the offset too: pwrite and the cut at the end
     * use offsets of their own, so only the count matters here. */
    if (rc == 0)
        t->off += n;
    return rc;
}

int cp_tf_point(cp_tfile *t, int frame_end, uint64_t prev_ts, uint64_t records,
                uint64_t in_bytes)
{
    if (frame_end)
        xxh_reset(&t->h);
    cp_tpoint p = {.off = t->off, .in_frame = !frame_end, .h = t->h, .prev_ts = prev_ts,
                   .records = records, .in_bytes = in_bytes};
    t->good = p;
    int rc = 0;
    if (t->off + CP_TF_LOW > t->alloc_end && (rc = cp_tf_guard(t)) == 0)
        rc = cp_tf_reserve(t, t->off);
    if (rc == -EBADF)
        return rc;
    if (t->no_prealloc || t->off + CP_TF_STOP_NEED <= t->alloc_end)
        t->safe = p;
    return rc;
}

const cp_tpoint *cp_tf_stop_point(const cp_tfile *t, int i)
{
    if (i == 0)
        return &t->good;
    if (i == 1 && t->safe.off && t->safe.off != t->good.off)
        return &t->safe;
    return NULL;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A raw last block of recs and the checksum of everything in its frame
 * (h: what came before in the frame).  @return : bytes written at q. */
static size_t cp_tf_last_block(uint8_t *q, cp_xxh64 h, const uint8_t *recs, size_t len)
{
    /* Block_Header: Last_Block 1, Block_Type 0 (raw), Block_Size. */
    put_le(q, 1u | (uint32_t)len << 3, 3);
    memcpy(q + 3, recs, len);
    xxh_update(&h, recs, len);
    put_le(q + 3 + len, xxh_digest(&h), 4);
    return 3 + len + 4;
}

/* A frame of its own holding recs.  @return : bytes written at q. */
static size_t cp_tf_frame(uint8_t *q, const uint8_t *recs, size_t len)
{
    static const uint8_t head[6] = {0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x00};
    cp_xxh64 h;
    xxh_reset(&h);
    memcpy(q, head, sizeof head);
    return sizeof head + cp_tf_last_block(q + sizeof head, h, recs, len);
}

static int cp_tf_pwrite(int fd, const uint8_t *p, size_t n, uint64_t off)
{
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        p += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

static int cp_tf_truncate(int fd, uint64_t len)
{
    int rc;
    do
        rc = ftruncate(fd, (off_t)len);
    while (rc < 0 && errno == EINTR);
    return rc < 0 ? -errno : 0;
}

int cp_tf_stop(cp_tfile *t, const cp_tpoint *pt, const uint8_t *recs, size_t len)
{
    uint8_t b[CP_TF_STOP_NEED];
    if (len > CP_TF_FINAL_MAX)
        return -E2BIG;
    size_t n = pt->in_frame ? cp_tf_last_block(b, pt->h, recs, len) : cp_tf_frame(b, recs, len);
    /* The padding: a skippable frame (magic 0x184D2A50, u32 size) whose
     * bytes are the room the END frame is written into at exit. */
    put_le(b + n, 0x184D2A50u, 4);
    put_le(b + n + 4, CP_TF_PAD_BYTES, 4);
    memset(b + n + 8, 0, CP_TF_PAD_BYTES);
    size_t all = n + 8 + CP_TF_PAD_BYTES;
    int rc = cp_tf_guard(t);
    if (rc == 0)
        rc = cp_tf_pwrite(t->fd, b, all, pt->off);
    if (rc < 0)
        return rc;
    /* Cut what came after (a failed write's part): the file is whole now,
     * whatever happens to the process next. */
    rc = cp_tf_truncate(t->fd, pt->off + all);
    if (rc < 0)
        return rc;
    t->off = pt->off + all;
    t->end_off = pt->off + n;
    t->end_room = 8 + CP_TF_PAD_BYTES;
    return 0;
}

int cp_tf_end(cp_tfile *t, const uint8_t *recs, size_t len)
{
    uint8_t b[CP_TF_FRAME_OVER + CP_TF_FINAL_MAX];
    if (!t->end_room || len > CP_TF_FINAL_MAX)
        return -EINVAL;
    size_t n = cp_tf_frame(b, recs, len);
    int rc = cp_tf_guard(t);
    if (rc == 0)
        rc = cp_tf_pwrite(t->fd, b, n, t->end_off);
    if (rc == 0)
        rc = cp_tf_truncate(t->fd, t->end_off + n);
    t->off = t->end_off + n;   /* cp_tf_cut must not grow it back */
    t->end_room = 0;
    return rc;
}

void cp_tf_close(cp_tfile *t)
{
    if (cp_tf_guard(t) < 0)
        return;
    /* Truncating to the length frees blocks allocated past it (ext4, xfs,
     * tmpfs); a file system that keeps them only keeps <= CP_TF_CHUNK. */
    if (t->alloc_end > t->off)
        cp_tf_truncate(t->fd, t->off);
    close(t->fd);
    t->fd = -1;
}
