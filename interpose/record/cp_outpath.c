/*
 * cp_outpath.c - the trace file: the CUPROBE_OUTPUT pattern expanded
 * (include/cp_outname.h) and the file created under that name, never over
 * an existing one.  Part of the writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cp_env.h"
#include "cp_outname.h"
#include "cp_rec.h"
#include "cp_writer.h"

int cp__output_path(const char *pat, char *buf, size_t cap)
{
    char unknown;
    int rc = cp_outname_expand(pat, (long)getpid(), time(NULL), buf, cap, &unknown);
    static int warned;
    if (unknown && !warned) {
        warned = 1;
        cp_log(1, "CUPROBE_OUTPUT: unknown escape '%%%c' is not expanded (known: %%p "
                  "pid, %%h host, %%r rank, %%l local rank, %%t time, %%%% a percent sign)",
               unknown);
    }
    return rc;
}

/* What the existing name is when it cannot be a trace file (a directory,
 * a device, a FIFO, a socket), else NULL: writing NAME.1 beside /dev/null
 * or / helps nobody (as root it created /dev/null.1). */
static const char *cp_not_a_file(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode))
        return NULL;
    return cp_outname_kind(st.st_mode);
}

/* Create path, never over an existing name.  @return : the fd, -EEXIST
 * when the name is taken, or another negative errno. */
static int cp_create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    return fd >= 0 ? fd : -errno;
}

/* path made absolute (the current directory before it) if it fits: the
 * writer opens the file again by this name when the program took its
 * descriptor, and unlinks it, maybe after the program changed directory. */
static void cp_path_absolute(char *path, size_t cap)
{
    char cwd[PATH_MAX];
    size_t n = strlen(path);
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        return;
    size_t c = strlen(cwd);
    if (c + 1 + n >= cap)
        return;
    memmove(path + c + 1, path, n + 1);
    memcpy(path, cwd, c);
    path[c] = '/';
}

/* O_EXCL never overwrites (nor follows a planted symlink).  When the name
 * is taken: a pattern without %p gets the pid (the other processes of a
 * run, or the root when an old trace has the name), then NAME.N (the same
 * pid after an exec).  The root's rename, and any without `cuprobe run`,
 * is announced: the name asked for is not the name written. */
static int cp_output_open(const char *pattern, char *path, size_t cap)
{
    char want[PATH_MAX], base[PATH_MAX], tag[24];
    int rc = cp__output_path(pattern, want, sizeof want);
    snprintf(path, cap, "%s", rc < 0 ? pattern : want);
    if (rc < 0)
        return rc;
    int fd = cp_create(path);
    if (fd != -EEXIST)
        return fd;
    const char *what = cp_not_a_file(want);
    if (what) {
        cp_log(1, "CUPROBE_OUTPUT names '%s', %s, not a trace file; tracing is off, the "
                  "program continues untraced", want, what);
        return -ECANCELED;
    }
    long root = cp_config()->root_pid;
    int has_pid = cp_outname_has(pattern, 'p');
    int level = has_pid || (root > 0 && root != (long)getpid()) ? 2 : 1;
    snprintf(base, sizeof base, "%s", want);
    if (!has_pid) {
        snprintf(tag, sizeof tag, "%d", (int)getpid());
        if (cp_outname_tagged(want, tag, base, sizeof base) < 0)
            return -ENAMETOOLONG;
        snprintf(path, cap, "%s", base);
        fd = cp_create(path);
    }
    for (unsigned n = 1; fd == -EEXIST && n < 1000; n++) {
        snprintf(tag, sizeof tag, "%u", n);
        if (cp_outname_tagged(base, tag, path, cap) < 0)
            return -ENAMETOOLONG;
        fd = cp_create(path);
    }
    if (fd >= 0)
        cp_log(level, "trace file '%s' exists; writing '%s'", want, path);
    return fd;
}

int cp__output_create(const char *pattern, char *path, size_t cap)
{
    int fd = cp_output_open(pattern, path, cap);
    if (fd >= 0)
        cp_path_absolute(path, cap);
    return fd;
}
