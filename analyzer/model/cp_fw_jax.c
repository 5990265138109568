/*
 * cp_fw_jax.c - the companion's JAX records (see cp_fw_jax.h).  XLA's
 * message texts are those of jaxlib 0.4-0.7: the BFC allocator's
 * "RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes."
 * and the GPU executable's "Failed to allocate request for X (NB) on
 * device ordinal D".
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cp_fw_jax.h"

/* memory_stats() keys read as they are; have: the flag set when present */
static const struct {
    const char *key;
    size_t off, have;
} jx_keys[] = {
#define JX_KEY(key, field, have) { key, offsetof(cp_jax_dev, field), have }
    JX_KEY("bytes_in_use", in_use, 0),
    JX_KEY("peak_bytes_in_use", peak, 0),
    JX_KEY("num_allocs", num_allocs, 0),
    JX_KEY("largest_alloc_size", largest_alloc, 0),
    JX_KEY("bytes_limit", limit, offsetof(cp_jax_dev, have_limit)),
    JX_KEY("largest_free_block_bytes", largest_free, offsetof(cp_jax_dev, have_free)),
    JX_KEY("pool_bytes", pool_bytes, offsetof(cp_jax_dev, have_pool)),
#undef JX_KEY
};

int cp_jax_devs_parse(cp_jv rec, cp_jax_dev *out, int cap)
{
    cp_jv devs, d;
    size_t it = 0;
    int n = 0;
    if (cp_json_member(rec, "devices", &devs))
        return 0;
    while (n < cap && cp_json_next(devs, &it, &d) == 1) {
        cp_jax_dev *x = &out[n++];
        memset(x, 0, sizeof *x);
        x->id = -1;
        x->hw = -1;
        cp_json_i64(d, "id", &x->id);
        cp_json_i64(d, "local_hardware_id", &x->hw);
        for (size_t k = 0; k < sizeof jx_keys / sizeof *jx_keys; k++) {
            uint64_t *v = (uint64_t *)((char *)x + jx_keys[k].off);
            int got = cp_json_u64(d, jx_keys[k].key, v) == 0;
            if (jx_keys[k].have)
                *(int *)((char *)x + jx_keys[k].have) = got;
        }
        /* A limit of 0 is no limit reported. */
        x->have_limit = x->have_limit && x->limit;
    }
    return n;
}

int cp_jax_at_parse(cp_jv rec, cp_jax_at *at)
{
    cp_jv where, frames, f;
    size_t it = 0;
    at->n = 0;
    if (cp_json_member(rec, "at", &where) || cp_json_member(where, "frames", &frames))
        return 0;
    while (at->n < CP_JAX_AT_FRAMES && cp_json_next(frames, &it, &f) == 1) {
        int k = at->n;
        int64_t line = 0;
        if (cp_json_str(f, "file", at->file[k], sizeof at->file[k]) || !at->file[k][0] ||
            cp_json_i64(f, "line", &line) || line <= 0)
            continue;
        if (cp_json_str(f, "func", at->func[k], sizeof at->func[k]))
            at->func[k][0] = 0;
        at->line[k] = line;
        at->n++;
    }
    return at->n;
}

/* The number right after pat in s (digits), or 0 when pat is absent. */
static uint64_t jx_num_after(const char *s, const char *pat, const char **end)
{
    const char *at = strstr(s, pat);
    char *e;
    if (!at)
        return 0;
    at += strlen(pat);
    if (*at < '0' || *at > '9')
        return 0;
    uint64_t v = strtoull(at, &e, 10);
    if (end)
        *end = e;
    return v;
}

/* XLA's human-readable size at s ("26.21GiB", "512.0KiB", "100B"; the BFC
 * allocator's message since jaxlib 0.4.3x): bytes, rounded as XLA printed
 * them, or 0.  *end past the unit. */
static uint64_t jx_human_bytes(const char *s, const char **end)
{
    static const char units[] = "KMGTPE";
    char *e;
    if (*s < '0' || *s > '9')
        return 0;
    double v = strtod(s, &e);
    while (*e == ' ')
        e++;
    const char *u = strchr(units, *e);
    if (*e && u && e[1] == 'i' && e[2] == 'B') {
        for (int i = 0; i <= u - units; i++)
            v *= 1024.0;
        e += 3;
    } else if (*e == 'B') {
        e++;
    } else {
        return 0;
    }
    if (end)
        *end = e;
    return v > 0 && v < 1.8e19 ? (uint64_t)(v + 0.5) : 0;
}

uint64_t cp_jax_request(const char *msg, int64_t *ordinal)
{
    const char *e = NULL;
    *ordinal = -1;
    uint64_t v = jx_num_after(msg, "trying to allocate ", &e);
    if (v && e && strncmp(e, " bytes", 6) == 0)
        return v;
    /* "Out of memory while trying to allocate 26.21GiB with allocator
     * GPU_0_bfc on device 0." */
    const char *t = strstr(msg, "trying to allocate ");
    if (t && (v = jx_human_bytes(t + 19, &e)) != 0) {
        const char *o = strstr(e, " on device ");
        if (o && o[11] >= '0' && o[11] <= '9')
            *ordinal = strtoll(o + 11, NULL, 10);
        return v;
    }
    /* "Failed to allocate request for 2.99GiB (3206250496B) on device
     * ordinal 0": the exact count is the one in parentheses. */
    const char *r = strstr(msg, "allocate request for ");
    if (!r)
        return 0;
    v = jx_num_after(r, "(", &e);
    if (v && e && *e == 'B') {
        const char *o = strstr(e, "device ordinal ");
        if (o && o[15] >= '0' && o[15] <= '9')
            *ordinal = strtoll(o + 15, NULL, 10);
    }
    return v;
}

/* A string member, cut at the first escaped newline (the message's first
 * line; other escapes are kept as written). */
static void jx_str_line(cp_jv v, const char *key, char *buf, size_t cap)
{
    buf[0] = 0;
    if (cp_json_str(v, key, buf, cap) != 0)
        return;
    char *nl = strstr(buf, "\\n");
    if (nl)
        *nl = 0;
}

/* The program's own frame: frames[user_frame]. */
static void jx_user_frame(cp_jv v, cp_jax_oom *o)
{
    cp_jv frames, f;
    int64_t user = -1;
    size_t it = 0;
    if (cp_json_i64(v, "user_frame", &user) || user < 0 ||
        cp_json_member(v, "frames", &frames))
        return;
    for (int64_t i = 0; cp_json_next(frames, &it, &f) == 1; i++) {
        if (i != user)
            continue;
        cp_json_str(f, "file", o->user_file, sizeof o->user_file);
        cp_json_str(f, "func", o->user_func, sizeof o->user_func);
        cp_json_i64(f, "line", &o->user_line);
        return;
    }
}

int cp_jax_oom_parse(const char *json, size_t n, cp_jax_oom *o)
{
    cp_jv v = { json, n }, env;
    char msg[4096];
    memset(o, 0, sizeof *o);
    o->ordinal = -1;
    if (cp_json_str(v, "message", msg, sizeof msg) != 0)
        return -1;
    o->request = cp_jax_request(msg, &o->ordinal);
    jx_str_line(v, "message", o->line, sizeof o->line);
    cp_json_str(v, "hook", o->hook, sizeof o->hook);
    cp_json_str(v, "type", o->type, sizeof o->type);
    cp_json_str(v, "jax_version", o->version, sizeof o->version);
    o->n_dev = cp_jax_devs_parse(v, o->dev, CP_JAX_DEVS);
    jx_user_frame(v, o);
    if (cp_json_member(v, "env", &env) == 0) {
        cp_json_str(env, "XLA_PYTHON_CLIENT_PREALLOCATE", o->preallocate, sizeof o->preallocate);
        cp_json_str(env, "XLA_PYTHON_CLIENT_ALLOCATOR", o->allocator, sizeof o->allocator);
        /* XLA_CLIENT_MEM_FRACTION is the newer name; JAX refuses both. */
        static const char *const fr[] = { "XLA_CLIENT_MEM_FRACTION",
                                           "XLA_PYTHON_CLIENT_MEM_FRACTION" };
        for (size_t i = 0; i < sizeof fr / sizeof *fr && !o->fraction[0]; i++)
            if (cp_json_str(env, fr[i], o->fraction, sizeof o->fraction) == 0)
                strcpy(o->fraction_var, fr[i]);
    }
    return 0;
}

int cp_jax_oom_device(const cp_jax_oom *o)
{
    int best = -1;
    uint64_t best_room = UINT64_MAX;
    for (int i = 0; i < o->n_dev; i++) {
        const cp_jax_dev *d = &o->dev[i];
        if (o->ordinal >= 0 && (d->hw >= 0 ? d->hw : d->id) == o->ordinal)
            return i;
        uint64_t room = d->have_limit && d->limit > d->in_use ? d->limit - d->in_use : 0;
        if (best < 0 || room < best_room) {
            best = i;
            best_room = room;
        }
    }
    return best;
}
