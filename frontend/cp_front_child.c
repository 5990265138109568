/*
 * cp_front_child.c - the command as our child, as nsys and tini keep theirs.
 *
 * Signals.  The command stays in our process group, so that a terminal, a
 * shell's job control and a script around us see one job, as without
 * cuprobe.  What the terminal sends (Ctrl-C, Ctrl-\, Ctrl-Z, a resize, a
 * hang-up) reaches the whole foreground group, the command included; it
 * comes with si_code SI_KERNEL and is not passed on, or the command would
 * get it twice.  What a process sends to us (kill, a supervisor, a container
 * runtime, Slurm) is passed on to the command at once.  The signals are
 * blocked and taken with sigwaitinfo(): no handler, no race with the wait.
 *
 * Job control.  When the command stops for the terminal (TSTP, TTIN, TTOU)
 * and we have one, we stop with the same signal, so that the shell sees its
 * job stopped; `fg` continues us and the command alike.  A stop by SIGSTOP
 * is not copied: whoever sent it continues the command, not us.
 *
 * Statuses.  As a child subreaper (PR_SET_CHILD_SUBREAPER) every process of
 * the tree whose parent ended before it is reparented to us: we reap it and
 * keep its wait status, so that a trace with no END record can be told from
 * one of a process that exited without running its exit handlers.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cp_front.h"

/* Passed on to the command when a process sends them to us. */
static const int cp_forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                                    SIGWINCH, SIGTSTP, SIGCONT };

static sigset_t g_old_mask, g_waited;
static struct sigaction g_old_chld;
static int g_jobctl;    /* we have a controlling terminal: copy the command's stops */

int cp_child_prepare(void)
{
    /* Orphans of the tree come to us, not to init: their statuses are the
     * run's.  Without it (an old kernel) they are just not known. */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    g_jobctl = tty >= 0;
    if (tty >= 0)
        close(tty);
    /* SIGCHLD ignored by whoever started us would reap our child for us
     * (no status to report); the command gets the disposition back. */
    struct sigaction dfl = { .sa_handler = SIG_DFL };
    sigemptyset(&dfl.sa_mask);
    if (sigaction(SIGCHLD, &dfl, &g_old_chld) != 0)
        return -errno;
    sigemptyset(&g_waited);
    sigaddset(&g_waited, SIGCHLD);
    for (size_t i = 0; i < sizeof cp_forwarded / sizeof *cp_forwarded; i++)
        sigaddset(&g_waited, cp_forwarded[i]);
    return sigprocmask(SIG_BLOCK, &g_waited, &g_old_mask) == 0 ? 0 : -errno;
}

void cp_child_restore(void)
{
    sigaction(SIGCHLD, &g_old_chld, NULL);
    sigprocmask(SIG_SETMASK, &g_old_mask, NULL);
}

static uint64_t cp_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void cp_child_record(cp_child *c, pid_t pid, int status)
{
    if (c->n_reaped == c->cap_reaped) {
        size_t cap = c->cap_reaped ? c->cap_reaped * 2 : 16;
        cp_reaped *r = realloc(c->reaped, cap * sizeof *r);
        if (!r)
            return;   /* that status stays unknown: a report says "killed" */
        c->reaped = r;
        c->cap_reaped = cap;
    }
    c->reaped[c->n_reaped++] = (cp_reaped){ pid, status, cp_wall_ns() };
}

/* The command stopped for the terminal: stop too, with the same signal. */
static void cp_child_stopped(int sig)
{
    if (!g_jobctl || (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU))
        return;
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig);   /* pending while blocked (TSTP) */
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    /* Here again after SIGCONT; the CONT itself is taken by the loop and
     * passed on (the command may have been left stopped). */
    sigprocmask(SIG_BLOCK, &one, NULL);
}

/* Reap what has ended.  @return : 1 when the command itself has. */
static int cp_child_reap(cp_child *c, int stops)
{
    int done = 0, st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG | (stops ? WUNTRACED : 0))) > 0) {
        if (WIFSTOPPED(st)) {
            if (p == c->pid)
                cp_child_stopped(WSTOPSIG(st));
            continue;
        }
        cp_child_record(c, p, st);
        if (p == c->pid) {
            c->status = st;
            done = 1;
        }
    }
    return done;
}

void cp_child_wait(cp_child *c)
{
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&g_waited, &si);
        if (sig < 0)
            continue;   /* EINTR: a stop and continue */
        if (sig == SIGCHLD) {
            if (cp_child_reap(c, 1))
                break;
            continue;
        }
        /* The terminal's signals reached the command already. */
        if (si.si_code != SI_KERNEL)
            kill(c->pid, sig);
    }
    /* Orphans that ended with it; the live ones are not waited for. */
    cp_child_reap(c, 0);
}

void cp_child_exit(const cp_child *c)
{
    fflush(NULL);
    if (WIFSIGNALED(c->status)) {
        int sig = WTERMSIG(c->status);
        /* The command's core is the one that matters. */
        struct rlimit none = { 0, 0 };
        setrlimit(RLIMIT_CORE, &none);
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        _exit(128 + sig);   /* a signal whose default is not to end */
    }
    _exit(WIFEXITED(c->status) ? WEXITSTATUS(c->status) : 1);
}
