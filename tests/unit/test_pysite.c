// link: build/interpose/callsite/cp_pysite.o build/interpose/callsite/cp_pystr.o build/interpose/callsite/cp_pylayout.o build/interpose/callsite/cp_itab.o
/*
 * test_pysite.c - the call-site cache and its code-watcher memo on fake
 * CPython 3.12 objects (a code object, two str objects, a line table), so
 * that a test can change what the "interpreter" holds behind the cache's
 * back: without the memo every hit is validated, and a changed string
 * hash (a new object at a reused address) is resolved again; with the memo
 * on, a hit with an unchanged epoch is answered without looking (the stale
 * answer is kept, as designed: a real code object cannot change while it
 * lives), and after a DESTROY event the next hit validates and resolves the
 * new contents.  Lookups by a caller that does not hold the code object
 * (the launch path) never stamp, and a walk stamps with the epoch it read
 * at its start.
 */
#include <errno.h>
#include <string.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "test_stack_fakerec.h"
#include "cp_pylayout.h"
#include "cp_pysite.h"

static const struct cp_pylayout *L = &cp_pylayout_312;
/* Stand-ins for PyUnicode_Type and PyBytes_Type: only their addresses
 * matter. */
static char g_unicode_type, g_bytes_type;

struct fake_str { _Alignas(16) unsigned char b[128]; };
struct fake_code {
    _Alignas(16) unsigned char b[256];
    struct fake_str file, func;
    _Alignas(16) unsigned char lt[64];
};

static void put(void *base, int off, const void *v, size_t n)
{
    memcpy((char *)base + off, v, n);
}

static void str_set(struct fake_str *s, const char *text, int64_t hash)
{
    uintptr_t t = (uintptr_t)&g_unicode_type;
    int64_t len = (int64_t)strlen(text);
    uint32_t state = (1u << CP_PY_STATE_KIND_SHIFT) | CP_PY_STATE_COMPACT | CP_PY_STATE_ASCII;
    memset(s->b, 0, sizeof(s->b));
    put(s->b, L->ob_type, &t, sizeof(t));
    put(s->b, L->uni_length, &len, sizeof(len));
    put(s->b, L->uni_hash, &hash, sizeof(hash));
    put(s->b, L->uni_state, &state, sizeof(state));
    put(s->b, L->uni_ascii_data, text, (size_t)len + 1);
}

/* A code object whose line table says: instructions 0-7 on firstlineno,
 * 8-15 two lines further (no-column entries with signed deltas 0, +2). */
static void code_init(struct fake_code *c, const char *file, const char *func)
{
    static const unsigned char table[] = { 0x80 | (13 << 3) | 7, 0, 0x80 | (13 << 3) | 7, 4 };
    uintptr_t bt = (uintptr_t)&g_bytes_type, p;
    int64_t lt_size = sizeof(table);
    int32_t first = 10;
    memset(c->b, 0, sizeof(c->b));
    memset(c->lt, 0, sizeof(c->lt));
    str_set(&c->file, file, 1001);
    str_set(&c->func, func, 2002);
    put(c->lt, L->ob_type, &bt, sizeof(bt));
    put(c->lt, L->bytes_size, &lt_size, sizeof(lt_size));
    put(c->lt, L->bytes_data, table, sizeof(table));
    p = (uintptr_t)c->file.b;
    put(c->b, L->co_filename, &p, sizeof(p));
    p = (uintptr_t)c->func.b;
    put(c->b, L->co_qualname, &p, sizeof(p));
    p = (uintptr_t)c->lt;
    put(c->b, L->co_linetable, &p, sizeof(p));
    put(c->b, L->co_firstlineno, &first, sizeof(first));
}

static const struct cp_pysite *get(struct fake_code *c, int lasti, int held)
{
    /* One lookup per batch: the epoch is read right before it. */
    return cp_pysite_get((uintptr_t)c->b, lasti, cp_pysite_memo(), held);
}

static int names(const struct cp_pysite *s, const char *file, const char *func, int line)
{
    return s && s->file_len == strlen(file) && !memcmp(s->file, file, s->file_len) &&
           s->func_len == strlen(func) && !memcmp(s->func, func, s->func_len) && s->line == line;
}

/* Counter deltas since the last call. */
static struct cp_pysite_stats g_last;
static void delta(uint64_t *hits, uint64_t *valid, uint64_t *resolved)
{
    struct cp_pysite_stats now;
    cp_pysite_stats(&now);
    *hits = now.memo_hits - g_last.memo_hits;
    *valid = now.validations - g_last.validations;
    *resolved = now.resolves - g_last.resolves;
    g_last = now;
}

#define EXPECT(h, v, r)                                                          \
    do {                                                                         \
        uint64_t h_, v_, r_;                                                     \
        delta(&h_, &v_, &r_);                                                    \
        CHECK(h_ == (h) && v_ == (v) && r_ == (r));                              \
        if (h_ != (h) || v_ != (v) || r_ != (r))                                 \
            printf("     hits %llu validations %llu resolved %llu\n",            \
                   (unsigned long long)h_, (unsigned long long)v_,               \
                   (unsigned long long)r_);                                      \
    } while (0)

static struct fake_code g_a, g_b, g_c, g_d;

/* Without the memo (3.11, or no watcher slot): as before it existed. */
static void memo_off(void)
{
    const struct cp_pysite *s, *t;
    code_init(&g_a, "a.py", "f");
    s = get(&g_a, 0, 1);
    CHECK(names(s, "a.py", "f", 10));
    CHECK(names(get(&g_a, 9, 1), "a.py", "f", 12));
    EXPECT(0, 0, 2);
    CHECK(get(&g_a, 0, 1) == s);
    EXPECT(0, 1, 0);
    /* A new code object at the same address, same string objects with new
     * contents (and hashes): seen by validation. */
    str_set(&g_a.file, "b.py", 1003);
    t = get(&g_a, 0, 1);
    CHECK(t != s && names(t, "b.py", "f", 10));
    EXPECT(0, 1, 1);
    /* Destroy events before the watcher is on change nothing. */
    CHECK(cuprobe_py_code_event(1, g_a.b) == 0);
    CHECK(get(&g_a, 0, 1) == t);
    EXPECT(0, 1, 0);
    CHECK(!cp_pysite_memo_on());
}

static void memo_on(void)
{
    const struct cp_pysite *s, *t;
    uint64_t m;
    code_init(&g_b, "m.py", "g");
    CHECK(cp_pysite_memo_start() == 0 && cp_pysite_memo_on());
    CHECK(cp_pysite_memo_start() == 0);     /* twice: still on */
    s = get(&g_b, 0, 1);                    /* resolved and stamped */
    CHECK(names(s, "m.py", "g", 10));
    EXPECT(0, 0, 1);
    CHECK(get(&g_b, 0, 1) == s);
    CHECK(get(&g_b, 0, 0) == s);            /* not held: hits may be taken */
    EXPECT(2, 0, 0);
    /* Sites stamped before the watcher was on are validated once. */
    t = get(&g_a, 0, 1);
    CHECK(names(t, "b.py", "f", 10));
    CHECK(get(&g_a, 0, 1) == t);
    EXPECT(1, 1, 0);

    /* Change the contents with no event: the memo keeps its answer (no
     * code object died, so the address still holds the one it saw). */
    str_set(&g_b.file, "n.py", 1005);
    CHECK(get(&g_b, 0, 1) == s);
    CHECK(cuprobe_py_code_event(0, g_b.b) == 0);    /* CREATE: no effect */
    CHECK(get(&g_b, 0, 1) == s);
    EXPECT(2, 0, 0);
    /* A DESTROY (of any code object): the next hit validates, sees the new
     * object and resolves it; then hits again. */
    CHECK(cuprobe_py_code_event(1, g_c.b) == 0);
    t = get(&g_b, 0, 1);
    CHECK(t != s && names(t, "n.py", "g", 10));
    CHECK(get(&g_b, 0, 1) == t);
    EXPECT(1, 1, 1);
    /* An event value a later CPython might add counts as a death too. */
    CHECK(cuprobe_py_code_event(7, g_b.b) == 0);
    CHECK(get(&g_b, 0, 1) == t);
    EXPECT(0, 1, 0);

    /* Not held: validated, never stamped, so validated again. */
    CHECK(cuprobe_py_code_event(1, g_b.b) == 0);
    CHECK(get(&g_b, 0, 0) == t && get(&g_b, 0, 0) == t);
    EXPECT(0, 2, 0);
    CHECK(get(&g_b, 0, 1) == t && get(&g_b, 0, 0) == t);
    EXPECT(1, 1, 0);
    /* A site resolved by an unheld lookup is not stamped either. */
    code_init(&g_c, "r.py", "h");
    CHECK(names(get(&g_c, 0, 0), "r.py", "h", 10));
    CHECK(names(get(&g_c, 0, 0), "r.py", "h", 10));
    CHECK(!cp_pysite_memo_get((uintptr_t)g_c.b, 0, cp_pysite_memo(), 1));
    EXPECT(0, 1, 1);

    /* The walker's first look, before it reads the code object: a site
     * stamped at a traceable instruction answers any frame; one stamped by
     * a generator's frame before the rule's instruction (CPython's
     * co_firsttraceable) only generator frames; nothing unstamped, with the
     * memo off, or after a death. */
    code_init(&g_d, "w.py", "k");
    m = cp_pysite_memo();
    CHECK(!cp_pysite_memo_get((uintptr_t)g_d.b, 0, m, 0));
    CHECK(names(cp_pysite_get((uintptr_t)g_d.b, 0, m, CP_PYSITE_HELD | CP_PYSITE_TRACEABLE),
                "w.py", "k", 10));
    CHECK(cp_pysite_memo_get((uintptr_t)g_d.b, 0, m, 0) != NULL);
    CHECK(!cp_pysite_memo_get((uintptr_t)g_d.b, 0, 0, 0));
    CHECK(!cp_pysite_memo_get((uintptr_t)g_d.b, -1, m, 0));
    CHECK(names(cp_pysite_get((uintptr_t)g_d.b, 9, m, CP_PYSITE_HELD), "w.py", "k", 12));
    CHECK(!cp_pysite_memo_get((uintptr_t)g_d.b, 9, m, 0));
    CHECK(cp_pysite_memo_get((uintptr_t)g_d.b, 9, m, 1) != NULL);
    CHECK(cuprobe_py_code_event(1, g_d.b) == 0);
    CHECK(!cp_pysite_memo_get((uintptr_t)g_d.b, 0, cp_pysite_memo(), 0));
    EXPECT(2, 0, 2);

    /* A code object dies while a walk validates: the site is stamped with
     * the epoch the walk read at its start, so the next walk validates
     * again before it hits. */
    CHECK(cuprobe_py_code_event(1, g_c.b) == 0);
    m = cp_pysite_memo();
    CHECK(cuprobe_py_code_event(1, g_c.b) == 0);
    CHECK(cp_pysite_get((uintptr_t)g_b.b, 0, m, 1) == t);
    EXPECT(0, 1, 0);
    CHECK(get(&g_b, 0, 1) == t && get(&g_b, 0, 1) == t);
    EXPECT(1, 1, 0);
    CHECK(m != 0 && m != cp_pysite_memo());

    /* Off for good: every hit validates again, and it cannot restart. */
    cp_pysite_memo_stop("test");
    CHECK(!cp_pysite_memo_on());
    str_set(&g_b.file, "o.py", 1007);
    CHECK(names(get(&g_b, 0, 1), "o.py", "g", 10));
    CHECK(names(get(&g_b, 0, 1), "o.py", "g", 10));
    EXPECT(0, 2, 1);
    CHECK(cp_pysite_memo_start() == -ECANCELED && !cp_pysite_memo_on());
    cp_pysite_memo_stop("again");   /* idempotent, logs once */
}

int main(void)
{
    int logs;
    cp_pysite_setup(L, (uintptr_t)&g_unicode_type, (uintptr_t)&g_bytes_type);
    memo_off();
    logs = g_fr_logs;
    memo_on();
    /* One line when it went on, one when it went off. */
    CHECK(g_fr_logs == logs + 2);
    if (g_fail) {
        printf("%d checks failed\n", g_fail);
        return 1;
    }
    printf("call-site cache and memo tests passed\n");
    return 0;
}
