/*
 * doctor_child.c - run the driver layers of `cuprobe doctor` in a forked
 * child so a hung or crashing driver call cannot hang or kill doctor.
 *
 * The child announces each step before making its call and streams its
 * checks through a pipe (format in doctor_report.c).  The parent waits at
 * most ctx->timeout_s for each step; on a timeout it kills the child and
 * records "timed out after N s" against the announced step.  The child also
 * arms alarm() as a backstop and dies with the parent (PR_SET_PDEATHSIG).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doctor_int.h"

static double mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void child_main(struct cp_dr_ctx *ctx, int fd)
{
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_IGN);
    /* A crash inside the driver must reach the parent as a signal, not as
     * the exit status a sanitizer's or a library's handler turns it into. */
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
        signal(fatal[i], SIG_DFL);
    /* The parent's per-step limit is the real bound; this one catches a
     * child whose parent stopped reading. */
    alarm((unsigned)ctx->timeout_s * 8 + 30);
    /* Checks from layer 1 are the parent's; the child sends only its own. */
    ctx->rep.out_fd = fd;
    ctx->rep.sent = ctx->rep.n;
    cp_dr_driver_layers(ctx);
    close(fd);
    _exit(0);
}

struct collect {
    char buf[1 << 16];
    size_t len;
    int step_layer;
    char step[128];
    double step_start;
};

/* Handles the complete lines in co->buf. */
static void drain_lines(struct cp_dr_ctx *ctx, struct collect *co)
{
    char *start = co->buf, *nl;

    while ((nl = memchr(start, '\n', co->len - (size_t)(start - co->buf)))) {
        char pci[32], uuid[96];
        int ord;

        *nl = '\0';
        if (sscanf(start, "D\x1f%31[^\x1f]\x1f%95[^\x1f]\x1f%d", pci, uuid, &ord) == 3)
            cp_dr_gpu_set(ctx, pci, uuid, ord);
        else if (cp_dr_recv_line(&ctx->rep, start, &co->step_layer, co->step, sizeof(co->step)) == 2)
            co->step_start = mono();
        start = nl + 1;
    }
    co->len -= (size_t)(start - co->buf);
    memmove(co->buf, start, co->len);
}

static int step_layer(const struct collect *co)
{
    return co->step_layer >= 2 && co->step_layer <= CP_DR_LAYERS ? co->step_layer : 2;
}

static void add_timeout(struct cp_dr_ctx *ctx, const struct collect *co)
{
    struct cp_dr_check *c = cp_dr_add(&ctx->rep, step_layer(co), CP_DR_FAIL, "timeout",
                                      "%s timed out after %d s", co->step[0] ? co->step : "driver probe",
                                      ctx->timeout_s);

    cp_dr_ev(c, "the driver call did not return; doctor killed its probe process");
    cp_dr_fix(c, "a hung driver: check %s and `nvidia-smi`; a GPU reset "
                 "(`nvidia-smi -r`) or a reboot usually clears it; on many-GPU machines without persistence "
                 "mode initialisation is slow: enable it (`nvidia-smi -pm 1`) or raise --timeout", cp_dr_log_hint(ctx));
    cp_dr_kv_str(c, "step", co->step);
    cp_dr_kv_int(c, "seconds", ctx->timeout_s);
}

static void add_crash(struct cp_dr_ctx *ctx, const struct collect *co, int status)
{
    struct cp_dr_check *c;

    c = cp_dr_add(&ctx->rep, step_layer(co), CP_DR_FAIL, "crash", "the driver probe %s during %s",
                  WIFSIGNALED(status) ? "crashed" : "exited early", co->step[0] ? co->step : "start-up");
    if (WIFSIGNALED(status))
        cp_dr_ev(c, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        cp_dr_ev(c, "exit status %d", WEXITSTATUS(status));
    cp_dr_fix(c, "the driver library misbehaves: reinstall the NVIDIA driver and check %s", cp_dr_log_hint(ctx));
}

void cp_dr_run_child(struct cp_dr_ctx *ctx)
{
    struct collect *co = calloc(1, sizeof(*co));
    int fds[2], status = 0;
    bool timed_out = false;
    pid_t pid;

    if (!co || pipe2(fds, O_CLOEXEC) < 0) {
        struct cp_dr_check *c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "internal", "cannot start the driver probe");

        cp_dr_ev(c, "%s", strerror(errno ? errno : ENOMEM));
        free(co);
        return;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_main(ctx, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
        struct cp_dr_check *c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "internal", "cannot fork the driver probe");

        cp_dr_ev(c, "%s", strerror(errno));
        goto out_close;
    }
    co->step_start = mono();
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        int left = (int)((co->step_start + ctx->timeout_s - mono()) * 1000);
        ssize_t got;

        if (left <= 0) {
            timed_out = true;
            break;
        }
        if (poll(&p, 1, left) <= 0)
            continue;
        got = read(fds[0], co->buf + co->len, sizeof(co->buf) - 1 - co->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        co->len += (size_t)got;
        drain_lines(ctx, co);
        if (co->len == sizeof(co->buf) - 1)
            co->len = 0; /* a runaway line: drop it rather than stall */
    }
    if (timed_out)
        kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out)
        add_timeout(ctx, co);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        add_crash(ctx, co, status);
out_close:
    close(fds[0]);
    free(co);
}
