/*
 * cp_fw.c - framework records: a small JSON reader and PyTorch's
 * allocator summaries (see cp_fw.h).  The companion writes compact JSON
 * with plain ASCII keys; the reader is strict about structure and never
 * reads past the slice it is given, so a damaged record only loses fields.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_fw.h"

static size_t cp_ws(cp_jv v, size_t i)
{
    while (i < v.n && (v.p[i] == ' ' || v.p[i] == '\n' || v.p[i] == '\t' || v.p[i] == '\r'))
        i++;
    return i;
}

/* Index just past the value starting at i, or 0 when malformed. */
static size_t cp_skip(cp_jv v, size_t i, int depth)
{
    i = cp_ws(v, i);
    if (i >= v.n || depth > 64)
        return 0;
    char c = v.p[i];
    if (c == '"') {
        for (i++; i < v.n; i++) {
            if (v.p[i] == '\\')
                i++;
            else if (v.p[i] == '"')
                return i + 1;
        }
        return 0;
    }
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        i = cp_ws(v, i + 1);
        if (i < v.n && v.p[i] == close)
            return i + 1;
        for (;;) {
            if (c == '{') {
                i = cp_skip(v, i, depth + 1);       /* key */
                i = i ? cp_ws(v, i) : 0;
                if (!i || i >= v.n || v.p[i] != ':')
                    return 0;
                i++;
            }
            i = cp_skip(v, i, depth + 1);
            if (!i)
                return 0;
            i = cp_ws(v, i);
            if (i >= v.n)
                return 0;
            if (v.p[i] == close)
                return i + 1;
            if (v.p[i] != ',')
                return 0;
            i++;
        }
    }
    size_t s = i;
    while (i < v.n && !strchr(",}] \n\t\r", v.p[i]))
        i++;
    return i > s ? i : 0;
}

int cp_json_member(cp_jv v, const char *key, cp_jv *out)
{
    size_t kl = strlen(key);
    size_t i = cp_ws(v, 0);
    if (i >= v.n || v.p[i] != '{')
        return -1;
    i = cp_ws(v, i + 1);
    while (i < v.n && v.p[i] == '"') {
        size_t ks = i + 1, ke = cp_skip(v, i, 0);
        if (!ke)
            return -1;
        i = cp_ws(v, ke);
        if (i >= v.n || v.p[i] != ':')
            return -1;
        size_t vs = cp_ws(v, i + 1), ve = cp_skip(v, vs, 0);
        if (!ve)
            return -1;
        if (ke - 1 - ks == kl && memcmp(v.p + ks, key, kl) == 0) {
            out->p = v.p + vs;
            out->n = ve - vs;
            return 0;
        }
        i = cp_ws(v, ve);
        if (i < v.n && v.p[i] == ',')
            i = cp_ws(v, i + 1);
    }
    return -1;
}

int cp_json_i64(cp_jv v, const char *key, int64_t *out)
{
    cp_jv m;
    char buf[32];
    if (cp_json_member(v, key, &m) || m.n == 0 || m.n >= sizeof buf ||
        !strchr("-0123456789", m.p[0]))
        return -1;
    memcpy(buf, m.p, m.n);
    buf[m.n] = 0;
    /* Integers beyond 2^63 do not occur; floats are truncated. */
    *out = strtoll(buf, NULL, 10);
    return 0;
}

int cp_json_u64(cp_jv v, const char *key, uint64_t *out)
{
    int64_t x;
    if (cp_json_i64(v, key, &x))
        return -1;
    *out = x < 0 ? 0 : (uint64_t)x;
    return 0;
}

int cp_json_bool(cp_jv v, const char *key, int *out)
{
    cp_jv m;
    if (cp_json_member(v, key, &m))
        return -1;
    if (m.n == 4 && memcmp(m.p, "true", 4) == 0)
        *out = 1;
    else if (m.n == 5 && memcmp(m.p, "false", 5) == 0)
        *out = 0;
    else
        return -1;
    return 0;
}

int cp_json_str(cp_jv v, const char *key, char *buf, size_t cap)
{
    cp_jv m;
    if (cp_json_member(v, key, &m) || m.n < 2 || m.p[0] != '"' || !cap)
        return -1;
    size_t n = m.n - 2 < cap - 1 ? m.n - 2 : cap - 1;
    memcpy(buf, m.p + 1, n);
    buf[n] = 0;
    return 0;
}

int cp_json_next(cp_jv arr, size_t *it, cp_jv *out)
{
    size_t i = *it;
    if (i == 0) {
        i = cp_ws(arr, 0);
        if (i >= arr.n || arr.p[i] != '[')
            return -1;
        i++;
    }
    i = cp_ws(arr, i);
    if (i < arr.n && arr.p[i] == ',')
        i = cp_ws(arr, i + 1);
    if (i >= arr.n)
        return -1;
    if (arr.p[i] == ']') {
        *it = i;
        return 0;
    }
    size_t e = cp_skip(arr, i, 0);
    if (!e)
        return -1;
    out->p = arr.p + i;
    out->n = e - i;
    *it = e;
    return 1;
}

int cp_torch_dev_parse(cp_jv o, cp_torch_dev *d)
{
    int64_t dev;
    memset(d, 0, sizeof *d);
    if (cp_json_i64(o, "device", &dev))
        return -1;
    d->device = (int)dev;
    cp_json_u64(o, "allocated_bytes", &d->allocated);
    cp_json_u64(o, "reserved_bytes", &d->reserved);
    cp_json_u64(o, "active_bytes", &d->active);
    cp_json_u64(o, "requested_bytes", &d->requested);
    cp_json_u64(o, "n_segments", &d->n_segments);
    cp_json_u64(o, "num_alloc_retries", &d->retries);
    cp_json_u64(o, "num_ooms", &d->num_ooms);
    d->have_frag = cp_json_u64(o, "largest_free_block", &d->largest_free) == 0;
    cp_json_u64(o, "free_bytes", &d->free_bytes);
    cp_json_u64(o, "holes", &d->holes);
    cp_json_u64(o, "hole_bytes", &d->hole_bytes);
    cp_json_u64(o, "pinned_segments", &d->pinned_segments);
    cp_json_u64(o, "releasable_bytes", &d->releasable);
    return 0;
}

int cp_fw_conf_expandable(const char *conf)
{
    const char *k = conf ? strstr(conf, "expandable_segments") : NULL;
    if (!k)
        return 0;
    k += strlen("expandable_segments");
    while (*k == ' ' || *k == ':')
        k++;
    return strncasecmp(k, "true", 4) == 0 || *k == '1' || strncasecmp(k, "yes", 3) == 0;
}

/* Keep the three segments with the most hole bytes (free blocks inside a
 * segment that also holds live blocks: what pins the fragmentation). */
static void cp_torch_segments(cp_jv segs, cp_torch_oom *o)
{
    size_t it = 0;
    cp_jv s;
    while (cp_json_next(segs, &it, &s) == 1) {
        uint64_t addr = 0, total = 0, alloc = 0, active = 0, holes = 0, hb = 0;
        cp_json_u64(s, "address", &addr);
        cp_json_u64(s, "total_size", &total);
        cp_json_u64(s, "allocated_size", &alloc);
        cp_json_u64(s, "active_size", &active);
        o->n_seg_listed++;
        cp_jv fb, b;
        if (active == 0 || cp_json_member(s, "free_blocks", &fb))
            continue;
        size_t j = 0;
        while (cp_json_next(fb, &j, &b) == 1) {
            char num[32];
            size_t n = b.n < sizeof num - 1 ? b.n : sizeof num - 1;
            memcpy(num, b.p, n);
            num[n] = 0;
            hb += strtoull(num, NULL, 10);
            holes++;
        }
        if (!hb)
            continue;
        int at;
        if (o->n_pin < 3)
            at = o->n_pin++;
        else if (hb > o->pin[2].hole_bytes)
            at = 2;
        else
            continue;
        o->pin[at].address = addr;
        o->pin[at].total = total;
        o->pin[at].allocated = alloc;
        o->pin[at].hole_bytes = hb;
        o->pin[at].holes = holes;
        for (int k = at; k > 0 && o->pin[k].hole_bytes > o->pin[k - 1].hole_bytes; k--) {
            __typeof__(o->pin[0]) t = o->pin[k];
            o->pin[k] = o->pin[k - 1];
            o->pin[k - 1] = t;
        }
    }
}

int cp_torch_oom_parse(const char *json, size_t n, cp_torch_oom *o)
{
    cp_jv v = { json, n };
    memset(o, 0, sizeof *o);
    o->expandable = -1;
    o->max_split = -1;
    if (cp_torch_dev_parse(v, &o->d))
        return -1;
    cp_json_u64(v, "request_bytes", &o->request);
    cp_json_u64(v, "device_free", &o->device_free);
    int b;
    if (cp_json_bool(v, "expandable_segments", &b) == 0)
        o->expandable = b;
    cp_json_i64(v, "max_split_size", &o->max_split);
    cp_json_str(v, "alloc_conf", o->alloc_conf, sizeof o->alloc_conf);
    cp_json_str(v, "torch_version", o->torch_version, sizeof o->torch_version);
    if (o->expandable < 0 && o->alloc_conf[0])
        o->expandable = cp_fw_conf_expandable(o->alloc_conf);
    cp_jv segs;
    if (cp_json_member(v, "segments", &segs) == 0)
        cp_torch_segments(segs, o);
    return 0;
}
