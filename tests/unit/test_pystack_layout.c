// link: build/interpose/callsite/cp_pylayout.o
/*
 * test_pystack_layout.c - the hard-coded CPython layouts are checked facts:
 * for every CPython include directory found (Debian's /usr/include/python3.X,
 * pyenv's, $CUPROBE_TEST_PY_INCLUDES), compile tests/py/pylayout_probe.c
 * against its internal headers, run it, and compare each offsetof() with
 * interpose/callsite/cp_pylayout.c.  For 3.13 a fake _Py_DebugOffsets block is filled
 * with the real offsets and cp_pylayout_select() must rebuild the same
 * layout from it.  Exit 77 when no headers (or no compiler) are available.
 */
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_pylayout.h"

#define MAX_KEYS 96

struct probe_out {
    char key[MAX_KEYS][48];
    long val[MAX_KEYS];
    int n;
};

static long probe_get(const struct probe_out *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) == 0)
            return p->val[i];
    return LONG_MIN;
}

#define LF(f) { #f, offsetof(struct cp_pylayout, f) }
static const struct { const char *key; size_t off; } k_fields[] = {
    LF(ts_cframe), LF(cframe_current_frame), LF(ts_current_frame), LF(ts_thread_id),
    LF(fr_code), LF(fr_previous), LF(fr_instr), LF(fr_owner), LF(owner_generator),
    LF(owner_cstack), LF(co_size), LF(co_filename), LF(co_qualname), LF(co_firstlineno),
    LF(co_linetable), LF(co_firsttraceable), LF(co_code), LF(ob_type), LF(bytes_size),
    LF(bytes_data), LF(uni_length), LF(uni_hash), LF(uni_state), LF(uni_ascii_data),
    LF(uni_compact_data),
};

#define DF(f) { "dbg_" #f, offsetof(struct cp_pydbg_fields, f) }
static const struct { const char *key; size_t off; } k_dbg[] = {
    DF(cookie), DF(version), DF(free_threaded), DF(ts_current_frame), DF(ts_thread_id),
    DF(fr_size), DF(fr_previous), DF(fr_executable), DF(fr_instr_ptr), DF(fr_owner),
    DF(co_size), DF(co_filename), DF(co_qualname), DF(co_linetable), DF(co_firstlineno),
    DF(co_code_adaptive), DF(ob_type), DF(tuple_ob_size), DF(bytes_ob_size),
    DF(bytes_ob_sval), DF(uni_state), DF(uni_length), DF(uni_asciiobject_size),
};

static int g_failures;

static void check(int ok, const char *inc, const char *what, long want, long got)
{
    if (!ok) {
        printf("FAIL %s: %s: headers say %ld, cuprobe has %ld\n", inc, what, want, got);
        g_failures++;
    }
}

static int run_probe(const char *cc, const char *src, const char *inc, const char *tmp,
                     struct probe_out *out)
{
    char cmd[6 * PATH_MAX], line[256];
    FILE *f;
    snprintf(cmd, sizeof(cmd), "%s -w -I'%s' -o '%s/probe' '%s' 2>'%s/cc.log' && '%s/probe'",
             cc, inc, tmp, src, tmp, tmp);
    f = popen(cmd, "r");
    if (!f)
        return -1;
    out->n = 0;
    while (fgets(line, sizeof(line), f) && out->n < MAX_KEYS) {
        if (sscanf(line, "%47s %ld", out->key[out->n], &out->val[out->n]) == 2)
            out->n++;
    }
    return pclose(f) == 0 && out->n > 0 ? 0 : -1;
}

/* Compare a layout with the probe's offsetof() values. */
static void compare_layout(const char *inc, const struct cp_pylayout *l,
                           const struct probe_out *p)
{
    for (size_t i = 0; i < sizeof(k_fields) / sizeof(k_fields[0]); i++) {
        int got = *(const int *)((const char *)l + k_fields[i].off);
        long want = probe_get(p, k_fields[i].key);
        if (want == LONG_MIN)
            want = -1;  /* the probe prints nothing for absent fields */
        if (strcmp(k_fields[i].key, "co_firsttraceable") == 0 && got == -1)
            continue;   /* not used for 3.13: the walker checks lasti >= 0 */
        check(want == got, inc, k_fields[i].key, want, got);
    }
}

/* 3.13: position of each debug offset, then the layout rebuilt from a fake
 * _PyRuntime carrying the real values. */
static void check_313(const char *inc, const struct probe_out *p, unsigned long version)
{
    static uint64_t fake[128];
    const struct cp_pydbg_fields *d = &cp_pydbg_313;
    struct cp_pylayout scratch;
    const struct cp_pylayout *l;
    char why[160];

    check(probe_get(p, "runtime_debug_offsets") == 0, inc, "debug_offsets first",
          0, probe_get(p, "runtime_debug_offsets"));
    for (size_t i = 0; i < sizeof(k_dbg) / sizeof(k_dbg[0]); i++) {
        int got = *(const int *)((const char *)d + k_dbg[i].off);
        check(probe_get(p, k_dbg[i].key) == got, inc, k_dbg[i].key,
              probe_get(p, k_dbg[i].key), got);
    }
    check(probe_get(p, "uni_hash") == probe_get(p, "uni_length") + 8, inc,
          "hash right after length", probe_get(p, "uni_length") + 8, probe_get(p, "uni_hash"));
    check(probe_get(p, "uni_compact_data") == probe_get(p, "uni_ascii_data") + 16, inc,
          "compact header = ascii + 16", probe_get(p, "uni_ascii_data") + 16,
          probe_get(p, "uni_compact_data"));

    memset(fake, 0, sizeof(fake));
    memcpy(fake, "xdebugpy", 8);
#define PUT(field, val) fake[d->field / 8] = (uint64_t)(val)
    PUT(version, version);
    PUT(ts_current_frame, probe_get(p, "ts_current_frame"));
    PUT(ts_thread_id, probe_get(p, "ts_thread_id"));
    PUT(fr_size, probe_get(p, "fr_sizeof"));
    PUT(fr_previous, probe_get(p, "fr_previous"));
    PUT(fr_executable, probe_get(p, "fr_code"));
    PUT(fr_instr_ptr, probe_get(p, "fr_instr"));
    PUT(fr_owner, probe_get(p, "fr_owner"));
    PUT(co_size, probe_get(p, "co_sizeof"));
    PUT(co_filename, probe_get(p, "co_filename"));
    PUT(co_qualname, probe_get(p, "co_qualname"));
    PUT(co_linetable, probe_get(p, "co_linetable"));
    PUT(co_firstlineno, probe_get(p, "co_firstlineno"));
    PUT(co_code_adaptive, probe_get(p, "co_code"));
    PUT(ob_type, probe_get(p, "ob_type"));
    PUT(tuple_ob_size, probe_get(p, "co_size"));
    PUT(bytes_ob_size, probe_get(p, "bytes_size"));
    PUT(bytes_ob_sval, probe_get(p, "bytes_data"));
    PUT(uni_state, probe_get(p, "uni_state"));
    PUT(uni_length, probe_get(p, "uni_length"));
    PUT(uni_asciiobject_size, probe_get(p, "uni_ascii_data"));
    l = cp_pylayout_select(version, fake, &scratch, why, sizeof(why));
    if (!l) {
        printf("FAIL %s: cp_pylayout_select refused the debug offsets: %s\n", inc, why);
        g_failures++;
        return;
    }
    compare_layout(inc, l, p);
    /* A wrong cookie or another version must be refused. */
    fake[0] ^= 1;
    check(cp_pylayout_select(version, fake, &scratch, why, sizeof(why)) == NULL, inc,
          "bad cookie refused", 1, 0);
    fake[0] ^= 1;
    PUT(free_threaded, 1);
    check(cp_pylayout_select(version, fake, &scratch, why, sizeof(why)) == NULL, inc,
          "free-threaded refused", 1, 0);
#undef PUT
}

static int check_one(const char *cc, const char *src, const char *inc, const char *tmp)
{
    struct probe_out p;
    struct cp_pylayout scratch;
    const struct cp_pylayout *l;
    unsigned long version;
    char why[160];

    if (run_probe(cc, src, inc, tmp, &p) != 0) {
        /* Unsupported versions may not even have the fields the probe names. */
        printf("note %s: probe did not build or run (unsupported version?)\n", inc);
        return 0;
    }
    version = (unsigned long)probe_get(&p, "version");
    printf("%s: PY_VERSION_HEX %#lx\n", inc, version);
    if (probe_get(&p, "codeunit_size") != LONG_MIN)
        check(probe_get(&p, "codeunit_size") == 2, inc, "code unit size", 2,
              probe_get(&p, "codeunit_size"));
    if ((version & 0xffff0000ul) == 0x030d0000ul) {
        check_313(inc, &p, version);
    } else {
        l = cp_pylayout_select(version, NULL, &scratch, why, sizeof(why));
        if (!l) {
            printf("  not supported by cuprobe (%s): nothing to compare\n", why);
            return 0;
        }
        compare_layout(inc, l, &p);
    }
    check(probe_get(&p, "state_kind_bits") == (long)(CP_PY_STATE_KIND_MASK << CP_PY_STATE_KIND_SHIFT),
          inc, "state.kind bits", probe_get(&p, "state_kind_bits"),
          (long)(CP_PY_STATE_KIND_MASK << CP_PY_STATE_KIND_SHIFT));
    check(probe_get(&p, "state_compact_bit") == CP_PY_STATE_COMPACT, inc, "state.compact bit",
          probe_get(&p, "state_compact_bit"), CP_PY_STATE_COMPACT);
    check(probe_get(&p, "state_ascii_bit") == CP_PY_STATE_ASCII, inc, "state.ascii bit",
          probe_get(&p, "state_ascii_bit"), CP_PY_STATE_ASCII);
    return 1;
}

int main(void)
{
    const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
    const char *cc = getenv("CC") ? getenv("CC") : "cc";
    const char *extra = getenv("CUPROBE_TEST_PY_INCLUDES");
    char pyenv[PATH_MAX];
    const char *patterns[] = {
        "/usr/include/python3.*", "/usr/local/include/python3.*", pyenv, NULL,
    };
    char src[PATH_MAX], tmp[] = "/tmp/cp-pylayout.XXXXXX", seen[32][PATH_MAX];
    int nseen = 0, checked = 0;
    glob_t g;

    snprintf(pyenv, sizeof(pyenv), "%s/.pyenv/versions/*/include/python3.*",
             getenv("HOME") ? getenv("HOME") : "/root");
    snprintf(src, sizeof(src), "%s/tests/py/pylayout_probe.c", root);
    if (access(src, R_OK) != 0) {
        printf("probe source %s not found (set ROOT)\n", src);
        return 77;
    }
    if (!mkdtemp(tmp))
        return 1;
    memset(&g, 0, sizeof(g));
    for (int i = 0; patterns[i]; i++)
        glob(patterns[i], i ? GLOB_APPEND : 0, NULL, &g);
    for (int pass = 0; pass < 2; pass++) {
        size_t n = pass == 0 ? g.gl_pathc : 1;
        for (size_t i = 0; i < n; i++) {
            const char *inc = pass == 0 ? g.gl_pathv[i] : extra;
            char real[PATH_MAX], probe_h[PATH_MAX + 40];
            int dup = 0;
            if (!inc || !realpath(inc, real))
                continue;
            snprintf(probe_h, sizeof(probe_h), "%s/internal/pycore_frame.h", real);
            if (access(probe_h, R_OK) != 0)
                continue;
            for (int k = 0; k < nseen; k++)
                dup |= strcmp(seen[k], real) == 0;
            if (dup || nseen == 32)
                continue;
            strcpy(seen[nseen++], real);
            checked += check_one(cc, src, real, tmp);
        }
    }
    globfree(&g);
    snprintf(src, sizeof(src), "rm -rf '%s'", tmp);
    if (system(src) != 0)
        printf("note: could not remove %s\n", tmp);
    if (g_failures) {
        printf("%d layout mismatches\n", g_failures);
        return 1;
    }
    if (!checked) {
        printf("no CPython 3.11+ internal headers found\n");
        return 77;
    }
    printf("layouts checked against %d header sets\n", checked);
    return 0;
}
