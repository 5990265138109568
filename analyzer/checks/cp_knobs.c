/*
 * cp_knobs.c - the rules of the framework settings advice may suggest
 * (cp_knobs.h).
 *
 * One row per key: PyTorch's PYTORCH_CUDA_ALLOC_CONF is a list of
 * key:value pairs, each parsed by CUDAAllocatorConfig.cpp, which throws at
 * the first CUDA allocation on a value out of range (and so stops the
 * program); JAX reads each XLA_PYTHON_CLIENT_* variable whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_knobs.h"

enum { CP_KR_INT_MIN, CP_KR_OPEN01, CP_KR_HALF01, CP_KR_POW2, CP_KR_WORDS };

typedef struct cp_knob_rule {
    const char *var;        /* the environment variable */
    const char *key;        /* the key inside a key:value list; NULL: the whole value */
    int kind;               /* CP_KR_*: what makes a value valid */
    long min;               /* CP_KR_INT_MIN: the least value */
    const char *words;      /* CP_KR_WORDS: the values taken, '|' between them */
    int native_only;        /* ignored by backend:cudaMallocAsync */
} cp_knob_rule;

#define CP_TORCH_CONF "PYTORCH_CUDA_ALLOC_CONF"

static const cp_knob_rule cp_knob_rules[] = {
    { CP_TORCH_CONF, "max_split_size_mb", CP_KR_INT_MIN, CP_KNOB_MAX_SPLIT_MIN_MB, NULL, 1 },
    { CP_TORCH_CONF, "garbage_collection_threshold", CP_KR_OPEN01, 0, NULL, 1 },
    { CP_TORCH_CONF, "roundup_power2_divisions", CP_KR_POW2, 1, NULL, 1 },
    { CP_TORCH_CONF, "expandable_segments", CP_KR_WORDS, 0, "True|False", 1 },
    { CP_TORCH_CONF, "backend", CP_KR_WORDS, 0, "native|cudaMallocAsync", 0 },
    { CP_TORCH_CONF, "release_lock_on_cudamalloc", CP_KR_WORDS, 0, "True|False", 0 },
    { CP_TORCH_CONF, "pinned_use_cuda_host_register", CP_KR_WORDS, 0, "True|False", 0 },
    /* float() of the value times the card's total memory: above 1 the pool
     * cannot be had (without unified memory), 0 leaves no pool; newer JAX
     * reads XLA_CLIENT_MEM_FRACTION (refusing both at once). */
    { "XLA_PYTHON_CLIENT_MEM_FRACTION", NULL, CP_KR_HALF01, 0, NULL, 0 },
    { "XLA_CLIENT_MEM_FRACTION", NULL, CP_KR_HALF01, 0, NULL, 0 },
    /* Anything but false, False and 0 preallocates: only the two words
     * that say what they mean are suggested. */
    { "XLA_PYTHON_CLIENT_PREALLOCATE", NULL, CP_KR_WORDS, 0, "true|false", 0 },
    { "XLA_PYTHON_CLIENT_ALLOCATOR", NULL, CP_KR_WORDS, 0, "default|platform|bfc|cuda_async",
      0 },
};
#define CP_N_RULES (sizeof cp_knob_rules / sizeof cp_knob_rules[0])

/* Suggested verbatim by the out-of-memory verdict (check_oom_verdict.c). */
static const char *const cp_knob_fixed_list[] = {
    CP_TORCH_CONF "=expandable_segments:True",
    CP_TORCH_CONF "=garbage_collection_threshold:0.6",
    CP_KNOB_XLA_NO_PREALLOC,
    CP_KNOB_XLA_PREALLOC,
    CP_KNOB_XLA_PLATFORM,
};

static int cp_word_in(const char *v, size_t n, const char *words)
{
    for (const char *w = words; *w;) {
        size_t k = strcspn(w, "|");
        if (k == n && memcmp(w, v, n) == 0)
            return 1;
        w += k + (w[k] == '|');
    }
    return 0;
}

/* Value v (n bytes) of rule r.  @return : 0 or -EINVAL with why. */
static int cp_rule_check(const cp_knob_rule *r, const char *v, size_t n, char *why, size_t cap)
{
    char buf[64], *end;
    if (n == 0 || n >= sizeof buf) {
        snprintf(why, cap, "%s: no value", r->key ? r->key : r->var);
        return -EINVAL;
    }
    memcpy(buf, v, n);
    buf[n] = 0;
    const char *name = r->key ? r->key : r->var;
    errno = 0;
    switch (r->kind) {
    case CP_KR_INT_MIN:
    case CP_KR_POW2: {
        long k = strtol(buf, &end, 10);
        if (errno || *end || end == buf || k < r->min) {
            snprintf(why, cap, "%s takes a whole number of at least %ld, not %s", name, r->min,
                     buf);
            return -EINVAL;
        }
        if (r->kind == CP_KR_POW2 && (k & (k - 1)) != 0) {
            snprintf(why, cap, "%s takes a power of 2, not %s", name, buf);
            return -EINVAL;
        }
        return 0;
    }
    case CP_KR_OPEN01:
    case CP_KR_HALF01: {
        double d = strtod(buf, &end);
        int ok = !errno && !*end && end != buf && d > 0 &&
                 (r->kind == CP_KR_OPEN01 ? d < 1 : d <= 1);
        if (!ok) {
            snprintf(why, cap, "%s takes a fraction in (0, 1%c, not %s", name,
                     r->kind == CP_KR_OPEN01 ? ')' : ']', buf);
            return -EINVAL;
        }
        return 0;
    }
    default:
        if (cp_word_in(buf, n, r->words))
            return 0;
        snprintf(why, cap, "%s takes %s, not %s", name, r->words, buf);
        return -EINVAL;
    }
}

static const cp_knob_rule *cp_rule_find(const char *var, size_t nvar, const char *key,
                                        size_t nkey)
{
    for (size_t i = 0; i < CP_N_RULES; i++) {
        const cp_knob_rule *r = &cp_knob_rules[i];
        if (strlen(r->var) != nvar || memcmp(r->var, var, nvar) != 0)
            continue;
        if (!key ? !r->key : r->key && strlen(r->key) == nkey && !memcmp(r->key, key, nkey))
            return r;
    }
    return NULL;
}

/* PYTORCH_CUDA_ALLOC_CONF's list: every key known and valid, none twice,
 * and no option of the native allocator beside backend:cudaMallocAsync
 * (which ignores them: advice that does nothing is no advice). */
static int cp_torch_check(const char *var, size_t nvar, const char *v, char *why, size_t cap)
{
    int native = 0, async_backend = 0;
    unsigned seen = 0;
    while (*v) {
        size_t n = strcspn(v, ",");
        const char *colon = memchr(v, ':', n);
        if (!colon) {
            snprintf(why, cap, "%.*s: expected key:value", (int)n, v);
            return -EINVAL;
        }
        const cp_knob_rule *r = cp_rule_find(var, nvar, v, (size_t)(colon - v));
        if (!r) {
            snprintf(why, cap, "unrecognized option %.*s", (int)(colon - v), v);
            return -EINVAL;
        }
        unsigned bit = 1u << (r - cp_knob_rules);
        if (seen & bit) {
            snprintf(why, cap, "%s given twice", r->key);
            return -EINVAL;
        }
        seen |= bit;
        const char *val = colon + 1;
        size_t nval = n - (size_t)(val - v);
        if (cp_rule_check(r, val, nval, why, cap) != 0)
            return -EINVAL;
        native |= r->native_only;
        async_backend |= strcmp(r->key, "backend") == 0 && nval == 15 &&
                         memcmp(val, "cudaMallocAsync", 15) == 0;
        v += n + (v[n] == ',');
    }
    if (native && async_backend) {
        snprintf(why, cap, "backend:cudaMallocAsync ignores the native allocator's options");
        return -EINVAL;
    }
    return 0;
}

int cp_knob_check(const char *setting, char *why, size_t cap)
{
    const char *eq = strchr(setting, '=');
    if (!eq) {
        snprintf(why, cap, "%s: expected VAR=VALUE", setting);
        return -EINVAL;
    }
    size_t nvar = (size_t)(eq - setting);
    if (nvar == strlen(CP_TORCH_CONF) && memcmp(setting, CP_TORCH_CONF, nvar) == 0)
        return cp_torch_check(setting, nvar, eq + 1, why, cap);
    const cp_knob_rule *r = cp_rule_find(setting, nvar, NULL, 0);
    if (!r) {
        snprintf(why, cap, "%.*s: no rules known", (int)nvar, setting);
        return -ENOENT;
    }
    return cp_rule_check(r, eq + 1, strlen(eq + 1), why, cap);
}

uint64_t cp_knob_max_split_mb(uint64_t request)
{
    /* Blocks above the limit are never split, so half the request keeps
     * the blocks that could serve it whole; below the least value PyTorch
     * takes, the limit would have to be larger than the request and keeps
     * nothing whole for it. */
    uint64_t mb = (request >> 20) / 2;
    return mb >= CP_KNOB_MAX_SPLIT_MIN_MB ? mb : 0;
}

unsigned cp_knob_xla_fraction(uint64_t need, uint64_t total)
{
    if (!total)
        return 0;
    /* In hundredths, rounded up, plus 2 points of slack (XLA's temporary
     * buffers and alignment), then up to the next multiple of 5. */
    uint64_t pct = (need * 100 + total - 1) / total + 2;
    pct = (pct + 4) / 5 * 5;
    return pct <= CP_KNOB_XLA_FRACTION_MAX ? (unsigned)pct : 0;
}

const char *const *cp_knob_fixed(size_t *n)
{
    *n = sizeof cp_knob_fixed_list / sizeof cp_knob_fixed_list[0];
    return cp_knob_fixed_list;
}

int cp_knob_scan(const char *text, size_t *pos, char *out, size_t cap)
{
    for (const char *p = text + *pos; *p; p++) {
        for (size_t i = 0; i < CP_N_RULES; i++) {
            size_t nv = strlen(cp_knob_rules[i].var);
            if (strncmp(p, cp_knob_rules[i].var, nv) != 0 || p[nv] != '=' ||
                (p > text && (p[-1] == '_' || (p[-1] >= 'A' && p[-1] <= 'Z'))))
                continue;
            /* The value runs to the first character no setting uses. */
            size_t n = nv + 1 + strspn(p + nv + 1, "abcdefghijklmnopqrstuvwxyz"
                                                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:,");
            while (n > nv + 1 && (p[n - 1] == '.' || p[n - 1] == ','))
                n--;        /* the sentence's own punctuation */
            snprintf(out, cap, "%.*s", (int)n, p);
            *pos = (size_t)(p - text) + n;
            return 1;
        }
    }
    *pos = strlen(text);
    return 0;
}
