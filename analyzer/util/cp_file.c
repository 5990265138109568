/*
 * cp_file.c - opening the analyzer's inputs and outputs (see cp_file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_file.h"

static int cp_file_streamable(mode_t m)
{
    return S_ISFIFO(m) || S_ISSOCK(m) || S_ISCHR(m);
}

int cp_file_open_in(const char *path, int flags, mode_t *mode)
{
    int fd;
    if ((flags & CP_FILE_STREAM) && strcmp(path, "-") == 0) {
        /* Our own descriptor: closing it leaves standard input alone. */
        fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
    } else {
        /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for
         * a writer, which may never come. */
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    }
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (mode)
        *mode = st.st_mode;
    if (!S_ISREG(st.st_mode) &&
        !((flags & CP_FILE_STREAM) && cp_file_streamable(st.st_mode))) {
        close(fd);
        return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
    }
    /* Reads block from here on: a regular file's always end, and a stream
     * is what the caller asked for. */
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

const char *cp_file_kind(mode_t m)
{
    return S_ISREG(m) ? "a regular file" : S_ISDIR(m) ? "a directory"
         : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket"
         : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : "a special file";
}

int cp_file_is_stream(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") == 0)
        return 1;
    return stat(path, &st) == 0 && cp_file_streamable(st.st_mode);
}

/* A buffer of at least this size is mapped rather than malloc'd, with the
 * kernel asked for huge pages on it: a summary of thousands of processes
 * is tens of MB, read in with a fault per 2 MiB instead of one per page. */
#define CP_FBUF_MAP_MIN (4u << 20)

static char *cp_fbuf_alloc(size_t size, size_t *mapped)
{
    *mapped = 0;
    if (size >= CP_FBUF_MAP_MIN) {
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            /* Advice only: where it is refused, the pages are small. */
            madvise(m, size, MADV_HUGEPAGE);
            *mapped = size;
            return m;
        }
    }
    return malloc(size);
}

void cp_fbuf_free(cp_fbuf *b)
{
    if (b->mapped)
        munmap(b->p, b->mapped);
    else
        free(b->p);
    memset(b, 0, sizeof *b);
}

int cp_file_read_all(int fd, const void *head, size_t n_head, cp_fbuf *out)
{
    /* A regular file's size is known: one buffer of it (and a byte more,
     * where the read that finds the end goes), not a doubling of copies. */
    struct stat st;
    size_t cap = n_head + 65536, n = n_head;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < SIZE_MAX / 4)
        cap = n_head + (size_t)st.st_size + 1;
    cp_fbuf b = { 0 };
    memset(out, 0, sizeof *out);
    if (!(b.p = cp_fbuf_alloc(cap + 1, &b.mapped)))
        return -ENOMEM;
    if (n_head)
        memcpy(b.p, head, n_head);
    for (;;) {
        if (n == cap) {
            /* Past what fstat said (a stream, a file still being written):
             * malloc'd from here on, doubling. */
            char *nb = cap > (SIZE_MAX - 1) / 2 ? NULL
                       : b.mapped ? malloc(2 * cap + 1) : realloc(b.p, 2 * cap + 1);
            if (!nb) {
                cp_fbuf_free(&b);
                return -ENOMEM;
            }
            if (b.mapped) {
                memcpy(nb, b.p, n);
                munmap(b.p, b.mapped);
                b.mapped = 0;
            }
            b.p = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b.p + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            cp_fbuf_free(&b);
            return -e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b.p[n] = 0;
    b.len = n;
    *out = b;
    return 0;
}
