/*
 * cp_outfile.c - private, whole output files (cp_outfile.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_outfile.h"

FILE *cp_outfile_open(const char *path, char **tmp)
{
    size_t n = strlen(path) + 8;
    char *name = malloc(n);
    *tmp = NULL;
    if (!name) {
        errno = ENOMEM;
        return NULL;
    }
    snprintf(name, n, "%s.XXXXXX", path);
    int fd = mkstemp(name);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    if (!f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(name);
        }
        free(name);
        errno = e;
        return NULL;
    }
    *tmp = name;
    return f;
}

int cp_outfile_commit(FILE *f, char *tmp, const char *path, int rc)
{
    errno = 0;
    if (f && (ferror(f) | fclose(f)) && rc == 0)
        rc = -(errno ? errno : EIO);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    return rc;
}
