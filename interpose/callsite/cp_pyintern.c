/*
 * cp_pyintern.c - resolved Python call sites into trace ids (see
 * cp_pyintern.h): each site's file and function name as a STRING record and
 * the (file, function, line) triple as a PYFRAME record, each once per trace
 * file, the ids kept on the site so that a repeated frame costs two loads.
 */
#include "cp_pyintern.h"

#include <stdatomic.h>

#include "cp_itab.h"
#include "cp_rec.h"

static struct cp_itab g_strs = CP_ITAB_INIT("python string", 16);
static struct cp_itab g_frames = CP_ITAB_INIT("python frame", 17);

static int str_announce(void *ctx, uint64_t id, const void *key, size_t len)
{
    return (void)ctx, cp_rec_put_string(id, key, len);
}

static uint64_t str_intern(const char *s, size_t len)
{
    return cp_itab_intern(&g_strs, s, len, str_announce, NULL);
}

struct py_frame_key { uint64_t file, func, line; };

static int frame_announce(void *ctx, uint64_t id, const void *key, size_t len)
{
    const struct cp_pysite *s = ctx;
    const struct py_frame_key *k = key;
    (void)len;
    /* The strings must be in this file too (again, if it is a new file);
     * lock order: frames -> strings. */
    if (str_intern(s->file, s->file_len) != k->file || str_intern(s->func, s->func_len) != k->func)
        return -1;
    return cp_rec_put_pyframe(id, k->file, k->func, k->line);
}

/* The site's string id, interned on first use (ids never change). */
static uint64_t site_str_id(_Atomic uint64_t *slot, const char *s, size_t len)
{
    uint64_t id = atomic_load_explicit(slot, memory_order_acquire);
    if (!id) {
        id = str_intern(s, len);
        atomic_store_explicit(slot, id, memory_order_release);
    }
    return id;
}

int cp_pyintern_sites(const struct cp_pysite *const *sites, int n, uint64_t *ids)
{
    uint64_t epoch = n ? cp_itab_epoch() : 0;
    int out = 0;
    for (int i = 0; i < n; i++) {
        struct cp_pysite *s = (struct cp_pysite *)sites[i];
        struct py_frame_key k;
        uint64_t id;
        /* Read before the intern: if a new file starts meanwhile, the older
         * epoch is kept and the next use interns (re-announces) again. */
        if (atomic_load_explicit(&s->frame_epoch, memory_order_acquire) == epoch &&
            (id = atomic_load_explicit(&s->frame_id, memory_order_relaxed)) != 0) {
            ids[out++] = id;
            continue;
        }
        k.file = site_str_id(&s->file_id, s->file, s->file_len);
        k.func = site_str_id(&s->func_id, s->func, s->func_len);
        k.line = s->line > 0 ? (uint64_t)s->line : 0;
        if (!k.file || !k.func)
            continue;
        id = cp_itab_intern(&g_frames, &k, sizeof(k), frame_announce, s);
        if (id) {
            /* One site, one key: the id never changes, only the epoch. */
            atomic_store_explicit(&s->frame_id, id, memory_order_relaxed);
            atomic_store_explicit(&s->frame_epoch, epoch, memory_order_release);
            ids[out++] = id;
        }
    }
    return out;
}

void cp_pyintern_atfork_child(void)
{
    cp_itab_atfork_child(&g_strs);
    cp_itab_atfork_child(&g_frames);
}
