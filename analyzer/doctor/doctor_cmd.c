/*
 * doctor_cmd.c - run a helper program for `cuprobe doctor` (the --python
 * interpreter, journalctl) with a time limit, its output handed over line
 * by line.
 *
 * The program runs in a process group of its own so that a timeout kills
 * everything it started; its stdin is /dev/null.  Whether exec itself
 * failed is told by a close-on-exec pipe: it closes empty when exec
 * succeeds and carries errno when it does not.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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

static void child_exec(const char *const argv[], int out, int err, int status, bool merge_err)
{
    int e, nul = open("/dev/null", O_RDONLY);

    if (nul >= 0)
        dup2(nul, 0);
    dup2(out, 1);
    dup2(merge_err ? out : err, 2);
    setpgid(0, 0); /* so a timeout kills the whole group */
    execvp(argv[0], (char *const *)argv);
    e = errno;
    if (write(status, &e, sizeof(e)) < 0)
        _exit(126);
    _exit(127);
}

/* One pipe's bytes so far; complete lines go to the callback (out) or stay
 * as text (err). */
struct stream {
    char buf[8192];
    size_t len;
};

static void drain(struct stream *s, void (*line)(void *, char *), void *arg, bool eof)
{
    char *start = s->buf, *nl;

    s->buf[s->len] = '\0';
    while ((nl = memchr(start, '\n', s->len - (size_t)(start - s->buf)))) {
        *nl = '\0';
        line(arg, start);
        start = nl + 1;
    }
    s->len -= (size_t)(start - s->buf);
    memmove(s->buf, start, s->len);
    /* a line longer than the buffer, or the last one without a newline */
    if ((eof && s->len) || s->len == sizeof(s->buf) - 1) {
        s->buf[s->len] = '\0';
        line(arg, s->buf);
        s->len = 0;
    }
}

/* Where the program's stderr lines go, joined by "; ". */
struct errbuf {
    char *s;
    size_t n;
};

static void keep_err(void *arg, char *text)
{
    struct errbuf *e = arg;
    size_t len = strlen(e->s);

    if (len + 2 < e->n && text[0])
        snprintf(e->s + len, e->n - len, "%s%s", len ? "; " : "", text);
}

int cp_dr_run_cmd(const char *const argv[], int timeout_s, bool merge_err, void (*line)(void *, char *), void *arg,
                  char *err, size_t en)
{
    static struct stream so, se; /* large; doctor is single-threaded */
    int out[2], er[2], st[2], status = 0, e = 0, rc;
    double deadline = mono() + timeout_s;
    struct errbuf eb = {err, en};
    bool out_open = true, err_open = !merge_err;
    pid_t pid;

    err[0] = '\0';
    so.len = se.len = 0;
    if (pipe2(out, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(er, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0) {
        rc = -errno;
        close(out[0]);
        close(out[1]);
        return rc;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0)
        child_exec(argv, out[1], er[1], st[1], merge_err);
    close(out[1]);
    close(er[1]);
    close(st[1]);
    if (pid < 0) {
        rc = -errno;
        goto out_close;
    }
    while (out_open || err_open) {
        struct pollfd p[2] = {{out_open ? out[0] : -1, POLLIN, 0}, {err_open ? er[0] : -1, POLLIN, 0}};
        int left = (int)((deadline - mono()) * 1000);

        if (left <= 0) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            break;
        }
        if (poll(p, 2, left) <= 0)
            continue;
        for (int i = 0; i < 2; i++) {
            struct stream *s = i ? &se : &so;
            ssize_t got;

            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            got = read(i ? er[0] : out[0], s->buf + s->len, sizeof(s->buf) - 1 - s->len);
            if (got < 0 && errno == EINTR)
                continue;
            if (got > 0)
                s->len += (size_t)got;
            drain(s, i ? keep_err : line, i ? (void *)&eb : arg, got <= 0);
            if (got <= 0)
                *(i ? &err_open : &out_open) = false;
        }
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (read(st[0], &e, sizeof(e)) == (ssize_t)sizeof(e) && e) {
        snprintf(err, en, "%s", strerror(e));
        rc = -e;
    } else if (out_open || err_open) {
        snprintf(err, en, "timed out after %d s", timeout_s);
        rc = -ETIMEDOUT;
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
out_close:
    close(out[0]);
    close(er[0]);
    close(st[0]);
    return rc;
}
