/*
 * cp_decode_note.c - the names and facts a trace's records announce (see
 * cp_decode_note.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_decode_note.h"

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

static const char *cp_idmap_get(const struct cp_idmap *m, uint64_t id)
{
    return m->cap ? m->vals[cp_idmap_slot(m, id)] : NULL;
}

static void cp_idmap_free(struct cp_idmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        free(m->vals[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- notes ------------------------------------------------------------- */

/* Keep what later questions need: header facts, names, end facts. */
int cp__dec_note(cp_dec_names *nm, const cp_record *r)
{
    cp_trace_info *in = &nm->info;
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
        return cp_idmap_put(&nm->apis, r->u.api.api_id, r->u.api.elf_name.p,
                            r->u.api.elf_name.n);
    case CP_REC_STRING:
        return cp_idmap_put(&nm->strings, r->u.string.id, r->u.string.text.p,
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

/* ---- the names kept ------------------------------------------------------ */

const char *cp__dec_names_api(const cp_dec_names *nm, uint64_t id)
{
    return cp_idmap_get(&nm->apis, id);
}

const char *cp__dec_names_string(const cp_dec_names *nm, uint64_t id)
{
    return cp_idmap_get(&nm->strings, id);
}

void cp__dec_names_free(cp_dec_names *nm)
{
    cp_idmap_free(&nm->apis);
    cp_idmap_free(&nm->strings);
    free(nm->info.host);
    free(nm->info.exe);
    free(nm->info.shim_version);
    free(nm->info.cmdline);
    memset(&nm->info, 0, sizeof nm->info);
}
