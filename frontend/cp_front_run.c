/*
 * cp_front_run.c - `cuprobe run [OPTIONS] [--] CMD [ARGS...]` from start to
 * end: the options, the absolute trace pattern, a run id, the command as a
 * child with the shim preloaded (only there: the front end itself is never
 * traced), then the manifest and one line saying where the traces are.
 * The front end exits as the command did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cp_front.h"

/* A random id every trace of the run records (0 means "no run" to the
 * analyzer and UINT64_MAX "not recorded"). */
static uint64_t cp_run_id(void)
{
    uint64_t id = 0;
    if (getrandom(&id, sizeof id, GRND_NONBLOCK) != (ssize_t)sizeof id) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        id = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16);
    }
    return id == 0 || id == UINT64_MAX ? 0x9e3779b97f4a7c15ull : id;
}

/* Would execvp() find cmd?  Said here, not by a child, so that a typo gets
 * its own line and status 127 without a run around it. */
static int cp_cmd_found(const char *cmd)
{
    if (strchr(cmd, '/'))
        return access(cmd, F_OK) == 0;
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        size_t len = strcspn(p, ":");
        char full[PATH_MAX];
        struct stat st;
        snprintf(full, sizeof full, "%.*s%s%s", (int)len, len ? p : ".", len ? "/" : "/", cmd);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
            return 1;
        p += len;
        if (!*p)
            return 0;
    }
}

/* The environment every process of the run inherits. */
static int cp_run_env(const cp_run_opts *o, const cp_outset *s, const cp_where *w,
                      uint64_t run_id)
{
    char id[24];
    snprintf(id, sizeof id, "%016llx", (unsigned long long)run_id);
    int rc = setenv("CUPROBE_OUTPUT", s->pattern, 1) | setenv("CUPROBE_RUN_ID", id, 1);
    if (o->flush_ms)
        rc |= setenv("CUPROBE_FLUSH_MS", o->flush_ms, 1);
    if (o->no_stacks)
        rc |= setenv("CUPROBE_STACK_DEPTH", "0", 1);
    if (o->no_python)
        rc |= setenv("CUPROBE_PYTHON", "0", 1) | setenv("CUPROBE_FRAMEWORK", "0", 1);
    if (o->attribute)
        rc |= setenv("CUPROBE_ATTRIBUTE", "1", 1);
    const char *fw = getenv("CUPROBE_FRAMEWORK");
    if (w->py[0] && !(fw && strcmp(fw, "0") == 0)) {
        const char *old = getenv("PYTHONPATH");
        size_t n = strlen(w->py) + (old ? strlen(old) : 0) + 2;
        char *pp = malloc(n);
        if (!pp)
            return -1;
        snprintf(pp, n, "%s%s%s", w->py, old && *old ? ":" : "", old && *old ? old : "");
        rc |= setenv("PYTHONPATH", pp, 1);
        free(pp);
    }
    return rc ? -1 : 0;
}

/* The child: the shim preloaded from the exec on, this pid the root. */
static void cp_run_exec(const cp_run_opts *o, const cp_outset *s, const char *shim)
    __attribute__((noreturn));
static void cp_run_exec(const cp_run_opts *o, const cp_outset *s, const char *shim)
{
    cp_child_restore();
    if (o->force)
        cp_out_force(s);
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    const char *old = getenv("LD_PRELOAD");
    size_t n = strlen(shim) + (old ? strlen(old) : 0) + 2;
    char *pre = malloc(n);
    if (pre) {
        snprintf(pre, n, "%s%s%s", shim, old && *old ? ":" : "", old && *old ? old : "");
        if (setenv("LD_PRELOAD", pre, 1) == 0 && setenv("CUPROBE_ROOT_PID", pid, 1) == 0)
            execvp(o->cmd[0], o->cmd);
    }
    int e = pre ? errno : ENOMEM;
    fprintf(stderr, "cuprobe: run: cannot run %s: %s\n", o->cmd[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

/* s as one shell word. */
static void cp_shell_word(FILE *f, const char *s)
{
    if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+=:,@%")]
        == 0) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

/* One line: where the traces are and how to report them. */
static void cp_run_say(const cp_outset *s, char **names, long n, int recorded)
{
    if (cp_front_log() < 1)
        return;
    if (!s->dir[0]) {
        fprintf(stderr, "cuprobe: traces: %s; report: cuprobe report TRACE...\n", s->pattern);
        return;
    }
    char cwd[PATH_MAX];
    int here = getcwd(cwd, sizeof cwd) && strcmp(cwd, s->dir) == 0;
    fprintf(stderr, "cuprobe: %ld trace%s in %s; report: cuprobe report", n, n == 1 ? "" : "s",
            here ? "this directory" : s->dir);
    for (long i = 0; !recorded && i < n; i++) {
        char full[PATH_MAX * 2];
        snprintf(full, sizeof full, "%s/%s", s->dir, names[i]);
        fputc(' ', stderr);
        cp_shell_word(stderr, here ? names[i] : full);
    }
    if (recorded && !here) {
        fputc(' ', stderr);
        cp_shell_word(stderr, s->dir);
    }
    fputc('\n', stderr);
}

int cp_run_main(int argc, char **argv, const cp_where *w)
{
    cp_run_opts o;
    int rc = cp_run_parse(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    char shim[PATH_MAX + 32];
    snprintf(shim, sizeof shim, "%s/libcuprobe.so", w->lib);
    if (!w->lib[0]) {
        fprintf(stderr, "cuprobe: run: libcuprobe.so not found next to cuprobe, in ../build "
                        "or in ../lib/cuprobe/\n");
        return 2;
    }
    if (strpbrk(shim, " :")) {
        fprintf(stderr, "cuprobe: run: the path of libcuprobe.so (%s) contains a space or a "
                        "colon, which LD_PRELOAD cannot carry\n", shim);
        return 2;
    }
    const char *pat = o.output ? o.output : getenv("CUPROBE_OUTPUT");
    cp_outset s;
    if (cp_out_resolve(&s, pat && *pat ? pat : "cuprobe-%p.trace") < 0) {
        cp_out_release(&s);
        return 2;
    }
    if (!cp_cmd_found(o.cmd[0])) {
        fprintf(stderr, "cuprobe: run: command not found: %s\n", o.cmd[0]);
        cp_out_release(&s);
        return 127;
    }
    uint64_t run_id = cp_run_id();
    if (cp_run_env(&o, &s, w, run_id) < 0 || cp_child_prepare() < 0) {
        fprintf(stderr, "cuprobe: run: cannot prepare the run: %s\n", strerror(errno));
        cp_out_release(&s);
        return 2;
    }
    cp_child c = { 0 };
    c.pid = fork();
    if (c.pid < 0) {
        fprintf(stderr, "cuprobe: run: cannot start %s: %s\n", o.cmd[0], strerror(errno));
        cp_out_release(&s);
        return 126;
    }
    if (c.pid == 0)
        cp_run_exec(&o, &s, shim);
    if (o.force)
        cp_out_forced_name(&s, c.pid);
    cp_child_wait(&c);

    char **names = NULL;
    long n = cp_out_new(&s, &names);
    int recorded = 0;
    if (s.dir[0] && n >= 0)
        recorded = cp_manifest_write(s.dir, run_id, &c, names, (size_t)n) == 0;
    cp_run_say(&s, names, n < 0 ? 0 : n, recorded);
    cp_out_free_names(names, n < 0 ? 0 : (size_t)n);
    cp_out_release(&s);
    free(c.reaped);
    cp_child_exit(&c);
}
