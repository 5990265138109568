// link: build/interpose/record/cp_tid.o
/*
 * test_tid.c - interpose/record/cp_tid.c: cp_tid() is what gettid() says,
 * on the main thread, on new threads (their ids read from glibc's thread
 * descriptor, no system call), in threads created one after another (a
 * descriptor glibc reuses from its stack cache), and in a forked child.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "cp_tid.h"

static pid_t kernel_tid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static void *thread_main(void *arg)
{
    *(int *)arg = cp_tid() == kernel_tid();
    return NULL;
}

static void test_threads(void)
{
    enum { WAVE = 8, WAVES = 50 };
    for (int w = 0; w < WAVES; w++) {
        pthread_t t[WAVE];
        int ok[WAVE] = { 0 };
        for (int i = 0; i < WAVE; i++)
            CHECK(pthread_create(&t[i], NULL, thread_main, &ok[i]) == 0);
        for (int i = 0; i < WAVE; i++) {
            pthread_join(t[i], NULL);
            CHECK(ok[i]);
        }
    }
}

static void test_fork(void)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        _exit(cp_tid() == kernel_tid() && cp_tid() == getpid() ? 0 : 1);
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
    CHECK(cp_tid() == kernel_tid());    /* looked up on first use */
#ifdef __GLIBC__
    CHECK(cp_tid_init() == 1);          /* from the descriptor, not a system call */
#endif
    CHECK(cp_tid() == kernel_tid());
    CHECK(cp_tid() == getpid());
    test_threads();
    test_fork();
    if (g_fail)
        return 1;
    printf("tid tests passed\n");
    return 0;
}
