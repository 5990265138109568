/*
 * test_report_errors.c - cuda-errors on synthetic traces of what the fake
 * driver cannot produce: a process exit where the driver answers
 * CUDA_ERROR_DEINITIALIZED (PyTorch releasing its primary contexts from an
 * atexit handler) and then CUDA_ERROR_NOT_INITIALIZED, a failed
 * cuGetProcAddress for an optional symbol, a use before cuInit recovered
 * from (info) and one never recovered from (error), and a
 * child forked after its parent initialised CUDA whose calls fail with
 * CUDA_ERROR_NOT_INITIALIZED.  Writes the traces, runs
 * `cuprobe-analyze report --list` ($B, default $ROOT/build) and compares.
 */
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_decode_gen.h"

#define CUDA_ERROR_NOT_INITIALIZED 3

#define U(v) (g->p = cp_put_u(g->p, (v)))
#define S(v) (g->p = cp_put_s(g->p, (v)))
#define STR(s) (g->p = cp_put_str(g->p, (s), strlen(s)))

enum { A_INIT = 1, A_ALLOC, A_RELEASE, A_GPA, A_CTXDEV, A_FREE };

static int fails;

static void ev(struct gen *g, uint64_t api, uint64_t result)
{
    U(api); U(result); U(0x5550000); S(0); U(0); U(1500); U(0);
}

static void header(struct gen *g, uint64_t pid, uint64_t ppid)
{
    g->ts = 5000000000ull + pid * 1000000ull;
    gen_begin(g, CP_REC_HEADER, 1);
    U(pid); U(ppid); U(1700000000000000000ull); U(ppid);
    STR("host"); STR("/usr/bin/python3"); STR("0.1.0");
    U(1); STR("python3"); U(0); U(4096);
    gen_end(g);
    static const char *const names[] = { NULL, "cuInit", "cuMemAlloc_v2",
                                         "cuDevicePrimaryCtxRelease_v2", "cuGetProcAddress_v2",
                                         "cuCtxGetDevice", "cuMemFree_v2" };
    for (uint64_t i = 1; i <= A_FREE; i++) {
        gen_begin(g, CP_REC_API, 1); U(i); STR(names[i]); U(1); gen_end(g);
    }
    gen_begin(g, CP_REC_DRIVER, 1); S(12040); U(0); gen_end(g);
}

static void device(struct gen *g)
{
    gen_begin(g, CP_REC_DEVICE, 1);
    U(0); STR("NVIDIA H200");
    for (int i = 0; i < 16; i++)
        *g->p++ = (uint8_t)(0x10 + i);
    U(0); U(6); U(0); U(9); U(0); U(150000000000ull); U(0); U(0); U(132);
    gen_end(g);
}

static void call(struct gen *g, uint64_t api, uint64_t result)
{
    gen_begin(g, CP_REC_CALL, 1); ev(g, api, result); gen_end(g);
}

static void alloc_free(struct gen *g)
{
    gen_begin(g, CP_REC_ALLOC, 1); ev(g, A_ALLOC, 0);
    U(CP_MK_DEVICE); U(0x7f1200000000ull); U(1 << 20); U(0); U(0); gen_end(g);
    gen_begin(g, CP_REC_FREE, 1); ev(g, A_FREE, 0);
    U(CP_MK_DEVICE); U(0x7f1200000000ull); U(1 << 20); gen_end(g);
}

static void finish(struct gen *g, const char *path)
{
    gen_begin(g, CP_REC_END, 0); U(CP_END_DESTRUCTOR); S(0); U(10); U(0); gen_end(g);
    size_t len;
    uint8_t *f = gen_file(g->raw, g->n, g->n / 2, &len);
    FILE *o = fopen(path, "wb");
    if (!o || fwrite(f, 1, len, o) != len || fclose(o) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    free(f);
    free(g->raw);
    memset(g, 0, sizeof *g);
}

/* The sorted --list of the traces must be exactly want. */
static void expect(const char *ana, const char *traces, const char *want)
{
    char cmd[4096], got[4096] = "";
    snprintf(cmd, sizeof cmd, "%s report --list %s | sort", ana, traces);
    FILE *p = popen(cmd, "r");
    if (!p) {
        perror("popen");
        exit(1);
    }
    size_t n = fread(got, 1, sizeof got - 1, p);
    got[n] = 0;
    pclose(p);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "FAIL %s\nwant:\n%sgot:\n%s", traces, want, got);
        fails++;
    }
}

int main(void)
{
    char ana[1024], dir[] = "/tmp/cp-report-errors.XXXXXX", a[1200], b[1200], c[1200],
                    both[2500];
    const char *root = getenv("ROOT"), *bd = getenv("B");
    if (bd && *bd == '/')
        snprintf(ana, sizeof ana, "%s/cuprobe-analyze", bd);
    else
        snprintf(ana, sizeof ana, "%s/%s/cuprobe-analyze", root ? root : ".", bd ? bd : "build");
    if (access(ana, X_OK) != 0) {
        fprintf(stderr, "skip: %s not built\n", ana);
        return 77;
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    struct gen g0 = { 0 }, *g = &g0;

    /* A: a use before cuInit the program recovered from (the same
     * cuMemAlloc succeeds after cuInit: info), one probe, exit-time noise. */
    header(g, 100, 1);
    call(g, A_ALLOC, CUDA_ERROR_NOT_INITIALIZED);
    call(g, A_INIT, 0);
    device(g);
    alloc_free(g);
    call(g, A_GPA, 500);
    for (int i = 0; i < 3; i++)
        call(g, A_RELEASE, 4);
    call(g, A_CTXDEV, CUDA_ERROR_NOT_INITIALIZED);
    snprintf(a, sizeof a, "%s/a.trace", dir);
    finish(g, a);
    expect(ana, a, "cuda-errors info 1\ncuda-errors info 1\ncuda-errors info 1\n"
                   "cuda-errors info 3\n");
    unlink(a);

    /* A without the later cuMemAlloc: never recovered, an error. */
    header(g, 100, 1);
    call(g, A_ALLOC, CUDA_ERROR_NOT_INITIALIZED);
    call(g, A_INIT, 0);
    device(g);
    call(g, A_GPA, 500);
    finish(g, a);
    /* (it did no GPU work: no-gpu-used is right too) */
    expect(ana, a, "cuda-errors error 1\ncuda-errors info 1\nno-gpu-used warning 1\n");

    /* B forks C after cuInit; C's calls fail: fork-after-init is the error. */
    header(g, 200, 1);
    call(g, A_INIT, 0);
    device(g);
    alloc_free(g);
    gen_begin(g, CP_REC_FORK, 1); U(201); gen_end(g);
    snprintf(b, sizeof b, "%s/b.trace", dir);
    finish(g, b);
    header(g, 201, 200);
    device(g);
    call(g, A_ALLOC, CUDA_ERROR_NOT_INITIALIZED);
    snprintf(c, sizeof c, "%s/c.trace", dir);
    finish(g, c);
    snprintf(both, sizeof both, "%s %s", b, c);
    expect(ana, both, "cuda-errors info 1\nfork-after-init error 1\n");
    /* Without the parent's trace the failure stays an error. */
    expect(ana, c, "cuda-errors error 1\n");

    unlink(a);
    unlink(b);
    unlink(c);
    rmdir(dir);
    if (fails)
        return 1;
    printf("cuda-errors rules: ok\n");
    return 0;
}
