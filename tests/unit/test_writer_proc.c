// link: build/interpose/record/cp_rec.o build/interpose/record/cp_rec_tbuf.o build/interpose/record/cp_tid.o build/interpose/record/cp_rec_drain.o build/interpose/record/cp_writer.o build/interpose/record/cp_tfile.o build/interpose/record/cp_wfile.o build/interpose/record/cp_hostmem.o build/interpose/record/cp_hostparse.o build/interpose/record/cp_header.o build/interpose/record/cp_outpath.o build/interpose/record/cp_ownfd.o
// link: build/interpose/record/cp_env.o build/interpose/record/cp_clock.o build/interpose/lifecycle/cp_lifecycle.o build/interpose/lifecycle/cp_sigchain.o
// link: build/interpose/record/cp_log.o build/interpose/record/cp_rec_chunk.o build/interpose/record/cp_rec_cb.o build/interpose/hooks/cp_real.o
// link: build/analyzer/decode/cp_decode.o build/analyzer/util/cp_file.o build/analyzer/decode/cp_decode_fields.o build/analyzer/decode/cp_names.o
// link: build/analyzer/decode/cp_decode_note.o build/analyzer/decode/cp_decode_ring.o build/analyzer/decode/cp_decode_defer.o build/analyzer/decode/cp_decode_window.o
/*
 * test_writer_proc.c - a program with the recorder linked in, driven by
 * tests/sh/writer_*.sh to exercise process lifecycles: exit, _exit, fork,
 * exec, fatal signals, SIGKILL, unwritable output.  `MODE [ARG]`:
 *   basic N        record N calls, exit(0)
 *   spin           record forever, printing "ready" once a flush happened
 *   fork-quiet     record, fork a child that records nothing, wait, exit
 *   fork-records   record, fork a child that records and exits
 *   exec PATH      record, then execv(PATH)
 *   exec-fail      record, execv a missing file, record more, exit
 *   exec-quiet PATH ARGS...  execv(PATH, ARGS) without recording anything
 *   _exit N        record, _exit(N)
 *   segv | abort   record, then crash
 *   sigterm-handler  install a SIGTERM handler after start-up, raise it
 *   noop           record nothing
 *   vfork-exec     vfork a child that execs /bin/true (hooks must pass
 *                  through in the child: it shares our memory), record, exit
 *   flood N        8 threads record N calls each as fast as they can
 *   big            one 300 KB LOG record (larger than a buffer chunk)
 * Without arguments it runs a quick self-check (record, shut down, decode).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cp_decode.h"
#include "cp_env.h"
#include "cp_rec.h"
#include "cp_writer.h"

static void rec(uint64_t seq)
{
    uint8_t *p = cp_rec_begin(CP_REC_CALL, 7 * CP_VARINT_MAX);
    if (!p)
        return;
    p = cp_put_u(p, 1);
    p = cp_put_u(p, 0);
    p = cp_put_u(p, 0x1000);
    p = cp_put_s(p, 0);
    p = cp_put_u(p, seq);
    p = cp_put_u(p, 100);
    p = cp_put_u(p, 0);
    cp_rec_commit(p);
}

static void rec_n(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        rec(i);
}

static volatile sig_atomic_t g_got_term;

static void on_term(int sig)
{
    (void)sig;
    g_got_term = 1;
}

static int mode_sigterm(void)
{
    rec_n(10);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, &old);
    if (old.sa_handler != SIG_DFL) {
        printf("previous SIGTERM handler was not SIG_DFL\n");
        return 1;
    }
    struct sigaction q;
    sigaction(SIGTERM, NULL, &q);
    if (q.sa_handler != on_term) {
        printf("sigaction does not report the program's handler\n");
        return 1;
    }
    raise(SIGTERM);
    if (!g_got_term) {
        printf("handler did not run\n");
        return 1;
    }
    if (signal(SIGTERM, SIG_DFL) != on_term) {
        printf("signal() did not return the program's handler\n");
        return 1;
    }
    printf("handler ran\n");
    rec_n(10);
    return 0;
}

static int mode_fork(int child_records)
{
    rec_n(100);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (child_records)
            rec_n(50);
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("child %d\n", (int)pid);
    rec_n(100);
    return 0;
}

static int mode_vfork(void)
{
    rec_n(10);
    pid_t pid = vfork();
    if (pid == 0) {
        char *args[] = {"true", NULL};
        execv("/bin/true", args);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    rec_n(10);
    printf("child status %d\n", WEXITSTATUS(st));
    return 0;
}

static uint64_t g_flood_n;

static void *flood_thread(void *arg)
{
    (void)arg;
    rec_n(g_flood_n);
    return NULL;
}

static int mode_flood(uint64_t n)
{
    pthread_t th[8];
    g_flood_n = n;
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, flood_thread, NULL);
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    printf("flooded %llu\n", (unsigned long long)(8 * n));
    return 0;
}

static int mode_big(void)
{
    size_t n = 300000;
    char *text = malloc(n);
    memset(text, 'x', n);
    uint8_t *p = cp_rec_begin(CP_REC_LOG, n + 2 * CP_VARINT_MAX);
    if (!p)
        return 1;
    p = cp_put_u(p, 2);
    p = cp_put_str(p, text, n);
    cp_rec_commit(p);
    free(text);
    rec_n(10);
    return 0;
}

static int self_check(void)
{
    char dir[] = "/tmp/cp-test-proc.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char pat[512], path[600];
    snprintf(pat, sizeof pat, "%s/s-%%p.trace", dir);
    setenv("CUPROBE_OUTPUT", pat, 1);
    cp_config_reload();
    rec_n(1000);
    cp__rec_shutdown(CP_END_EXIT, 0, 1, 5000);
    snprintf(path, sizeof path, "%s/s-%d.trace", dir, (int)getpid());
    const char *err;
    cp_dec *d = cp_dec_open(path, &err);
    if (!d) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    cp_record r;
    int rc, calls = 0;
    while ((rc = cp_dec_next(d, &r)) == 1)
        calls += r.type == CP_REC_CALL;
    int ok = rc == 0 && calls == 1000;
    if (!ok)
        fprintf(stderr, "rc %d calls %d: %s\n", rc, calls, cp_dec_err(d));
    cp_dec_close(d);
    unlink(path);
    rmdir(dir);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return self_check();
    const char *m = argv[1];
    long arg = argc > 2 ? atol(argv[2]) : 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!strcmp(m, "basic")) {
        rec_n((uint64_t)arg);
        printf("done\n");
        return 0;
    }
    if (!strcmp(m, "spin")) {
        for (uint64_t i = 0;; i++) {
            rec(i);
            if (i % 1000 == 0)
                usleep(1000);
            if (i == 20000)
                printf("ready\n");
        }
    }
    if (!strcmp(m, "fork-quiet"))
        return mode_fork(0);
    if (!strcmp(m, "fork-records"))
        return mode_fork(1);
    if (!strcmp(m, "exec")) {
        rec_n(100);
        char *args[] = {argv[2], NULL};
        execv(argv[2], args);
        perror("execv");
        return 1;
    }
    if (!strcmp(m, "exec-quiet") && argc > 2) {
        execv(argv[2], argv + 2);
        perror("execv");
        return 1;
    }
    if (!strcmp(m, "exec-fail")) {
        rec_n(100);
        char *args[] = {"nope", NULL};
        if (execv("/nonexistent/cuprobe-no-such-program", args) == 0 || errno != ENOENT)
            return 1;
        rec_n(100);
        printf("exec failed as expected\n");
        return 0;
    }
    if (!strcmp(m, "_exit")) {
        rec_n(100);
        _exit((int)arg);
    }
    if (!strcmp(m, "segv")) {
        rec_n(100);
        volatile int *p = (volatile int *)(uintptr_t)arg;
        return *p;
    }
    if (!strcmp(m, "abort")) {
        rec_n(100);
        abort();
    }
    if (!strcmp(m, "sigterm-handler"))
        return mode_sigterm();
    if (!strcmp(m, "noop"))
        return 0;
    if (!strcmp(m, "vfork-exec"))
        return mode_vfork();
    if (!strcmp(m, "flood"))
        return mode_flood((uint64_t)arg);
    if (!strcmp(m, "big"))
        return mode_big();
    fprintf(stderr, "unknown mode %s\n", m);
    return 2;
}
