/*
 * cp_io.h - the shim's one "write it all" helper (trace file, stderr).
 */
#ifndef CP_IO_H
#define CP_IO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/*! cp__write_all() : write(2) until done or a real error; async-signal-safe.
 *  @return : 0, or -errno. */
static inline int cp__write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

#endif /* CP_IO_H */
