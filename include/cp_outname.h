/*
 * cp_outname.h - trace file names: the CUPROBE_OUTPUT pattern's escapes (%p
 * pid, %h host, %r rank, %l local rank, %t local time, %% a percent sign)
 * and the names tried when one is taken.  The shim creates the files from
 * them; `cuprobe run` uses the same expansion to check -o before the program
 * starts and to name the root's file under -f.  Header-only: the front end
 * links nothing of the shim.
 */
#ifndef CP_OUTNAME_H
#define CP_OUTNAME_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The first of the variables launchers set for a process's rank (%r) or
 * local rank (%l): torchrun, Slurm, Open MPI, then PMI (MPICH, Intel MPI). */
static const char *const cp_outname_rank_vars[] = { "RANK", "SLURM_PROCID",
                                                    "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL };
static const char *const cp_outname_local_vars[] = { "LOCAL_RANK", "SLURM_LOCALID",
                                                     "OMPI_COMM_WORLD_LOCAL_RANK", NULL };

/* The rank from vars, or "norank-PID" when none is set: a launcher, or a
 * helper outside the job, must not take the name of rank 0. */
static inline const char *cp_outname_rank(const char *const *vars, long pid, char *tmp,
                                          size_t cap)
{
    for (size_t i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return v;
    }
    snprintf(tmp, cap, "norank-%ld", pid);
    return tmp;
}

/* Copy s into the name, keeping only characters safe in a file name. */
static inline int cp_outname_put(char **p, char *end, const char *s)
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

/*! cp_outname_expand() : the name pattern gives process pid at time now
 *  (%t), written into buf.  An unknown escape is kept as it is and, the
 *  first one, left in *unknown (0 when there is none).
 *  @return : 0, or -ENAMETOOLONG when the name does not fit cap. */
static inline int cp_outname_expand(const char *pat, long pid, time_t now, char *buf,
                                    size_t cap, char *unknown)
{
    char *p = buf, *end = buf + cap - 1;
    char tmp[256];
    *unknown = 0;
    for (; *pat; pat++) {
        if (*pat != '%' || !pat[1] || pat[1] == '%') {
            if (p >= end)
                return -ENAMETOOLONG;
            *p++ = *pat;
            pat += *pat == '%' && pat[1] == '%';
            continue;
        }
        const char *s = tmp;
        switch (*++pat) {
        case 'p':
            snprintf(tmp, sizeof tmp, "%ld", pid);
            break;
        case 'h':
            if (gethostname(tmp, sizeof tmp) < 0)
                strcpy(tmp, "unknown");
            tmp[sizeof tmp - 1] = 0;
            break;
        case 'r':
            s = cp_outname_rank(cp_outname_rank_vars, pid, tmp, sizeof tmp);
            break;
        case 'l':
            s = cp_outname_rank(cp_outname_local_vars, pid, tmp, sizeof tmp);
            break;
        case 't': {
            struct tm tm;
            localtime_r(&now, &tm);
            strftime(tmp, sizeof tmp, "%Y%m%d-%H%M%S", &tm);
            break;
        }
        default:   /* unknown: kept literally (the caller says so once) */
            if (!*unknown)
                *unknown = *pat;
            snprintf(tmp, sizeof tmp, "%%%c", *pat);
            break;
        }
        if (cp_outname_put(&p, end, s) < 0)
            return -ENAMETOOLONG;
    }
    *p = 0;
    return 0;
}

/*! cp_outname_has() : 1 when pat holds the escape %c (not as part of %%). */
static inline int cp_outname_has(const char *pat, char c)
{
    for (; *pat; pat++)
        if (*pat == '%' && pat[1]) {
            if (*++pat == c)
                return 1;
        }
    return 0;
}

/*! cp_outname_tagged() : "x.trace" -> "x.TAG.trace", any other name ->
 *  "name.TAG": the name tried when path is taken (TAG the pid when the
 *  pattern has no %p, then 1, 2...).
 *  @return : 0, or -ENAMETOOLONG. */
static inline int cp_outname_tagged(const char *path, const char *tag, char *buf, size_t cap)
{
    size_t len = strlen(path), el = sizeof ".trace" - 1;
    int r;
    if (len > el && strcmp(path + len - el, ".trace") == 0)
        r = snprintf(buf, cap, "%.*s.%s.trace", (int)(len - el), path, tag);
    else
        r = snprintf(buf, cap, "%s.%s", path, tag);
    return r < 0 || (size_t)r >= cap ? -ENAMETOOLONG : 0;
}

/*! cp_outname_kind() : what a file of mode m is, in words, when it is not
 *  a regular file ("a directory", "a symbolic link", "a FIFO", "a socket",
 *  "a device"): no trace, no manifest is written there.  NULL for a regular
 *  file. */
static inline const char *cp_outname_kind(mode_t m)
{
    return S_ISREG(m) ? NULL : S_ISDIR(m) ? "a directory" : S_ISLNK(m) ? "a symbolic link"
           : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : "a device";
}

#endif /* CP_OUTNAME_H */
