/*
 * fuzz_driver.c - runs LLVMFuzzerTestOneInput without libFuzzer (gcc):
 * every corpus file once, then random mutations of corpus entries for the
 * given time (-t 0: none, a replay of the corpus).  Crashes surface
 * through the sanitizers the build adds.
 *   fuzz_driver [-t SECONDS] [-s SEED] CORPUS_DIR_OR_FILE...
 * On a crash the input being run is in ./fuzz-current.bin.
 * A target's LLVMFuzzerInitialize runs first when it has one; its custom
 * mutator (never called here) may call LLVMFuzzerMutate, defined below.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

struct input {
    uint8_t *p;
    size_t n;
};

static struct input *g_in;
static size_t g_n, g_cap;

static void add_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    if (n < 0 || n > (64 << 20)) {
        fclose(f);
        return;
    }
    uint8_t *p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) == (size_t)n) {
        if (g_n == g_cap) {
            g_cap = g_cap ? 2 * g_cap : 64;
            g_in = realloc(g_in, g_cap * sizeof *g_in);
        }
        g_in[g_n++] = (struct input){p, (size_t)n};
    } else {
        free(p);
    }
    fclose(f);
}

static void add_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        add_file(path);
        return;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, e->d_name);
        add_file(p);
    }
    if (d)
        closedir(d);
}

static void run(const uint8_t *p, size_t n)
{
    /* Keep the input on disk so a sanitizer abort leaves it behind. */
    FILE *f = fopen("fuzz-current.bin", "wb");
    if (f) {
        fwrite(p, 1, n, f);
        fclose(f);
    }
    LLVMFuzzerTestOneInput(p, n);
}

static size_t mutate(uint8_t *b, size_t n, size_t cap)
{
    int k = 1 + rand() % 4;
    while (k--) {
        size_t at = n ? (size_t)rand() % n : 0;
        switch (rand() % 6) {
        case 0: if (n) b[at] ^= (uint8_t)(1u << (rand() % 8)); break;
        case 1: if (n) b[at] = (uint8_t)rand(); break;
        case 2: if (n) b[at] = (uint8_t)(rand() % 2 ? 0xff : 0x80); break;
        case 3: n = at + 1 < n ? at + 1 : n; break;                 /* truncate */
        case 4: if (n + 8 < cap) {                                  /* insert */
                    memmove(b + at + 4, b + at, n - at);
                    for (int i = 0; i < 4; i++)
                        b[at + i] = (uint8_t)rand();
                    n += 4;
                }
                break;
        case 5: if (n > at + 4) {                                   /* delete */
                    memmove(b + at, b + at + 4, n - at - 4);
                    n -= 4;
                }
                break;
        }
    }
    return n;
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max)
{
    return mutate(data, size, max);
}

int main(int argc, char **argv)
{
    double secs = 10;
    unsigned seed = (unsigned)time(NULL);
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc)
            break;
        if (!strcmp(argv[i], "-t"))
            secs = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "-s"))
            seed = (unsigned)atol(argv[i + 1]);
    }
    for (; i < argc; i++)
        add_path(argv[i]);
    if (!g_n) {
        fprintf(stderr, "fuzz_driver: empty corpus\n");
        return 2;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (size_t j = 0; j < g_n; j++)
        run(g_in[j].p, g_in[j].n);
    srand(seed);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    unsigned long runs = 0;
    size_t cap = 0;
    uint8_t *buf = NULL;
    while (secs > 0) {
        struct input *src = &g_in[(size_t)rand() % g_n];
        if (src->n + 64 > cap) {
            cap = src->n + 64;
            buf = realloc(buf, cap);
        }
        memcpy(buf, src->p, src->n);
        size_t n = mutate(buf, src->n, cap);
        if (n && rand() % 2)
            buf[0] = (uint8_t)(src->p[0] & 1);   /* keep the layer byte mostly */
        run(buf, n);
        runs++;
        if ((runs & 63) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &b);
            if ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9 >= secs)
                break;
        }
    }
    if (secs > 0)
        printf("fuzz_driver: %zu corpus inputs, %lu mutated runs, seed %u, no crash\n", g_n, runs, seed);
    else
        printf("fuzz_driver: %zu corpus inputs replayed, no crash\n", g_n);
    fflush(stdout);
    remove("fuzz-current.bin");
    free(buf);
    for (size_t j = 0; j < g_n; j++)
        free(g_in[j].p);
    free(g_in);
    return 0;
}
