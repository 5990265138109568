/*
 * cp_outpath.c - the trace file's name: the CUPROBE_OUTPUT pattern expanded
 * (%p pid, %h host, %r rank, %l local rank, %t local time, %% a percent
 * sign).  Part of the writer, which creates the file.
 */
#include <errno.h>
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

