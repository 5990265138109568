/*
 * cp_decode_note.c - what the reader keeps beyond the current record: the
 * header and end facts (cp_trace_info) and the id -> name tables of API
 * and STRING records.  Applied to each record as it is handed out, so a
 * name is known exactly from its record on, whichever thread decoded it.
 * Also the reader's accessors (errors, counts, names, progress).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_decode_int.h"

/* ---- id maps ------------------------------------------------------------ */

static size_t cp_idmap_slot(const struct cp_idmap *m, uint64_t id)
{
    size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull) & (m->cap - 1);
    while (m->vals[i] && m->keys[i] != id)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int cp_idmap_put(struct cp_idmap *m, uint64_t id, const char *s, size_t n)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct cp_idmap g = {0};
        g.cap = m->cap ? m->cap * 2 : 256;
        g.keys = calloc(g.cap, sizeof *g.keys);
        g.vals = calloc(g.cap, sizeof *g.vals);
        if (!g.keys || !g.vals) {
            free(g.keys);
            free(g.vals);
            return -ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->vals[i])
                continue;
            size_t j = cp_idmap_slot(&g, m->keys[i]);
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
        }
        g.n = m->n;
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    char *v = malloc(n + 1);
    if (!v)
        return -ENOMEM;
    memcpy(v, s, n);
    v[n] = 0;
    size_t i = cp_idmap_slot(m, id);
    if (m->vals[i])
        free(m->vals[i]);
    else
        m->n++;
    m->keys[i] = id;
    m->vals[i] = v;
    return 0;
}

const char *cp__idmap_get(const struct cp_idmap *m, uint64_t id)
{
    return m->cap ? m->vals[cp_idmap_slot(m, id)] : NULL;
}

void cp__idmap_free(struct cp_idmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->vals[i]);
    free(m->keys);
    free(m->vals);
}

/* ---- notes ------------------------------------------------------------- */

/* Keep what later questions need: header facts, names, end facts. */
int cp__dec_note(struct cp_idmap *apis, struct cp_idmap *strings, cp_trace_info *in,
                 const cp_record *r)
{
    switch (r->type) {
    case CP_REC_HEADER: {
        const typeof(r->u.header) *h = &r->u.header;
        in->pid = h->pid;
        in->ppid = h->ppid;
        in->wall_ns = h->wall_ns;
        in->root = h->root;
        in->run_id = h->run_id;
        in->page_size = h->page_size;
        in->start_ts = r->ts;
        in->header_seen = 1;
        free(in->host);
        free(in->exe);
        free(in->shim_version);
        free(in->cmdline);
        in->host = cp_str_dup(h->host);
        in->exe = cp_str_dup(h->exe);
        in->shim_version = cp_str_dup(h->shim_version);
        size_t n = 1;
        for (uint64_t i = 0; i < h->argc; i++)
            n += h->argv[i].n + 1;
        in->cmdline = malloc(n);
        if (!in->host || !in->exe || !in->shim_version || !in->cmdline)
            return -ENOMEM;
        char *p = in->cmdline;
        for (uint64_t i = 0; i < h->argc; i++) {
            if (i)
                *p++ = ' ';
            memcpy(p, h->argv[i].p, h->argv[i].n);
            p += h->argv[i].n;
        }
        *p = 0;
        return 0;
    }
    case CP_REC_API:
        return cp_idmap_put(apis, r->u.api.api_id, r->u.api.elf_name.p,
                            r->u.api.elf_name.n);
    case CP_REC_STRING:
        return cp_idmap_put(strings, r->u.string.id, r->u.string.text.p,
                            r->u.string.text.n);
    case CP_REC_LOST:
        in->lost += r->u.lost.records_lost;
        return 0;
    case CP_REC_END:
        in->end_seen = 1;
        in->end_reason = r->u.end.reason;
        in->end_status = r->u.end.status;
        in->end_records = r->u.end.records;
        in->end_dropped = r->u.end.dropped;
        return 0;
    default:
        return 0;
    }
}

/* ---- accessors ---------------------------------------------------------- */

const char *cp_dec_err(const cp_dec *d)
{
    return d->err;
}

int cp_dec_truncated(const cp_dec *d)
{
    return d->truncated;
}

uint64_t cp_dec_records(const cp_dec *d)
{
    return d->delivered;
}

const cp_trace_info *cp_dec_info(const cp_dec *d)
{
    return &d->info;
}

uint64_t cp_dec_file_offset(const cp_dec *d)
{
    if (d->threaded)
        return __atomic_load_n(&d->progress, __ATOMIC_RELAXED);
    return d->in_file_off + d->in_pos;
}

const char *cp_dec_api_name(const cp_dec *d, uint64_t id)
{
    return cp__idmap_get(&d->apis, id);
}

const char *cp_dec_string(const cp_dec *d, uint64_t id)
{
    return cp__idmap_get(&d->strings, id);
}

const char *cp_dec_path(const cp_dec *d)
{
    return d->path;
}
