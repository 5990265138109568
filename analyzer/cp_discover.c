/*
 * cp_discover.c - a file, a directory or nothing, into the files of one run
 * (cp_discover.h).  Nothing here blocks on what it opens: a manifest is
 * opened O_NONBLOCK and read only when it is a regular file, and only
 * regular files are taken from a directory (a FIFO named x.trace is not a
 * trace).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cp_decode.h"
#include "cp_discover.h"
#include "cp_file.h"

#define CP_MANIFEST ".cuprobe-last-run"
#define CP_MANIFEST_MAX (64u << 20)

static int cp_found_add(cp_found *f, const char *dir, const char *name)
{
    char **v = realloc(f->paths, (f->n + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    f->paths = v;
    size_t len = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    if (!(v[f->n] = malloc(len)))
        return -ENOMEM;
    snprintf(v[f->n], len, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
    f->n++;
    return 0;
}

/* In a sticky directory (/tmp) anyone may write a manifest: one of another
 * user's there names their run, not ours. */
static int cp_manifest_foreign(const char *cmd, const char *path, const char *dir,
                               const struct stat *st)
{
    struct stat ds;
    if (st->st_uid == geteuid() || stat(dir, &ds) != 0 || !(ds.st_mode & S_ISVTX))
        return 0;
    if (cmd)
        fprintf(stderr, "%s: %s belongs to another user in a shared directory: not read\n",
                cmd, path);
    return 1;
}

/* The manifest of dir, NUL-terminated (free it), or NULL: none, not a
 * regular file (never waited on), or another user's in a sticky directory
 * (said, with cmd's name, unless cmd is NULL). */
static char *cp_manifest_read(const char *cmd, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, CP_MANIFEST);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0)
        goto out;
    if (!S_ISREG(st.st_mode)) {
        if (cmd)
            fprintf(stderr, "%s: %s: %s, not a regular file: ignored\n", cmd, path,
                    cp_file_kind(st.st_mode));
        goto out;
    }
    if (st.st_size > CP_MANIFEST_MAX || cp_manifest_foreign(cmd, path, dir, &st) || !(buf = malloc((size_t)st.st_size + 1)))
        goto out;
    size_t got = 0;
    ssize_t r;
    while (got < (size_t)st.st_size &&
           ((r = read(fd, buf + got, (size_t)st.st_size - got)) > 0 || (r < 0 && errno == EINTR)))
        got += r > 0 ? (size_t)r : 0;
    buf[got] = 0;
out:
    close(fd);
    return buf;
}

/* The run id of a trace's HEADER.  @return : 0, or -1 when no HEADER
 * decodes (the trace is kept: its own error says what is wrong). */
static int cp_trace_run_id(const char *path, uint64_t *id)
{
    const char *err;
    cp_dec *d = cp_dec_open(path, &err);
    if (!d)
        return -1;
    cp_record r;
    int ok = cp_dec_next(d, &r) == 1 && r.type == CP_REC_HEADER;
    if (ok)
        *id = r.u.header.run_id;
    cp_dec_close(d);
    return ok ? 0 : -1;
}

/* Whether dir/name is a regular file; a FIFO, a device or a socket there
 * would hold the reader forever, and is said (with cmd's name) and left. */
static int cp_is_regular(const char *cmd, const char *dir, const char *name)
{
    char path[8192];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (lstat(path, &st) != 0)
        return 0;
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
        fprintf(stderr, "%s: %s: %s, not a regular file: skipped\n", cmd, path,
                cp_file_kind(st.st_mode));
    return S_ISREG(st.st_mode);
}

/* One manifest line after its keyword: "PID N WALL_NS" of an exit or a
 * signal. */
static int cp_reaped_add(cp_found *f, uint64_t run_id, const char *rest, int signal)
{
    unsigned long long pid, wall;
    int v;
    if (sscanf(rest, "%llu %d %llu", &pid, &v, &wall) != 3)
        return 0;
    cp_reaped *r = realloc(f->reaped, (f->n_reaped + 1) * sizeof *r);
    if (!r)
        return -ENOMEM;
    f->reaped = r;
    r[f->n_reaped++] = (cp_reaped){ .run_id = run_id, .pid = pid, .wall_ns = wall,
                                    .signo = signal ? v : 0, .code = signal ? 0 : v };
    return 0;
}

/* dir's manifest: its statuses into f, and with traces != 0 its traces of
 * the run it names.  @return : the traces added (0..), -1 without a
 * manifest, -ENOMEM. */
static long cp_manifest_load(const char *cmd, const char *dir, int traces, cp_found *f)
{
    char *m = cp_manifest_read(traces ? cmd : NULL, dir);
    if (!m || strncmp(m, "cuprobe-run ", 12) != 0) {
        free(m);
        return -1;   /* none, or an old list of names: read the directory */
    }
    uint64_t run = 0;
    long added = 0;
    int rc = 0;
    for (char *line = m, *next; line && *line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char *sp = strchr(line, ' ');
        if (!sp)
            continue;
        *sp++ = 0;
        if (strcmp(line, "run-id") == 0) {
            run = strtoull(sp, NULL, 16);
        } else if (strcmp(line, "exit") == 0 || strcmp(line, "signal") == 0) {
            rc = cp_reaped_add(f, run, sp, line[0] == 's');
        } else if (strcmp(line, "trace") == 0 && traces && !strchr(sp, '/') &&
                   cp_is_regular(cmd, dir, sp)) {
            char path[8192];
            uint64_t id;
            snprintf(path, sizeof path, "%s/%s", dir, sp);
            if (cp_trace_run_id(path, &id) == 0 && id != run) {
                fprintf(stderr, "%s: %s: not from the last run of %s (run %016llx, the "
                        "manifest's %016llx): left out\n", cmd, path, dir,
                        (unsigned long long)id, (unsigned long long)run);
                continue;
            }
            rc = cp_found_add(f, dir, sp);
            added++;
        }
    }
    free(m);
    return rc < 0 ? rc : added;
}

static int cp_str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular *.trace in dir, sorted.  @return : the count, or -errno. */
static long cp_dir_traces(const char *cmd, const char *dir, cp_found *f)
{
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    size_t before = f->n;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > 6 && strcmp(e->d_name + l - 6, ".trace") == 0 &&
            cp_is_regular(cmd, dir, e->d_name))
            rc = cp_found_add(f, dir, e->d_name);
    }
    closedir(d);
    qsort(f->paths + before, f->n - before, sizeof *f->paths, cp_str_cmp);
    return rc < 0 ? rc : (long)(f->n - before);
}

static int cp_reaped_cmp(const void *a, const void *b)
{
    const cp_reaped *x = a, *y = b;
    if (x->run_id != y->run_id)
        return x->run_id < y->run_id ? -1 : 1;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->wall_ns < y->wall_ns ? -1 : x->wall_ns > y->wall_ns;
}

int cp_discover(const char *cmd, char *const *args, size_t n, cp_found *out)
{
    char *const dot[] = { "." };
    if (n == 0) {
        args = dot;
        n = 1;
    }
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            /* A file: itself, and the statuses its directory's manifest has. */
            char dir[4096] = ".";
            const char *slash = strrchr(args[i], '/');
            if (slash)
                snprintf(dir, sizeof dir, "%.*s", slash == args[i] ? 1 : (int)(slash - args[i]),
                         args[i]);
            if (cp_manifest_load(cmd, dir, 0, out) == -ENOMEM ||
                cp_found_add(out, NULL, args[i]) != 0)
                goto nomem;
            continue;
        }
        long k = cp_manifest_load(cmd, args[i], 1, out);
        if (k == -ENOMEM)
            goto nomem;
        if (k == 0) {
            fprintf(stderr, "%s: %s: the last `cuprobe run` here (.cuprobe-last-run) left no "
                    "trace of its own\n", cmd, args[i]);
            return -1;
        }
        if (k > 0)
            continue;
        k = cp_dir_traces(cmd, args[i], out);
        if (k == -ENOMEM)
            goto nomem;
        if (k <= 0) {
            fprintf(stderr, "%s: %s: %s\n", cmd, args[i],
                    k < 0 ? strerror((int)-k) : "no traces here (*.trace) and no "
                    ".cuprobe-last-run from `cuprobe run`");
            return -1;
        }
    }
    if (out->n_reaped)
        qsort(out->reaped, out->n_reaped, sizeof *out->reaped, cp_reaped_cmp);
    return 0;
nomem:
    fprintf(stderr, "%s: out of memory\n", cmd);
    return -1;
}

const cp_reaped *cp_found_reaped(const cp_found *f, uint64_t run_id, uint64_t pid,
                                 uint64_t wall_ns)
{
    /* The first entry of (run_id, pid) at or after wall_ns, by bisection. */
    size_t lo = 0, hi = f->n_reaped;
    cp_reaped key = { .run_id = run_id, .pid = pid, .wall_ns = wall_ns };
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp_reaped_cmp(&f->reaped[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < f->n_reaped && f->reaped[lo].run_id == run_id && f->reaped[lo].pid == pid)
        return &f->reaped[lo];
    return NULL;
}

void cp_found_free(cp_found *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->paths[i]);
    free(f->paths);
    free(f->reaped);
    memset(f, 0, sizeof *f);
}
