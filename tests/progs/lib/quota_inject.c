/*
 * quota_inject.c - a disk quota for trace files, without quota tools or
 * root (tests/sh/writer_quota.sh): preloaded, it makes write, pwrite and
 * fallocate on files named *.trace fail with EDQUOT once they would take
 * blocks beyond CP_QUOTA_BYTES, as a file system with a quota does.
 * Bytes already allocated (fallocate ahead, as the shim's writer keeps)
 * stay writable, as on a real file system.  Other files are untouched.
 * The calls go to the kernel through syscall(): no dlsym, so the order of
 * the preloaded libraries does not matter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define QI_FDS 1024

static uint64_t qi_alloc_end[QI_FDS];   /* bytes allocated so far, per fd */

static int qi_is_trace(int fd)
{
    char link[64], path[4096];
    if (fd < 0 || fd >= QI_FDS)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 6)
        return 0;
    path[n] = 0;
    return strcmp(path + n - 6, ".trace") == 0;
}

/* Whether [.., end) needs blocks beyond the quota. */
static int qi_over(int fd, uint64_t end)
{
    const char *q = getenv("CP_QUOTA_BYTES");
    if (!q || !qi_is_trace(fd))
        return 0;
    uint64_t quota = strtoull(q, NULL, 10);
    if (end <= quota || end <= qi_alloc_end[fd])
        return 0;
    errno = EDQUOT;
    return 1;
}

static void qi_took(int fd, uint64_t end)
{
    if (fd >= 0 && fd < QI_FDS && end > qi_alloc_end[fd])
        qi_alloc_end[fd] = end;
}

ssize_t write(int fd, const void *buf, size_t n)
{
    off_t off = lseek(fd, 0, SEEK_CUR);
    if (off >= 0 && qi_over(fd, (uint64_t)off + n))
        return -1;
    ssize_t r = syscall(SYS_write, fd, buf, n);
    if (r > 0 && off >= 0)
        qi_took(fd, (uint64_t)off + (uint64_t)r);
    return r;
}

static ssize_t qi_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (qi_over(fd, (uint64_t)off + n))
        return -1;
    ssize_t r = syscall(SYS_pwrite64, fd, buf, n, off);
    if (r > 0)
        qi_took(fd, (uint64_t)off + (uint64_t)r);
    return r;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return qi_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off)
{
    return qi_pwrite(fd, buf, n, off);
}

static int qi_fallocate(int fd, int mode, off_t off, off_t len)
{
    if (qi_over(fd, (uint64_t)off + (uint64_t)len))
        return -1;
    long r = syscall(SYS_fallocate, fd, mode, off, len);
    if (r == 0)
        qi_took(fd, (uint64_t)off + (uint64_t)len);
    return (int)r;
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
    return qi_fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
    return qi_fallocate(fd, mode, off, len);
}
