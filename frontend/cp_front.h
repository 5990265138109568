/*
 * cp_front.h - `cuprobe`, the front end: `cuprobe run` starts a command
 * with the shim preloaded and stays as its parent; the other commands are
 * the analyzer's (cuprobe-analyze next to the shim).  One file per concept:
 *
 *   cp_front_main.c      the commands; finding the pieces (build tree,
 *                        source tree, installed prefix)
 *   cp_front_log.c       the front end's messages
 *   cp_front_opts.c      `run`'s options
 *   cp_front_output.c    the trace names: the pattern made absolute, checked,
 *                        and the run's files found afterwards
 *   cp_front_child.c     the command as a child: signals forwarded, statuses
 *                        of it and of every orphan it leaves (a subreaper)
 *   cp_front_manifest.c  the run manifest (DIR/.cuprobe-last-run)
 *   cp_front_run.c       `run` from start to end
 *
 * Uses include/ only; it never links the shim or the analyzer.
 */
#ifndef CP_FRONT_H
#define CP_FRONT_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#define CP_FRONT_MANIFEST ".cuprobe-last-run"

/* ---- cp_front_main.c ----------------------------------------------------- */

/* Where the pieces are. */
typedef struct cp_where {
    char lib[PATH_MAX];     /* the directory of libcuprobe.so and cuprobe-analyze, "" if none */
    char py[PATH_MAX];      /* the Python companion's directory, "" if none */
} cp_where;

/* ---- cp_front_log.c ------------------------------------------------------ */

/*! cp_front_log() : CUPROBE_LOG as the front end reads it (0..3, default 1):
 *  0 silences its closing line and its warnings, never a usage error. */
int cp_front_log(void);

/*! cp_front_warn() : "cuprobe: MESSAGE" on stderr when cp_front_log() >= 1. */
void cp_front_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- cp_front_opts.c ----------------------------------------------------- */

typedef struct cp_run_opts {
    const char *output;     /* -o PATTERN, NULL when not given */
    const char *flush_ms;   /* --flush-ms N, checked */
    int no_stacks, no_python;
    int attribute;          /* --attribute: CUPROBE_ATTRIBUTE=1 */
    int force;              /* -f: the root's name may replace an existing file */
    char **cmd;             /* CMD ARGS..., NULL-terminated */
} cp_run_opts;

/*! cp_run_parse() : `run`'s arguments (argv[0] is "run") into o.
 *  @return : 0; 1 after printing --help (exit 0); -1 after a usage error
 *  was printed (exit 2). */
int cp_run_parse(int argc, char **argv, cp_run_opts *o);

/*! cp_front_usage() : the front end's usage text, on f. */
void cp_front_usage(FILE *f);

/* ---- cp_front_output.c --------------------------------------------------- */

/* The run's trace names. */
typedef struct cp_outset {
    char pattern[PATH_MAX]; /* absolute CUPROBE_OUTPUT for every process */
    char dir[PATH_MAX];     /* its directory, "" when that holds an escape */
    const char *base;       /* the file name part, inside pattern */
    char glob[PATH_MAX];    /* fnmatch() form of base, escapes as '*' */
    char **before;          /* names in dir the pattern matched before the run, sorted */
    size_t n_before;
    char forced[PATH_MAX];  /* the root's name, removed under -f ("" when not) */
} cp_outset;

/*! cp_out_resolve() : the pattern (-o, else $CUPROBE_OUTPUT, else
 *  cuprobe-%p.trace) made absolute against the working directory and
 *  checked: a directory, a device or a missing directory is an error
 *  before anything runs (printed; @return -1).  Lists what is already
 *  there for cp_out_new().  @return : 0 or -1. */
int cp_out_resolve(cp_outset *s, const char *pattern);

/*! cp_out_force() : in the child, before exec: remove the file the root
 *  process (this pid) would be named, when it exists and is not a
 *  directory (-f); failures are left to the shim (it picks another name). */
void cp_out_force(const cp_outset *s);

/*! cp_out_forced_name() : in the parent: note the root's name for pid as
 *  replaced (-f), so that cp_out_new() counts it as this run's. */
void cp_out_forced_name(cp_outset *s, pid_t pid);

/*! cp_out_new() : the names in dir the pattern matches that were not there
 *  before (plus the -f name): this run's files, sorted.  *names is
 *  malloc'd (cp_out_free_names).  @return : the count, or -1. */
long cp_out_new(const cp_outset *s, char ***names);

/*! cp_out_free_names() / cp_out_release() : free a list; free s's lists. */
void cp_out_free_names(char **names, size_t n);
void cp_out_release(cp_outset *s);

/* ---- cp_front_child.c ---------------------------------------------------- */

/* How one process ended, as its parent saw it. */
typedef struct cp_reaped {
    pid_t pid;
    int status;             /* the wait status */
    uint64_t wall_ns;       /* CLOCK_REALTIME when it was reaped */
} cp_reaped;

typedef struct cp_child {
    pid_t pid;
    int status;             /* the root's wait status, once it ended */
    cp_reaped *reaped;      /* the root and every orphan reaped, in order */
    size_t n_reaped, cap_reaped;
} cp_child;

/*! cp_child_prepare() : before the fork: become a child subreaper and block
 *  the signals to forward (they are taken with sigwaitinfo).  The original
 *  mask is kept for the child.  @return : 0 or a negative errno. */
int cp_child_prepare(void);

/*! cp_child_restore() : in the child after fork: the signal mask the front
 *  end was started with. */
void cp_child_restore(void);

/*! cp_child_wait() : forward signals to c->pid until it ends, reaping every
 *  orphan that is reparented meanwhile (and those already dead after it).
 *  c->status is the root's wait status. */
void cp_child_wait(cp_child *c);

/*! cp_child_exit() : end the front end as the root ended: its exit code,
 *  or the same signal with the default action (no core dump of our own). */
void cp_child_exit(const cp_child *c) __attribute__((noreturn));

/* ---- cp_front_manifest.c ------------------------------------------------- */

/*! cp_manifest_write() : write DIR/.cuprobe-last-run for this run: its id,
 *  host, root pid, trace names and the statuses the front end reaped.
 *  Made under a mkstemp name in dir and rename()d over the old one; never
 *  through a symlink, never into a FIFO or a directory.
 *  @return : 0, or -1 after one warning (the run is not affected). */
int cp_manifest_write(const char *dir, uint64_t run_id, const cp_child *c, char **names,
                      size_t n);

/* ---- cp_front_run.c ------------------------------------------------------ */

/*! cp_run_main() : `cuprobe run`.  Does not return when the command ran
 *  (exits as it did).  @return : an exit status for a usage error (2) or a
 *  command that could not be started (126, 127). */
int cp_run_main(int argc, char **argv, const cp_where *w);

#endif /* CP_FRONT_H */
