/*
 * cp_hostmem.c - host memory samples on the writer thread (cp_hostmem.h):
 * /proc/self/statm, /proc/meminfo and the memory cgroup's files, opened
 * once and read with pread; the pinned count kept from the drained ALLOC
 * and FREE records.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cp_env.h"
#include "cp_hostmem.h"
#include "cp_hostparse.h"
#include "cp_rec.h"

enum { CP_HM_W_STATM = 1, CP_HM_W_MEMINFO = 2, CP_HM_W_CGROUP = 4 };

void cp_hostmem_init(struct cp_hostmem *hm)
{
    memset(hm, 0, sizeof *hm);
    hm->fd_statm = hm->fd_meminfo = hm->fd_cg_max = hm->fd_cg_cur = -1;
}

/* ---- the pinned count ----------------------------------------------------- */

/* Page-locked host memory: what the driver pins for the process. */
static int cp_hm_pinned_kind(uint64_t kind)
{
    return kind == CP_MK_HOST_PINNED || kind == CP_MK_HOST_REGISTERED ||
           kind == CP_MK_VMM_HOST;
}

/* Just past the n-th end of a varint from p (a byte without the high bit
 * ends one), or NULL when [p, end) holds fewer: eight bytes a step. */
static const uint8_t *cp_hm_after_ends(const uint8_t *p, const uint8_t *end, unsigned n)
{
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, sizeof w);
        uint64_t m = ~w & 0x8080808080808080ull;   /* the high bit of each end byte */
        unsigned c = (unsigned)(((m >> 7) * 0x0101010101010101ull) >> 56);
        if (c >= n) {
            while (--n)
                m &= m - 1;     /* drop the ends before the n-th */
            return p + (__builtin_ctzll(m) >> 3) + 1;
        }
        n -= c;
        p += 8;
    }
    while (n && p < end)
        n -= !(*p++ & 0x80);
    return n ? NULL : p;
}

void cp_hostmem_note(struct cp_hostmem *hm, unsigned type, const uint8_t *f, uint32_t len)
{
    if (type != CP_REC_ALLOC && type != CP_REC_FREE)
        return;
    /* EV prefix (api, result, ctx, dev, stream, dur_ns, stack), then kind,
     * ptr, size: the same in ALLOC and FREE (include/cp_records.h). */
    const uint8_t *end = f + len, *p = cp_hm_after_ends(f, end, 7);
    /* This runs for every ALLOC and FREE the writer drains (under a
     * stream-ordered allocator, two per tensor) and pinned memory is rare:
     * the kind (the 8th field; every pinned kind fits one byte) decides
     * before anything is decoded. */
    if (!p || p >= end || (*p & 0x80) || !cp_hm_pinned_kind(*p))
        return;
    p = f;
    uint64_t v[10];
    for (unsigned i = 0; i < 10; i++)
        if (cp_get_u(&p, end, &v[i]) != 0)
            return;
    uint64_t result = v[1], kind = v[7], size = v[9];
    if (result != 0 || !cp_hm_pinned_kind(kind))
        return;
    if (type == CP_REC_ALLOC)
        hm->pinned += size;
    else   /* size 0: a free of something never seen allocated */
        hm->pinned -= size <= hm->pinned ? size : hm->pinned;
}

/* ---- the files ---------------------------------------------------------------- */

static int cp_hm_open(const char *path)
{
    int fd;
    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* A file kept open for every sample: moved out of the program's way
 * (cp_ownfd_high), its identity in *id. */
static int cp_hm_keep(const char *path, struct cp_ownfd_id *id)
{
    int fd = cp_ownfd_high(cp_hm_open(path));
    *id = cp_ownfd_id(fd);
    return fd;
}

/* The text of fd (from offset 0) into buf, NUL-terminated.  @return : its
 * length, or a negative errno. */
static ssize_t cp_hm_read(int fd, char *buf, size_t cap)
{
    if (fd < 0)
        return -EBADF;
    ssize_t n;
    do
        n = pread(fd, buf, cap - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    buf[n] = 0;
    return n;
}

/* A cgroup value file under dir ("" when dir is the mount's root). */
static int cp_hm_cg_file(const char *base, const char *dir, const char *name, uint64_t *v)
{
    char path[PATH_MAX], buf[64];
    if (snprintf(path, sizeof path, "%s%s/%s", base, dir, name) >= (int)sizeof path)
        return -ENAMETOOLONG;
    int fd = cp_hm_open(path);
    if (fd < 0)
        return -errno;
    ssize_t n = cp_hm_read(fd, buf, sizeof buf);
    close(fd);
    return n < 0 ? (int)n : cp_hp_limit(buf, (size_t)n, v);
}

/* The memory cgroup whose limit binds the process: the lowest limit among
 * its own cgroup and its ancestors (Slurm and systemd put the limit on a
 * job or slice above the process's own cgroup), else its own cgroup.  In
 * a container whose /sys/fs/cgroup is its own cgroup, the path from
 * /proc/self/cgroup is not under the mount: the walk up ends at the
 * mount's root, which is that cgroup. */
static void cp_hm_open_cgroup(struct cp_hostmem *hm)
{
    const struct cp_config *cfg = cp_config();
    char path[PATH_MAX], buf[4096], own[sizeof hm->cg_path], dir[sizeof hm->cg_path];
    int v1 = 0;
    snprintf(path, sizeof path, "%s/self/cgroup", cfg->procfs_root);
    int fd = cp_hm_open(path);
    ssize_t n = fd < 0 ? -errno : cp_hm_read(fd, buf, sizeof buf);
    if (fd >= 0)
        close(fd);
    if (n < 0 || cp_hp_cgroup(buf, (size_t)n, &v1, own, sizeof own) < 0)
        return;
    const char *limit = v1 ? "memory.limit_in_bytes" : "memory.max";
    const char *usage = v1 ? "memory.usage_in_bytes" : "memory.current";
    /* v2 alone is mounted at fs/cgroup; on a hybrid system at fs/cgroup/unified. */
    static const char *const v2_bases[] = {"/fs/cgroup", "/fs/cgroup/unified"};
    static const char *const v1_bases[] = {"/fs/cgroup/memory"};
    const char *const *bases = v1 ? v1_bases : v2_bases;
    unsigned n_bases = v1 ? 1 : 2;
    for (unsigned b = 0; b < n_bases; b++) {
        char base[PATH_MAX], found[sizeof dir] = "", bound[sizeof dir] = "";
        uint64_t best = 0, lim;
        int any = 0;
        snprintf(base, sizeof base, "%s%s", cfg->sysfs_root, bases[b]);
        snprintf(dir, sizeof dir, "%s", strcmp(own, "/") == 0 ? "" : own);
        for (;;) {
            uint64_t cur;
            if (cp_hm_cg_file(base, dir, usage, &cur) == 0 && !any) {
                any = 1;   /* the deepest cgroup visible: the process's own */
                snprintf(found, sizeof found, "%s", dir);
            }
            if (cp_hm_cg_file(base, dir, limit, &lim) == 0 && lim && (!best || lim < best)) {
                best = lim;
                snprintf(bound, sizeof bound, "%s", dir);
            }
            char *slash = strrchr(dir, '/');
            if (!slash)
                break;
            *slash = 0;   /* the parent; "" is the mount's root */
        }
        if (!any)
            continue;
        const char *use = best ? bound : found;
        snprintf(hm->cg_path, sizeof hm->cg_path, "%s", *use ? use : "/");
        if (snprintf(path, sizeof path, "%s%s/%s", base, use, limit) < (int)sizeof path)
            hm->fd_cg_max = cp_hm_keep(path, &hm->id_cg_max);
        if (snprintf(path, sizeof path, "%s%s/%s", base, use, usage) < (int)sizeof path)
            hm->fd_cg_cur = cp_hm_keep(path, &hm->id_cg_cur);
        return;
    }
}

static void cp_hm_open_all(struct cp_hostmem *hm)
{
    char path[PATH_MAX];
    hm->opened = 1;
    long ps = sysconf(_SC_PAGESIZE);
    hm->page_size = ps > 0 ? (uint64_t)ps : 4096;
    /* Always the real one: it is this process's own. */
    hm->fd_statm = cp_hm_keep("/proc/self/statm", &hm->id_statm);
    snprintf(path, sizeof path, "%s/meminfo", cp_config()->procfs_root);
    hm->fd_meminfo = cp_hm_keep(path, &hm->id_meminfo);
    cp_hm_open_cgroup(hm);
}

void cp_hostmem_forget(struct cp_hostmem *hm)
{
    cp_ownfd_close(&hm->fd_statm, &hm->id_statm);
    cp_ownfd_close(&hm->fd_meminfo, &hm->id_meminfo);
    cp_ownfd_close(&hm->fd_cg_max, &hm->id_cg_max);
    cp_ownfd_close(&hm->fd_cg_cur, &hm->id_cg_cur);
    cp_hostmem_init(hm);
}

void cp_hostmem_new_file(struct cp_hostmem *hm)
{
    hm->read_ns = hm->written_ns = 0;
    hm->info_written = 0;
}

/* ---- a sample ----------------------------------------------------------------- */

/* One LOG record per file that could not be read, once per image. */
static void cp_hm_warn(struct cp_hostmem *hm, unsigned bit, const char *what, int err,
                       uint64_t ts, cp__emit_fn emit, void *ctx)
{
    if (hm->warned & bit)
        return;
    hm->warned |= bit;
    char msg[256];
    int n = snprintf(msg, sizeof msg, "host memory: cannot read %s (%s); its values are 0 "
                     "in HOSTMEM/HOSTINFO", what, strerror(-err));
    if (n < 0)
        return;
    uint8_t f[CP_VARINT_MAX * 2 + sizeof msg];
    uint8_t *p = cp_enc_log(f, 1, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    emit(ctx, 0, CP_REC_LOG, ts, f, (uint32_t)(p - f));
}

static void cp_hm_read_all(struct cp_hostmem *hm, struct cp_hm_vals *v, uint64_t ts,
                           cp__emit_fn emit, void *ctx)
{
    char buf[8192];
    ssize_t n = cp_hm_read(hm->fd_statm, buf, sizeof buf);
    if (n < 0 || cp_hp_statm(buf, (size_t)n, hm->page_size, &v->rss, &v->rss_shared) != 0)
        cp_hm_warn(hm, CP_HM_W_STATM, "/proc/self/statm", n < 0 ? (int)n : -EINVAL, ts,
                   emit, ctx);
    n = cp_hm_read(hm->fd_meminfo, buf, sizeof buf);
    if (n < 0 || cp_hp_meminfo(buf, (size_t)n, &v->mem_total, &v->mem_available,
                               &v->swap_total) != 0)
        cp_hm_warn(hm, CP_HM_W_MEMINFO, "meminfo", n < 0 ? (int)n : -EINVAL, ts, emit, ctx);
    /* No cgroup (fd -1) is no failure: nothing limits the process. */
    if (hm->fd_cg_cur >= 0) {
        n = cp_hm_read(hm->fd_cg_cur, buf, sizeof buf);
        if (n < 0 || cp_hp_limit(buf, (size_t)n, &v->cg_usage) != 0)
            cp_hm_warn(hm, CP_HM_W_CGROUP, "the cgroup's memory usage", n < 0 ? (int)n : -EINVAL,
                       ts, emit, ctx);
    }
    if (hm->fd_cg_max >= 0 && (n = cp_hm_read(hm->fd_cg_max, buf, sizeof buf)) >= 0)
        cp_hp_limit(buf, (size_t)n, &v->cg_limit);
    v->pinned = hm->pinned;
}

/* Whether a value moved enough to be written again. */
static int cp_hm_moved(uint64_t a, uint64_t b)
{
    uint64_t d = a > b ? a - b : b - a, hi = a > b ? a : b;
    return d >= CP_HM_STEP_BYTES && d >= hi / 100;
}

void cp_hostmem_sample(struct cp_hostmem *hm, uint64_t now, uint64_t ts, cp__emit_fn emit,
                       void *ctx)
{
    if (hm->read_ns && now - hm->read_ns < CP_HM_READ_NS)
        return;
    int saved = errno;
    hm->read_ns = now;
    if (!hm->opened)
        cp_hm_open_all(hm);
    struct cp_hm_vals v = {0};
    cp_hm_read_all(hm, &v, ts, emit, ctx);
    struct cp_hm_vals *l = &hm->last;
    if (!hm->info_written || v.mem_total != l->mem_total || v.swap_total != l->swap_total ||
        v.cg_limit != l->cg_limit) {
        uint8_t f[CP_VARINT_MAX * 4 + sizeof hm->cg_path];
        uint8_t *p = cp_enc_hostinfo(f, v.mem_total, v.swap_total, v.cg_limit, hm->cg_path,
                                     strlen(hm->cg_path));
        emit(ctx, 0, CP_REC_HOSTINFO, ts, f, (uint32_t)(p - f));
        hm->info_written = 1;
        l->mem_total = v.mem_total, l->swap_total = v.swap_total, l->cg_limit = v.cg_limit;
    }
    if (!hm->written_ns || now - hm->written_ns >= CP_HM_BEAT_NS || v.pinned != l->pinned ||
        cp_hm_moved(v.rss, l->rss) || cp_hm_moved(v.rss_shared, l->rss_shared) ||
        cp_hm_moved(v.mem_available, l->mem_available) || cp_hm_moved(v.cg_usage, l->cg_usage)) {
        uint8_t f[CP_REC_BOUND(HOSTMEM)];
        uint8_t *p = cp_enc_hostmem(f, v.rss, v.rss_shared, v.pinned, v.mem_available,
                                    v.cg_usage);
        emit(ctx, 0, CP_REC_HOSTMEM, ts, f, (uint32_t)(p - f));
        hm->written_ns = now;
        l->rss = v.rss, l->rss_shared = v.rss_shared, l->pinned = v.pinned;
        l->mem_available = v.mem_available, l->cg_usage = v.cg_usage;
    }
    errno = saved;
}
