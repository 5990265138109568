/*
 * cp_outpath.c - the trace file: the CUPROBE_OUTPUT pattern expanded (%p
 * pid, %h host, %r rank, %l local rank, %t local time, %% a percent sign)
 * and the file created under that name, or name.N.  Part of the writer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_rec.h"
#include "cp_writer.h"

/* The first of the variables launchers set for a process's rank (%r) or
 * local rank (%l): torchrun, Slurm, Open MPI, then PMI (MPICH, Intel MPI). */
static const char *const cp_rank_vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK",
                                            "PMI_RANK", NULL };
static const char *const cp_local_vars[] = { "LOCAL_RANK", "SLURM_LOCALID",
                                             "OMPI_COMM_WORLD_LOCAL_RANK", NULL };

/* The rank of this process from vars, or "norank-PID" when none is set: a
 * launcher, or a helper outside the job, must not take the name of rank 0. */
static const char *cp_rank_of(const char *const *vars, char *tmp, size_t cap)
{
    for (size_t i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return v;
    }
    snprintf(tmp, cap, "norank-%d", (int)getpid());
    return tmp;
}

/* Copy s into the file name, keeping only characters safe in a name. */
static int cp_path_put(char **p, char *end, const char *s)
{
    for (; *s; s++) {
        if (*p >= end)
            return -ENAMETOOLONG;
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
        *(*p)++ = ok ? c : '_';
    }
    return 0;
}

int cp__output_path(const char *pat, char *buf, size_t cap)
{
    char *p = buf, *end = buf + cap - 1;
    char tmp[256];
    for (; *pat; pat++) {
        if (*pat != '%' || !pat[1]) {
            if (p >= end)
                return -ENAMETOOLONG;
            *p++ = *pat;
            continue;
        }
        const char *s = tmp;
        switch (*++pat) {
        case 'p':
            snprintf(tmp, sizeof tmp, "%d", (int)getpid());
            break;
        case 'h':
            if (gethostname(tmp, sizeof tmp) < 0)
                strcpy(tmp, "unknown");
            tmp[sizeof tmp - 1] = 0;
            break;
        case 'r':
            s = cp_rank_of(cp_rank_vars, tmp, sizeof tmp);
            break;
        case 'l':
            s = cp_rank_of(cp_local_vars, tmp, sizeof tmp);
            break;
        case 't': {
            time_t now = time(NULL);
            struct tm tm;
            localtime_r(&now, &tm);
            strftime(tmp, sizeof tmp, "%Y%m%d-%H%M%S", &tm);
            break;
        }
        case '%':
            s = "%";
            break;
        default: {  /* unknown: keep it literally, and say so once */
            static int warned;
            if (!warned) {
                warned = 1;
                cp_log(1, "CUPROBE_OUTPUT: unknown escape '%%%c' is not expanded (known: %%p "
                          "pid, %%h host, %%r rank, %%t time, %%%% a percent sign)", *pat);
            }
            snprintf(tmp, sizeof tmp, "%%%c", *pat);
            break;
        }
        }
        int rc = *pat == '%' ? (p < end ? (*p++ = '%', 0) : -ENAMETOOLONG)
                             : cp_path_put(&p, end, s);
        if (rc < 0)
            return rc;
    }
    *p = 0;
    return 0;
}

/* "x.trace" -> "x.N.trace", anything else -> "x.N". */
static int cp_alt_path(const char *path, unsigned n, char *buf, size_t cap)
{
    size_t len = strlen(path);
    const char *ext = ".trace";
    size_t el = strlen(ext);
    int r;
    if (len > el && strcmp(path + len - el, ext) == 0)
        r = snprintf(buf, cap, "%.*s.%u%s", (int)(len - el), path, n, ext);
    else
        r = snprintf(buf, cap, "%s.%u", path, n);
    return r < 0 || (size_t)r >= cap ? -ENAMETOOLONG : 0;
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

/* O_EXCL never overwrites (nor follows a planted symlink); when the name
 * is taken (same pid after an exec, or an old trace) pick name.N.  The
 * name used is left in path, absolute. */
int cp__output_create(const char *pattern, char *path, size_t cap)
{
    char want[PATH_MAX];
    int rc = cp__output_path(pattern, want, sizeof want);
    if (rc < 0) {
        snprintf(path, cap, "%s", pattern);
        return rc;
    }
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    snprintf(path, cap, "%s", want);
    for (unsigned n = 1; n < 1000; n++) {
        int fd = open(path, flags, 0600);
        if (fd >= 0) {
            if (n > 1)
                cp_log(strstr(pattern, "%p") ? 2 : 1,
                       "trace file '%s' exists; writing '%s'", want, path);
            cp_path_absolute(path, cap);
            return fd;
        }
        if (errno != EEXIST)
            return -errno;
        if (cp_alt_path(want, n, path, cap) < 0)
            return -ENAMETOOLONG;
    }
    return -EEXIST;
}
