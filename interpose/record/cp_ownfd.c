/*
 * cp_ownfd.c - the shim's own descriptors in the program (cp_ownfd.h).
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_ownfd.h"

/* Descriptors go CP_OWNFD_BELOW under the limit, at most CP_OWNFD_CEIL. */
#define CP_OWNFD_CEIL 1024
#define CP_OWNFD_BELOW 32

int cp_ownfd_high(int fd)
{
    struct rlimit rl;
    if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return fd;
    rlim_t top = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > CP_OWNFD_CEIL ? CP_OWNFD_CEIL
                                                                             : rl.rlim_cur;
    /* A limit this small leaves no room above the program's own. */
    if (top < 2 * CP_OWNFD_BELOW || (rlim_t)fd >= top - CP_OWNFD_BELOW)
        return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - CP_OWNFD_BELOW));
    if (nfd < 0)
        return fd;
    close(fd);
    return nfd;
}

struct cp_ownfd_id cp_ownfd_id(int fd)
{
    struct stat st;
    struct cp_ownfd_id id = {0, 0};
    if (fd >= 0 && fstat(fd, &st) == 0) {
        id.dev = (uint64_t)st.st_dev;
        id.ino = (uint64_t)st.st_ino;
    }
    return id;
}

int cp_ownfd_check(int fd, const struct cp_ownfd_id *id)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        return CP_OWNFD_CLOSED;
    return (uint64_t)st.st_dev == id->dev && (uint64_t)st.st_ino == id->ino ? CP_OWNFD_OURS
                                                                              : CP_OWNFD_REPLACED;
}

void cp_ownfd_close(int *fd, const struct cp_ownfd_id *id)
{
    if (*fd >= 0 && cp_ownfd_check(*fd, id) == CP_OWNFD_OURS)
        close(*fd);
    *fd = -1;
}
