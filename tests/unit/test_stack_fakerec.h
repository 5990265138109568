/*
 * test_stack_fakerec.h - an in-memory stand-in for the recorder (cp_rec.h)
 * for the stack and Python-walker unit tests: records are appended to one
 * buffer as (type, len, payload) and can be decoded back.  Include it in
 * exactly one test file.
 */
#ifndef TEST_STACK_FAKEREC_H
#define TEST_STACK_FAKEREC_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cp_env.h"
#include "cp_rec.h"

struct fake_rec {
    unsigned type;
    size_t len;
    uint8_t *payload;
};

static pthread_mutex_t g_fr_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_rec *g_fr;
static size_t g_fr_n, g_fr_cap;
static uint32_t g_fr_gen = 1;
static void (*g_fr_cb[16])(void);
static int g_fr_ncb;
static int g_fr_on = 1;
static int g_fr_logs;           /* cp_log lines so far */
static __thread uint8_t t_fr_buf[1 << 16];
static __thread unsigned t_fr_type;
static __thread size_t t_fr_max;

int cp_rec_on(void) { return g_fr_on; }

uint8_t *cp_rec_begin(unsigned type, size_t max)
{
    if (!g_fr_on || max > sizeof(t_fr_buf))
        return NULL;
    t_fr_type = type;
    t_fr_max = max;
    return t_fr_buf;
}

void cp_rec_commit(uint8_t *end)
{
    size_t len = (size_t)(end - t_fr_buf);
    if (len > t_fr_max) {
        fprintf(stderr, "record type %u wrote %zu bytes, announced %zu\n", t_fr_type, len,
                t_fr_max);
        abort();
    }
    pthread_mutex_lock(&g_fr_lock);
    if (g_fr_n == g_fr_cap) {
        g_fr_cap = g_fr_cap ? 2 * g_fr_cap : 1024;
        g_fr = realloc(g_fr, g_fr_cap * sizeof(*g_fr));
    }
    g_fr[g_fr_n].type = t_fr_type;
    g_fr[g_fr_n].len = len;
    g_fr[g_fr_n].payload = malloc(len ? len : 1);
    memcpy(g_fr[g_fr_n].payload, t_fr_buf, len);
    g_fr_n++;
    pthread_mutex_unlock(&g_fr_lock);
}

uint32_t cp_rec_tid(void) { return 1; }
void cp_rec_flush(void) {}
uint32_t cp_rec_generation(void) { return __atomic_load_n(&g_fr_gen, __ATOMIC_ACQUIRE); }

void cp_rec_on_new_file(void (*fn)(void))
{
    if (g_fr_ncb < 16)
        g_fr_cb[g_fr_ncb++] = fn;
}

void cp_log(int level, const char *fmt, ...)
{
    va_list ap;
    (void)level;
    __atomic_add_fetch(&g_fr_logs, 1, __ATOMIC_RELAXED);
    va_start(ap, fmt);
    fprintf(stderr, "[cuprobe test] ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* The shim's clock without its fitted line (cp_clock.c is not linked):
 * cp_now_ns() reads clock_gettime. */
struct cp_clock_line cp__clock;

/* The configuration the stack code reads (cp_env.c is not linked: it pulls
 * in the real recorder).  Parsed once per process, like the real one. */
const struct cp_config *cp_config(void)
{
    static struct cp_config c;
    static int parsed;
    if (!parsed) {
        const char *d = getenv("CUPROBE_STACK_DEPTH"), *p = getenv("CUPROBE_PYTHON");
        c.stack_depth = d ? (unsigned)atoi(d) : 24;
        c.python = p ? atoi(p) : 1;
        const char *pd = getenv("CUPROBE_PYTHON_DEPTH");
        c.python_depth = pd ? (unsigned)atoi(pd) : 64;
        const char *sc = getenv("CUPROBE_STACK_CACHE");
        c.stack_cache = sc ? atoi(sc) : 1;   /* the shim's default */
        c.log_level = 3;
        parsed = 1;
    }
    return &c;
}

/* Start a "new trace file": bump the generation, drop the old records and
 * run the new-file callbacks, like the recorder does in a forked child. */
static inline void fake_rec_new_file(void)
{
    pthread_mutex_lock(&g_fr_lock);
    for (size_t i = 0; i < g_fr_n; i++)
        free(g_fr[i].payload);
    g_fr_n = 0;
    pthread_mutex_unlock(&g_fr_lock);
    __atomic_add_fetch(&g_fr_gen, 1, __ATOMIC_ACQ_REL);
    for (int i = 0; i < g_fr_ncb; i++)
        g_fr_cb[i]();
}

static inline size_t fake_rec_count(unsigned type)
{
    size_t n = 0;
    pthread_mutex_lock(&g_fr_lock);
    for (size_t i = 0; i < g_fr_n; i++)
        n += g_fr[i].type == type;
    pthread_mutex_unlock(&g_fr_lock);
    return n;
}

/* The first record of `type` whose first field is `id`, or NULL. */
static inline const struct fake_rec *fake_rec_find(unsigned type, uint64_t id)
{
    const struct fake_rec *r = NULL;
    pthread_mutex_lock(&g_fr_lock);
    for (size_t i = 0; i < g_fr_n && !r; i++) {
        const uint8_t *p = g_fr[i].payload;
        uint64_t v;
        if (g_fr[i].type != type)
            continue;
        if (cp_get_u(&p, g_fr[i].payload + g_fr[i].len, &v) == 0 && v == id)
            r = &g_fr[i];
    }
    pthread_mutex_unlock(&g_fr_lock);
    return r;
}

/* How many records of `type` define `id` (first field). */
static inline int fake_rec_defs(unsigned type, uint64_t id)
{
    int n = 0;
    pthread_mutex_lock(&g_fr_lock);
    for (size_t i = 0; i < g_fr_n; i++) {
        const uint8_t *p = g_fr[i].payload;
        uint64_t v;
        if (g_fr[i].type == type && cp_get_u(&p, g_fr[i].payload + g_fr[i].len, &v) == 0 &&
            v == id)
            n++;
    }
    pthread_mutex_unlock(&g_fr_lock);
    return n;
}

/* A CP_REC_STACK record decoded. */
struct fake_stack {
    uint64_t id, n_native, n_py;
    uint64_t ip[512], py[512];
};

static inline int fake_rec_stack(uint64_t id, struct fake_stack *s)
{
    const struct fake_rec *r = fake_rec_find(CP_REC_STACK, id);
    const uint8_t *p, *end;
    if (!r)
        return -1;
    p = r->payload;
    end = p + r->len;
    if (cp_get_u(&p, end, &s->id) || cp_get_u(&p, end, &s->n_native) || s->n_native > 512)
        return -1;
    for (uint64_t i = 0; i < s->n_native; i++)
        if (cp_get_u(&p, end, &s->ip[i]))
            return -1;
    if (cp_get_u(&p, end, &s->n_py) || s->n_py > 512)
        return -1;
    for (uint64_t i = 0; i < s->n_py; i++)
        if (cp_get_u(&p, end, &s->py[i]))
            return -1;
    return p == end ? 0 : -1;
}

#endif /* TEST_STACK_FAKEREC_H */
