/*
 * cp_discover.h - which traces a command reads: "a file, a directory, or
 * nothing".  A file is itself; a directory (and nothing: the working
 * directory) stands for the last `cuprobe run` there: the traces its
 * manifest (.cuprobe-last-run, docs/trace-format.md) lists that record its
 * run id, whatever their names; without a manifest, every *.trace in it.
 * The manifest also tells how the processes `cuprobe run` reaped ended,
 * which a trace without an END record cannot.
 */
#ifndef CP_DISCOVER_H
#define CP_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

/* How a process ended, as its parent (`cuprobe run`) saw it. */
typedef struct cp_reaped {
    uint64_t run_id, pid;
    uint64_t wall_ns;       /* CLOCK_REALTIME when it was reaped */
    int signo;              /* > 0: it died of this signal */
    int code;               /* else: its exit status */
} cp_reaped;

typedef struct cp_found {
    char **paths;           /* the files to read, in order (malloc'd) */
    size_t n;
    cp_reaped *reaped;      /* from every manifest read */
    size_t n_reaped;
} cp_found;

/*! cp_discover() : the files args[0..n) stand for (n == 0: "."), into out
 *  (zeroed by the caller; free with cp_found_free, also on failure).  A
 *  manifest's trace of another run (a concurrent run in the directory, a
 *  file written over) is left out with a note on stderr; a directory with
 *  nothing to read is an error.  Messages start with "cmd: ".
 *  @return : 0, or -1 after printing why. */
int cp_discover(const char *cmd, char *const *args, size_t n, cp_found *out);

/*! cp_found_reaped() : the status reaped for pid of run run_id that was
 *  started (HEADER wall_ns) before it was reaped: a pid reaped earlier was
 *  another process.  @return : it, or NULL when unknown. */
const cp_reaped *cp_found_reaped(const cp_found *f, uint64_t run_id, uint64_t pid,
                                 uint64_t wall_ns);

/*! cp_found_free() : free what cp_discover() made. */
void cp_found_free(cp_found *f);

#endif /* CP_DISCOVER_H */
