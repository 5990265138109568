/*
 * cp_front_manifest.c - DIR/.cuprobe-last-run, the run manifest: which
 * traces in DIR are the last run's, the run id they record, and how the
 * processes the front end reaped ended (docs/trace-format.md has the
 * format).  `cuprobe report` with no TRACE, or with DIR, reads it.
 *
 * It is bookkeeping: nothing about it may stop or hang the program, or touch
 * a file that is not ours.  It is written after the run, under a mkstemp()
 * name in the same directory (O_EXCL: never through a planted symlink), and
 * rename()d over the old manifest, which replaces a directory entry and
 * opens nothing (no FIFO to block on).  An entry that is not a regular file
 * (a directory, a symlink, a FIFO) is not ours to replace; one that another
 * user owns in a sticky directory cannot be.  Either way: one warning.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cp_front.h"
#include "cp_outname.h"

static void cp_manifest_body(FILE *f, uint64_t run_id, const cp_child *c, char **names,
                             size_t n)
{
    char host[256] = "";
    if (gethostname(host, sizeof host) < 0)
        host[0] = 0;
    host[sizeof host - 1] = 0;
    fprintf(f, "cuprobe-run 1\nrun-id %016llx\nhost %s\nroot %d\n", (unsigned long long)run_id,
            host, (int)c->pid);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "trace %s\n", names[i]);
    for (size_t i = 0; i < c->n_reaped; i++) {
        const cp_reaped *r = &c->reaped[i];
        int st = r->status;
        fprintf(f, "%s %d %d %llu\n", WIFSIGNALED(st) ? "signal" : "exit", (int)r->pid,
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                (unsigned long long)r->wall_ns);
    }
}

/* What the manifest's name holds when it is not ours to replace. */
static const char *cp_manifest_foreign(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 ? cp_outname_kind(st.st_mode) : NULL;
}

int cp_manifest_write(const char *dir, uint64_t run_id, const cp_child *c, char **names,
                      size_t n)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
    snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", CP_FRONT_MANIFEST);
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    const char *what = cp_manifest_foreign(path);
    if (what) {
        cp_front_warn("%s is %s, not cuprobe's: left as it is (report this run's traces by "
                      "name)", path, what);
        return -1;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        cp_front_warn("cannot record this run in %s: %s (report its traces by name)", path,
                      strerror(errno));
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    int err = 0;
    if (!f) {
        err = errno;
        close(fd);
    } else {
        cp_manifest_body(f, run_id, c, names, n);
        if (ferror(f))
            err = EIO;
        if (fclose(f) != 0 && !err)
            err = errno;
    }
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err) {
        unlink(tmp);
        cp_front_warn("cannot record this run in %s: %s (report its traces by name)", path,
                      strerror(err));
        return -1;
    }
    return 0;
}
