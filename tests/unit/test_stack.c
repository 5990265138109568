// link: build/interpose/callsite/cp_stack.o build/interpose/callsite/cp_scache.o build/interpose/callsite/cp_itab.o build/interpose/callsite/cp_modules.o build/interpose/callsite/cp_pystack.o build/interpose/callsite/cp_pyintern.o build/interpose/callsite/cp_pysite.o build/interpose/callsite/cp_pystr.o build/interpose/callsite/cp_pylayout.o
/*
 * test_stack.c - native call-site capture: frame attribution (skip, -1),
 * interning (one STACK record per distinct stack, ids from 1), the module
 * map (main program with build id, every IP inside a module, a dlopen'ed
 * library appears), re-announcement in a new file and after fork, threads,
 * CUPROBE_STACK_DEPTH.  `test_stack bench` prints ns per capture instead.
 */
#include <dlfcn.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "test_stack_fakerec.h"
#include "cp_stack.h"

struct module { uint64_t base, size, off; char path[PATH_MAX]; char bid[130]; };

/* The module map as written since the last RESET. */
static int read_modules(struct module *m, int max)
{
    int n = 0;
    pthread_mutex_lock(&g_fr_lock);
    for (size_t i = 0; i < g_fr_n; i++) {
        const uint8_t *p = g_fr[i].payload, *end = p + g_fr[i].len;
        uint64_t len = 0;
        if (g_fr[i].type == CP_REC_MODULE_RESET)
            n = 0;
        if (g_fr[i].type != CP_REC_MODULE || n == max)
            continue;
        cp_get_u(&p, end, &m[n].base);
        cp_get_u(&p, end, &m[n].size);
        cp_get_u(&p, end, &m[n].off);
        cp_get_u(&p, end, &len);
        snprintf(m[n].path, sizeof(m[n].path), "%.*s", (int)len, (const char *)p);
        p += len;
        cp_get_u(&p, end, &len);
        snprintf(m[n].bid, sizeof(m[n].bid), "%.*s", (int)len, (const char *)p);
        n++;
    }
    pthread_mutex_unlock(&g_fr_lock);
    return n;
}

static const struct module *module_of(const struct module *m, int n, uint64_t ip)
{
    for (int i = 0; i < n; i++)
        if (ip >= m[i].base && ip < m[i].base + m[i].size)
            return &m[i];
    return NULL;
}

static uintptr_t g_ra_leaf;     /* return address of leaf() into mid() */

static __attribute__((noinline)) uint64_t leaf(int skip)
{
    uint64_t id = cp_stack_capture(skip, 0);
    __atomic_store_n(&g_ra_leaf, (uintptr_t)__builtin_return_address(0), __ATOMIC_RELAXED);
    __asm__ volatile("" ::: "memory");  /* no tail call */
    return id;
}

static __attribute__((noinline)) uint64_t mid(int skip)
{
    uint64_t id = leaf(skip);
    __asm__ volatile("" ::: "memory");
    return id;
}

static __attribute__((noinline)) uint64_t other_site(void)
{
    uint64_t id = cp_stack_capture(0, 0);
    __asm__ volatile("" ::: "memory");
    return id;
}

static __attribute__((noinline)) uint64_t other_mid(void)
{
    uint64_t id = other_site();
    __asm__ volatile("" ::: "memory");
    return id;
}

static __attribute__((noinline)) uint64_t deep(int n)
{
    uint64_t id = n ? deep(n - 1) : cp_stack_capture(0, 0);
    __asm__ volatile("" ::: "memory");
    return id;
}

/* The main process runs with CUPROBE_STACK_DEPTH=2 so that a site is the
 * same stack whichever test line reaches it; full depth runs in children. */
static void test_attribution_and_interning(void)
{
    struct fake_stack s;
    uint64_t id0 = mid(0), id1, id2, twice[2];

    CHECK(id0 == 1);    /* ids start at 1 */
    CHECK(fake_rec_stack(id0, &s) == 0);
    CHECK(s.n_native == 2 && s.n_py == 0);
    /* ips[0] is in leaf (the caller of cp_stack_capture), ips[1] is the call
     * to leaf in mid: return address - 1. */
    CHECK(s.ip[0] > (uintptr_t)leaf && s.ip[0] < (uintptr_t)leaf + 256);
    CHECK(s.ip[1] == g_ra_leaf - 1);
    CHECK(s.ip[1] > (uintptr_t)mid && s.ip[1] < (uintptr_t)mid + 256);
    /* skip=1 drops leaf: the first frame is the call in mid, the second one
     * our loop (one call site, so both turns give one stack). */
    for (volatile int i = 0; i < 2; i++)
        twice[i] = mid(1);
    id1 = twice[0];
    CHECK(id1 == 2 && twice[1] == id1);
    CHECK(fake_rec_stack(id1, &s) == 0 && s.ip[0] == g_ra_leaf - 1);
    /* The same site again: same id, no second record. */
    CHECK(mid(0) == id0);
    CHECK(fake_rec_defs(CP_REC_STACK, id0) == 1 && fake_rec_defs(CP_REC_STACK, id1) == 1);
    id2 = other_mid();
    CHECK(id2 == 3 && fake_rec_count(CP_REC_STACK) == 3);
    CHECK(other_mid() == 3 && fake_rec_count(CP_REC_STACK) == 3);
}

static void test_module_map(void)
{
    struct module m[512];
    struct fake_stack s;
    char exe[PATH_MAX];
    ssize_t n_exe = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    int n = read_modules(m, 512), have_exe = 0, have_libc = 0, before;
    void *h;

    CHECK(fake_rec_count(CP_REC_MODULE_RESET) == 1);   /* one map, written once */
    CHECK(n > 2);
    exe[n_exe > 0 ? n_exe : 0] = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(m[i].path, exe) == 0) {
            have_exe = 1;
            CHECK(strlen(m[i].bid) == 40);     /* gcc/ld emit a 20-byte build id */
        }
        have_libc |= strstr(m[i].path, "libc.so") != NULL;
    }
    CHECK(have_exe && have_libc);
    /* The captured addresses lie in our program's module. */
    CHECK(fake_rec_stack(1, &s) == 0);
    for (uint64_t i = 0; i < s.n_native; i++)
        CHECK(module_of(m, n, s.ip[i]) && strcmp(module_of(m, n, s.ip[i])->path, exe) == 0);
    /* dlopen: the next capture writes a fresh map that includes it. */
    before = (int)fake_rec_count(CP_REC_MODULE_RESET);
    /* A library that is not loaded yet (sanitizer runtimes pull some in). */
    static const char *const libs[] = { "libanl.so.1", "libutil.so.1", "libz.so.1",
                                        "libbz2.so.1.0", "liblzma.so.5", NULL };
    const char *lib = NULL;
    h = NULL;
    for (int i = 0; libs[i] && !h; i++) {
        void *loaded = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);
        if (loaded) {
            dlclose(loaded);
            continue;
        }
        h = dlopen(libs[i], RTLD_NOW);
        lib = libs[i];
    }
    if (h) {
        int found = 0;
        char stem[32];
        snprintf(stem, sizeof(stem), "%.*s", (int)(strstr(lib, ".so") - lib), lib);
        other_mid();
        CHECK((int)fake_rec_count(CP_REC_MODULE_RESET) == before + 1);
        n = read_modules(m, 512);
        for (int i = 0; i < n; i++)
            found |= strstr(m[i].path, stem) != NULL;
        CHECK(found);
    } else {
        printf("note: no unloaded library to dlopen, map update not tested\n");
    }
}

static void test_new_file(void)
{
    uint64_t id = mid(0);
    fake_rec_new_file();
    /* The callback wrote the map into the new file at once. */
    CHECK(fake_rec_count(CP_REC_MODULE_RESET) == 1 && fake_rec_count(CP_REC_MODULE) > 2);
    CHECK(fake_rec_count(CP_REC_STACK) == 0);
    CHECK(mid(0) == id);    /* same id, announced again in the new file */
    CHECK(fake_rec_defs(CP_REC_STACK, id) == 1);
    CHECK(mid(0) == id && fake_rec_defs(CP_REC_STACK, id) == 1);
}

static void test_fork(void)
{
    uint64_t id = mid(0);
    pid_t pid = fork();
    if (pid == 0) {
        /* Our child handler forgets what was announced, before the child's
         * first record (the recorder switches files there). */
        size_t before = fake_rec_count(CP_REC_STACK);
        int ok = mid(0) == id && fake_rec_count(CP_REC_STACK) == before + 1;
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void *thread_main(void *arg)
{
    uint64_t *ids = arg;
    for (int i = 0; i < 2000; i++) {
        uint64_t a = (i & 1) ? mid(0) : other_mid();
        if (i < 2)
            ids[i] = a;
        else if (a != ids[i & 1])
            ids[2] = 1;
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t t[4];
    uint64_t ids[4][3] = { { 0 } };
    fake_rec_new_file();
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, thread_main, ids[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    /* Four threads race to re-announce the same two stacks in a new file:
     * every thread always got the same ids, each announced exactly once. */
    for (int i = 0; i < 4; i++) {
        CHECK(ids[i][2] == 0);
        CHECK(ids[i][0] == ids[0][0] && ids[i][1] == ids[0][1]);
        CHECK(fake_rec_defs(CP_REC_STACK, ids[i][0]) == 1);
        CHECK(fake_rec_defs(CP_REC_STACK, ids[i][1]) == 1);
    }
    CHECK(fake_rec_count(CP_REC_MODULE_RESET) == 1);
}

/* CUPROBE_STACK_DEPTH is read once, so each value runs in a fresh child:
 * r[0] = native frames of deep(40), r[1] = its id, r[2] = 1 when every
 * address lies in a module of the map. */
static void depth_child(const char *value, uint64_t r[3])
{
    int fd[2], st = 0;
    pid_t pid;
    r[0] = r[1] = r[2] = UINT64_MAX;
    if (pipe(fd))
        return;
    pid = fork();
    if (pid == 0) {
        static struct module m[512];
        struct fake_stack s;
        int n;
        if (value)
            setenv("CUPROBE_STACK_DEPTH", value, 1);
        else
            unsetenv("CUPROBE_STACK_DEPTH");
        r[1] = deep(40);
        r[0] = r[1] && fake_rec_stack(r[1], &s) == 0 ? s.n_native : 0;
        n = read_modules(m, 512);
        r[2] = r[0] > 0;
        for (uint64_t i = 0; i < r[0]; i++)
            r[2] &= module_of(m, n, s.ip[i]) != NULL;
        _exit(write(fd[1], r, 3 * sizeof(r[0])) == 3 * sizeof(r[0]) ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], r, 3 * sizeof(r[0])) != 3 * sizeof(r[0]))
        r[0] = r[1] = r[2] = UINT64_MAX;
    close(fd[0]);
    waitpid(pid, &st, 0);
}

static void test_depth_env(void)
{
    uint64_t r[3];
    depth_child(NULL, r);
    CHECK(r[1] == 1 && r[0] == 24 && r[2] == 1);    /* default 24 */
    depth_child("3", r);
    CHECK(r[1] == 1 && r[0] == 3 && r[2] == 1);
    depth_child("0", r);
    CHECK(r[1] == 0);       /* 0: no stacks at all */
}

static void bench(void)
{
    const int iters = 200000;
    uint64_t t0, t1;
    deep(30);
    t0 = cp_now_ns();
    for (int i = 0; i < iters; i++)
        deep(30);
    t1 = cp_now_ns();
    printf("native capture, depth 24 (hit): %.0f ns\n", (double)(t1 - t0) / iters);
    t0 = cp_now_ns();
    for (int i = 0; i < iters; i++)
        deep(3);
    t1 = cp_now_ns();
    printf("native capture, depth ~8 (hit): %.0f ns\n", (double)(t1 - t0) / iters);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        bench();
        return 0;
    }
    test_depth_env();   /* first: its children must not inherit a read config */
    setenv("CUPROBE_STACK_DEPTH", "2", 1);
    test_attribution_and_interning();
    test_module_map();
    test_new_file();
    test_fork();
    test_threads();
    if (g_fail) {
        printf("%d checks failed\n", g_fail);
        return 1;
    }
    printf("stack tests passed\n");
    return 0;
}
