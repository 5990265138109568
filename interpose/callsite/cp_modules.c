/*
 * cp_modules.c - the module map (see cp_modules.h).
 *
 * Change detection follows bytehound: glibc counts every load and unload in
 * dl_phdr_info.dlpi_adds / dlpi_subs, and the first callback of
 * dl_iterate_phdr already sees them, so "did anything change" costs one
 * callback.  On a change the whole map is written again after a
 * CP_REC_MODULE_RESET (heaptrack's scheme), which keeps the reader simple.
 */
#include "cp_modules.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cp_itab.h"
#include "cp_rec.h"

#define CP_BUILD_ID_MAX 64      /* bytes; GNU build ids are 20 */

struct cp_module {
    uint64_t base, size, file_offset;
    const char *path;           /* points into the collection's name buffer */
    size_t path_len;
    char build_id[2 * CP_BUILD_ID_MAX + 1];
};

struct cp_mod_list {
    struct cp_module *mods;
    size_t n, cap;
    int failed;
};

static pthread_mutex_t g_mod_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t g_map_adds, g_map_subs;
static _Atomic uint64_t g_map_epoch;       /* 0: no map in the current file */
static __thread int t_emitting;            /* this thread is writing the map */
static char g_exe_path[PATH_MAX];

struct cp_dl_counters { uint64_t adds, subs; };

static int modules_counters_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct cp_dl_counters *c = arg;
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
        return 1;
    c->adds = info->dlpi_adds;
    c->subs = info->dlpi_subs;
    return 1;   /* one object is enough: the counters are global */
}

/* Hex of the GNU build id found in the object's PT_NOTE segments, or "". */
static void modules_build_id(const struct dl_phdr_info *info, char *out)
{
    out[0] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        size_t align = ph->p_align == 8 ? 8 : 4;
        const uint8_t *p, *end;
        if (ph->p_type != PT_NOTE)
            continue;
        p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
        end = p + ph->p_memsz;
        while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t name_off = sizeof(*nh);
            size_t desc_off = name_off + ((nh->n_namesz + align - 1) & ~(align - 1));
            size_t next = desc_off + ((nh->n_descsz + align - 1) & ~(align - 1));
            if (next > (size_t)(end - p))
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                memcmp(p + name_off, "GNU", 4) == 0 && nh->n_descsz <= CP_BUILD_ID_MAX) {
                static const char hex[] = "0123456789abcdef";
                for (size_t k = 0; k < nh->n_descsz; k++) {
                    out[2 * k] = hex[p[desc_off + k] >> 4];
                    out[2 * k + 1] = hex[p[desc_off + k] & 15];
                }
                out[2 * nh->n_descsz] = 0;
                return;
            }
            p += next;
        }
    }
}

static int modules_collect_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct cp_mod_list *l = arg;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    char bid[sizeof(((struct cp_module *)0)->build_id)];
    int have_bid = 0;
    (void)size;
    /* The main program is listed first, with an empty name. */
    if (!name[0] && l->n == 0 && g_exe_path[0])
        name = g_exe_path;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        struct cp_module *m;
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        if (!have_bid) {
            modules_build_id(info, bid);
            have_bid = 1;
        }
        if (l->n == l->cap) {
            size_t cap = l->cap ? 2 * l->cap : 64;
            struct cp_module *nm = realloc(l->mods, cap * sizeof(*nm));
            if (!nm) {
                l->failed = 1;
                return 1;
            }
            l->mods = nm;
            l->cap = cap;
        }
        m = &l->mods[l->n++];
        m->base = info->dlpi_addr + ph->p_vaddr;
        m->size = ph->p_memsz;
        m->file_offset = ph->p_offset;
        /* Copy the name: once dl_iterate_phdr returns, another thread may
         * dlclose the object and free it. */
        m->path_len = strlen(name);
        m->path = strndup(name, m->path_len);
        if (!m->path) {
            l->n--;
            l->failed = 1;
            return 1;
        }
        memcpy(m->build_id, bid, sizeof(bid));
    }
    return 0;
}

static void modules_free(struct cp_mod_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free((void *)l->mods[i].path);
    free(l->mods);
}

static int modules_write_one(const struct cp_module *m)
{
    if (cp_rec_put_module(m->base, m->size, m->file_offset, m->path, m->path_len,
                          m->build_id, strlen(m->build_id)))
        return -EIO;
    return 0;
}

/* Collect and write the whole map.  Called with g_mod_lock held. */
static int modules_write_locked(void)
{
    struct cp_mod_list l = { 0 };
    struct cp_dl_counters c = { 0 };
    uint8_t *p;
    int rc = 0;

    if (!g_exe_path[0]) {
        ssize_t n = readlink("/proc/self/exe", g_exe_path, sizeof(g_exe_path) - 1);
        g_exe_path[n > 0 ? n : 0] = 0;
    }
    /* Counters first: if a load races with the collection, the next sync
     * sees newer counters and writes the map again. */
    dl_iterate_phdr(modules_counters_cb, &c);
    dl_iterate_phdr(modules_collect_cb, &l);
    if (l.failed) {
        rc = -ENOMEM;
        goto out_free;
    }
    t_emitting = 1;
    p = cp_rec_begin(CP_REC_MODULE_RESET, 0);
    if (!p) {
        rc = -EIO;
        goto out_emitting;
    }
    cp_rec_commit(p);
    for (size_t i = 0; i < l.n; i++) {
        rc = modules_write_one(&l.mods[i]);
        if (rc)
            goto out_emitting;
    }
    atomic_store_explicit(&g_map_adds, c.adds, memory_order_relaxed);
    atomic_store_explicit(&g_map_subs, c.subs, memory_order_relaxed);
    /* The epoch after the records: if the RESET started a new file, the map
     * is in that one. */
    atomic_store_explicit(&g_map_epoch, cp_itab_epoch(), memory_order_release);
out_emitting:
    t_emitting = 0;
out_free:
    modules_free(&l);
    return rc;
}

static int modules_current(void)
{
    struct cp_dl_counters c = { 0 };
    if (atomic_load_explicit(&g_map_epoch, memory_order_acquire) != cp_itab_epoch())
        return 0;
    dl_iterate_phdr(modules_counters_cb, &c);
    return c.adds == atomic_load_explicit(&g_map_adds, memory_order_relaxed) &&
           c.subs == atomic_load_explicit(&g_map_subs, memory_order_relaxed);
}

int cp_modules_sync(void)
{
    int rc = 0;
    if (modules_current())
        return 0;
    if (t_emitting)
        return 0;   /* re-entered from a new-file callback inside our own write */
    pthread_mutex_lock(&g_mod_lock);
    if (!modules_current())
        rc = modules_write_locked();
    pthread_mutex_unlock(&g_mod_lock);
    return rc;
}

uint64_t cp_modules_adds(void)
{
    return atomic_load_explicit(&g_map_adds, memory_order_relaxed);
}

void cp_modules_new_file(void)
{
    /* When this thread's own map write started the file, that write goes on
     * into the new file: nothing to do. */
    if (t_emitting)
        return;
    atomic_store_explicit(&g_map_epoch, 0, memory_order_release);
    (void)cp_modules_sync();
}

void cp_modules_atfork_child(void)
{
    pthread_mutex_init(&g_mod_lock, NULL);
    t_emitting = 0;
    atomic_store_explicit(&g_map_epoch, 0, memory_order_release);
}
