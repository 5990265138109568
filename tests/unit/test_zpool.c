// link: build/analyzer/util/cp_zpool.o
/*
 * test_zpool.c - cp_zpool's blocks: each zeroed, page-aligned and apart
 * from every other one live (writes to one never show in another), across
 * more than one mapping; a block given back and taken again is zero again
 * though it was written all over; blocks taken on several threads at once
 * are all distinct.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "cp_zpool.h"

#define SIZE 15000                  /* not a whole number of pages */
#define N 600                       /* past one 2 MiB mapping of 16 KiB blocks */
#define THREADS 4
#define PER_THREAD 200

static cp_zpool g_pool = CP_ZPOOL_INIT(SIZE);
static unsigned char *g_taken[THREADS][PER_THREAD];

static int all_zero(const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

static void *taker(void *arg)
{
    unsigned char **out = arg;
    for (int i = 0; i < PER_THREAD; i++)
        out[i] = cp_zpool_get(&g_pool);
    return NULL;
}

static int ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static unsigned char *b[N];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    (void)page;                     /* unused under AddressSanitizer */
    for (int i = 0; i < N; i++) {
        b[i] = cp_zpool_get(&g_pool);
        CHECK(b[i] != NULL);
        if (!b[i])
            return 1;
#if !defined(__SANITIZE_ADDRESS__)
        /* (Under AddressSanitizer the pool hands out calloc'd blocks.) */
        CHECK((uintptr_t)b[i] % page == 0);
#endif
        CHECK(all_zero(b[i], SIZE));
        memset(b[i], (unsigned char)(i + 1), SIZE);
    }
    for (int i = 0; i < N; i++)
        CHECK(b[i][0] == (unsigned char)(i + 1) && b[i][SIZE - 1] == (unsigned char)(i + 1));
    /* Given back and taken again: zero, whichever block comes. */
    for (int i = 0; i < N; i += 2)
        cp_zpool_put(&g_pool, b[i]);
    cp_zpool_put(&g_pool, NULL);
    for (int i = 0; i < N; i += 2) {
        b[i] = cp_zpool_get(&g_pool);
        CHECK(b[i] && all_zero(b[i], SIZE));
    }
    for (int i = 1; i < N; i += 2)
        CHECK(b[i][0] == (unsigned char)(i + 1) && b[i][SIZE - 1] == (unsigned char)(i + 1));

    /* Several threads at once: every block a different one. */
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&th[t], NULL, taker, g_taken[t]) == 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    unsigned char **all = &g_taken[0][0];
    size_t n = THREADS * PER_THREAD;
    qsort(all, n, sizeof *all, ptr_cmp);
    for (size_t i = 0; i < n; i++) {
        CHECK(all[i] != NULL && all_zero(all[i], SIZE));
        CHECK(i == 0 || all[i] >= all[i - 1] + SIZE);
    }
    if (g_fail)
        return 1;
    puts("zpool: ok");
    return 0;
}
