/*
 * cp_file.c - opening the analyzer's inputs and outputs (see cp_file.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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

int cp_file_read_all(int fd, const void *head, size_t n_head, char **buf, size_t *len)
{
    /* A regular file's size is known: one buffer of it (and a byte more,
     * where the read that finds the end goes), not a doubling of copies. */
    struct stat st;
    size_t cap = n_head + 65536, n = n_head;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size < SIZE_MAX / 2)
        cap = n_head + (size_t)st.st_size + 1;
    char *b = malloc(cap + 1);
    *buf = NULL;
    if (!b)
        return -ENOMEM;
    if (n_head)
        memcpy(b, head, n_head);
    for (;;) {
        if (n == cap) {
            char *nb = cap > ((size_t)-1 - 1) / 2 ? NULL : realloc(b, 2 * cap + 1);
            if (!nb) {
                free(b);
                return -ENOMEM;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            return -e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}
