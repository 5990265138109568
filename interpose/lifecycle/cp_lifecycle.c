/*
 * cp_lifecycle.c - process lifecycle around the recorder: constructor,
 * exit (on_exit + destructor), _exit/_Exit, exec*, fork.
 *
 * Exported hooks (add to interpose/exports.map): _exit, _Exit, quick_exit,
 * execve, execv, execvp, execvpe, execl, execlp, execle, fork,
 * __libc_start_main (to register the exit handler after the dynamic
 * linker's).  Every hook first checks
 * cp__rec_owner(): in a vfork child (CPython's subprocess uses vfork) our
 * memory is the parent's, so the hooks must pass straight through.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cp_env.h"
#include "cp_real.h"
#include "cp_rec.h"
#include "cp_writer.h"

#define CP_EXPORT __attribute__((visibility("default")))
#define CP_EXIT_WAIT_MS 10000u
#define CP_EXEC_WAIT_MS 5000u

static int g_exit_seen;
static int g_exit_status;
static int g_quick_status;   /* what quick_exit() was given, for its handler */

/* A status as the parent sees it (wait(2) keeps its low 8 bits): exit(300)
 * ends the process with 44. */
static int cp_status_seen(int status)
{
    return status & 0xff;
}

/* ---- start and exit ----------------------------------------------------- */

static void cp_atfork_child(void)
{
    cp__rec_fork_child();
}

/* Runs from exit(): remember the status and make everything so far durable.
 * The END record is written later, by the destructor, so that CUDA calls
 * made by other libraries' exit handlers and destructors are still seen. */
static void cp_on_exit(int status, void *arg)
{
    (void)arg;
    /* Registered twice (constructor, main's wrapper): once is enough. */
    if (!cp__rec_owner() || g_exit_seen)
        return;
    g_exit_status = cp_status_seen(status);
    g_exit_seen = 1;
    cp_rec_flush();
}

/* Registered with at_quick_exit() at start, so it runs after every handler
 * the program registers: CUDA calls made there are still seen.  quick_exit
 * runs neither atexit handlers nor destructors, so END is written here. */
static void cp_on_quick_exit(void)
{
    if (cp__rec_owner())
        cp__rec_shutdown(CP_END_QUICK_EXIT, g_quick_status, 1, CP_EXIT_WAIT_MS);
}

static void *g_real__exit, *g_real__Exit, *g_real_quick_exit, *g_real_fork, *g_real_start_main;

/* ---- main's wrapper ------------------------------------------------------
 * exit() runs its handlers in the reverse order of registration.  The
 * shim's constructor runs before __libc_start_main registers the dynamic
 * linker's _dl_fini (which runs every destructor, ours included), so a
 * handler registered there would run AFTER our destructor had already
 * written END without the status.  Registering it again from a wrapper of
 * main puts it after _dl_fini in the list, i.e. it runs first. */
typedef int (*cp_main_fn)(int, char **, char **);
static cp_main_fn g_real_main;

static int cp_main_wrapper(int argc, char **argv, char **envp)
{
    if (!cp_config()->disable)
        on_exit(cp_on_exit, NULL);
    return g_real_main(argc, argv, envp);
}

typedef int (*cp_start_main_fn)(cp_main_fn, int, char **, void (*)(void), void (*)(void),
                                void (*)(void), void *);

/* glibc declares it nowhere public. */
int __libc_start_main(cp_main_fn main_fn, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

CP_EXPORT int __libc_start_main(cp_main_fn main_fn, int argc, char **argv,
                                void (*init)(void), void (*fini)(void),
                                void (*rtld_fini)(void), void *stack_end)
{
    cp_start_main_fn real = (cp_start_main_fn)cp_real(&g_real_start_main,
                                                      "__libc_start_main", CP_REAL_NEXT);
    if (!real)   /* cannot happen with glibc; nothing sane to do but exit */
        syscall(SYS_exit_group, 127);
    g_real_main = main_fn;
    return real(cp_main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

static void *g_real_execve, *g_real_execvpe;

/* Priority 101: before any other constructor in the shim may record. */
__attribute__((constructor(101))) static void cp_lifecycle_init(void)
{
    /* Resolve now: a vfork child calling _exit or exec must not run the
     * dynamic linker (locks, malloc) inside its parent's memory. */
    cp_real(&g_real__exit, "_exit", CP_REAL_NEXT);
    cp_real(&g_real__Exit, "_Exit", CP_REAL_NEXT);
    cp_real(&g_real_quick_exit, "quick_exit", CP_REAL_NEXT);
    cp_real(&g_real_fork, "fork", CP_REAL_NEXT);
    cp_real(&g_real_execve, "execve", CP_REAL_NEXT);
    cp_real(&g_real_execvpe, "execvpe", CP_REAL_NEXT);
    const struct cp_config *cfg = cp_config();
    cp__rec_init(!cfg->disable, &cp__writer);
    if (cfg->disable)
        return;
    pthread_atfork(NULL, NULL, cp_atfork_child);
    on_exit(cp_on_exit, NULL);
    at_quick_exit(cp_on_quick_exit);
    if (cfg->signals)
        cp__sigchain_install();
    /* The root process always leaves a trace, even if it never uses CUDA:
     * "no GPU was used" is a finding too. */
    if (cfg->root_pid > 0 && cfg->root_pid == (long)getpid())
        cp__rec_start_now();
}

__attribute__((destructor)) static void cp_lifecycle_fini(void)
{
    if (!cp__rec_owner())
        return;
    cp__rec_shutdown(g_exit_seen ? CP_END_EXIT : CP_END_DESTRUCTOR,
                     g_exit_status, 1, CP_EXIT_WAIT_MS);
}

static void cp_exit_now(int status)
{
    if (cp__rec_owner())
        cp__rec_shutdown(CP_END__EXIT, cp_status_seen(status), 1, CP_EXIT_WAIT_MS);
}

CP_EXPORT __attribute__((noreturn)) void _exit(int status)
{
    cp_exit_now(status);
    void (*real)(int) = (void (*)(int))cp_real(&g_real__exit, "_exit", CP_REAL_NEXT);
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

CP_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
    cp_exit_now(status);
    void (*real)(int) = (void (*)(int))cp_real(&g_real__Exit, "_Exit", CP_REAL_NEXT);
    if (real)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

/* The status for cp_on_quick_exit (quick_exit hands its handlers none). */
CP_EXPORT __attribute__((noreturn)) void quick_exit(int status)
{
    if (cp__rec_owner())
        g_quick_status = cp_status_seen(status);
    void (*real)(int) = (void (*)(int))cp_real(&g_real_quick_exit, "quick_exit",
                                               CP_REAL_NEXT);
    if (real)
        real(status);
    /* No quick_exit in this libc (none before glibc 2.10): its handlers
     * cannot have been registered either. */
    cp_exit_now(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

/* ---- timing the recorder against itself ----------------------------------- */

/* For benchmarks only (bench/gpu_steps.py toggle): one process alternates
 * turns with recording on and paused, so that the comparison carries none
 * of the few percent by which two identical processes differ on a busy
 * host.  Returns 0, or -ENODEV when not recording. */
CP_EXPORT int cuprobe_bench_pause(int paused)
{
    static atomic_int said;
    if (paused && cp_rec_on() && !atomic_exchange(&said, 1))
        cp_log(1, "cuprobe_bench_pause(): recording paused for timing; events while paused "
                  "are missing from this trace");
    return cp__rec_pause(paused);
}

/* ---- fork --------------------------------------------------------------- */

CP_EXPORT pid_t fork(void)
{
    pid_t (*real)(void) = (pid_t (*)(void))cp_real(&g_real_fork, "fork", CP_REAL_NEXT);
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    pid_t pid = real();
    /* Only a process that already writes a trace records its forks: a
     * shell that forks but never uses CUDA must not get a file for it. */
    if (pid > 0 && cp__rec_running() && cp__rec_owner()) {
        int saved = errno;
        (void)cp_rec_put_fork((uint64_t)pid);
        errno = saved;
    }
    return pid;
}

/* ---- exec --------------------------------------------------------------- */

static void cp_exec_record(const char *path, int err)
{
    size_t n = path ? strlen(path) : 0;
    (void)cp_rec_put_exec(path, n, err);
}

/* Before the real exec: record it and close the file with END(EXEC), since
 * a successful exec discards the writer.  @return : 1 if we did. */
static int cp_exec_before(const char *path)
{
    if (!cp__rec_owner())
        return -1;
    int had = cp__rec_running();
    if (had)
        cp_exec_record(path, 0);
    cp__rec_shutdown(CP_END_EXEC, 0, 0, CP_EXEC_WAIT_MS);
    return had;
}

/* The exec failed: trace on, into a new file if there was one. */
static void cp_exec_after(int had, const char *path, int err)
{
    if (had < 0)
        return;
    cp__rec_resume();
    if (had)
        cp_exec_record(path, err);
    errno = err;
}

typedef int (*cp_execve_fn)(const char *, char *const[], char *const[]);

CP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    cp_execve_fn real = (cp_execve_fn)cp_real(&g_real_execve, "execve", CP_REAL_NEXT);
    int had = cp_exec_before(path);
    int rc = real ? real(path, argv, envp) : (errno = ENOSYS, -1);
    cp_exec_after(had, path, errno);
    return rc;
}

CP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    cp_execve_fn real = (cp_execve_fn)cp_real(&g_real_execvpe, "execvpe", CP_REAL_NEXT);
    int had = cp_exec_before(file);
    int rc = real ? real(file, argv, envp) : (errno = ENOSYS, -1);
    cp_exec_after(had, file, errno);
    return rc;
}

/* execv and execvp are execve and execvpe with the current environment
 * (POSIX; glibc implements them so): one recording path serves all four. */
CP_EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

CP_EXPORT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* execl, execlp, execle: glibc's own versions call the internal execve, not
 * the exported one, so they are rebuilt on top of ours.  mode 0 = execv,
 * 1 = execvp, 2 = execve with the envp that follows the NULL. */
static int cp_execl_common(const char *path, const char *arg0, va_list ap, int mode)
{
    size_t argc = 0;
    if (arg0) {
        va_list aq;
        va_copy(aq, ap);
        argc = 1;
        while (va_arg(aq, char *))
            argc++;
        va_end(aq);
    }
    if (argc > 65536) {
        errno = E2BIG;
        return -1;
    }
    char *argv[argc + 1];
    argv[0] = (char *)arg0;
    for (size_t i = 1; i <= argc && arg0; i++)
        argv[i] = va_arg(ap, char *);   /* the last one is the NULL */
    if (mode == 2) {
        char *const *envp = va_arg(ap, char *const *);
        return execve(path, argv, envp);
    }
    return mode == 1 ? execvp(path, argv) : execv(path, argv);
}

/* execl, execlp and execle differ only in how the list ends (cp_execl_common
 * reads envp after the NULL for execle, mode 2) and in the path search. */
#define CP_EXECL(name, mode)                                    \
    CP_EXPORT int name(const char *path, const char *arg, ...)  \
    {                                                           \
        va_list ap;                                             \
        va_start(ap, arg);                                      \
        int rc = cp_execl_common(path, arg, ap, mode);          \
        va_end(ap);                                             \
        return rc;                                              \
    }
CP_EXECL(execl, 0)
CP_EXECL(execlp, 1)
CP_EXECL(execle, 2)
