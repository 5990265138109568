/*
 * cp_model.c - one process's state, applied record by record (see
 * cp_model.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_model.h"
#include "cp_zpool.h"

static uint64_t g_max_live = CP_MAX_LIVE_DEFAULT;

void cp_model_max_live(uint64_t n)
{
    g_max_live = n ? n : CP_MAX_LIVE_DEFAULT;
}

uint64_t cp_model_max_live_get(void)
{
    return g_max_live;
}

/* A process's tables of every possible device, one block. */
typedef struct cp_devtabs {
    cp_devinfo dev[CP_MAX_DEV];
    cp_devmem mem[CP_MAX_DEV];
} cp_devtabs;

_Static_assert(offsetof(cp_devtabs, dev) == 0, "cp_proc.dev is where its block starts");

static cp_zpool g_devtabs = CP_ZPOOL_INIT(sizeof(cp_devtabs));

cp_proc *cp_proc_new(const char *file, int index)
{
    cp_proc *p = calloc(1, sizeof *p);
    cp_devtabs *t = p ? cp_zpool_get(&g_devtabs) : NULL;
    if (!t) {
        free(p);
        return NULL;
    }
    p->dev = t->dev;
    p->mem = t->mem;
    p->file = file;
    p->index = index;
    cp_map_init(&p->vmm_va, sizeof(uint64_t));
    cp_map_init(&p->ctxs, sizeof(int));
    cp_map_init(&p->streams, sizeof(cp_stream_info));
    cp_map_init(&p->live_over, sizeof(cp_over));
    cp_stacks_init(&p->stacks);
    return p;
}

void cp_proc_free(cp_proc *p)
{
    if (!p)
        return;
    free(p->exe);
    free(p->cmdline);
    free(p->host);
    for (size_t i = 0; i < p->n_env; i++) {
        free(p->env[i].name);
        free(p->env[i].value);
    }
    free(p->env);
    free(p->error);
    free(p->lib_path);
    free(p->lib_error);
    free(p->hm_cg_path);
    cp_model_drop_live(p);
    free(p->libs);
    free(p->fw_kind);
    free(p->fw_buf);
    free(p->forks);
    cp_stacks_free(&p->stacks);
    cp_zpool_put(&g_devtabs, p->dev);
    free(p);
}

const char *cp_proc_env(const cp_proc *p, const char *name)
{
    for (size_t i = 0; i < p->n_env; i++)
        if (strcmp(p->env[i].name, name) == 0)
            return p->env[i].value;
    return NULL;
}

uint64_t cp_proc_hold_total(const cp_proc *p, int dev)
{
    return dev >= 0 && dev < CP_MAX_DEV ? p->mem[dev].held_total : 0;
}

/* --- header, libraries ---------------------------------------------------------------- */

static int cp_model_header(cp_proc *p, const cp_dec *d, const cp_record *r)
{
    const cp_trace_info *in = cp_dec_info(d);
    p->pid = r->u.header.pid;
    p->ppid = r->u.header.ppid;
    p->page_size = r->u.header.page_size;
    p->root = r->u.header.root != 0;
    p->forked_image = r->u.header.forked == CP_FIELD_ABSENT ? -1 : r->u.header.forked != 0;
    p->t0 = r->ts;
    free(p->exe);
    free(p->cmdline);
    free(p->host);
    p->exe = cp_str_dup(r->u.header.exe);
    p->host = cp_str_dup(r->u.header.host);
    p->cmdline = strdup(in && in->cmdline ? in->cmdline : "");
    for (uint64_t i = 0; i < r->u.header.nenv; i++) {
        cp_env_kv *e = realloc(p->env, (p->n_env + 1) * sizeof *e);
        if (!e)
            return -ENOMEM;
        p->env = e;
        e[p->n_env].name = cp_str_dup(r->u.header.env_name[i]);
        e[p->n_env].value = cp_str_dup(r->u.header.env_value[i]);
        if (!e[p->n_env].name || !e[p->n_env].value)
            return -ENOMEM;
        p->n_env++;
    }
    return p->exe && p->host && p->cmdline ? 0 : -ENOMEM;
}

/* --- API kinds ------------------------------------------------------------------------- */

static int cp_api_kind_of(const char *n)
{
    if (!n)
        return CP_API_OTHER;
    if (strcmp(n, "cuInit") == 0)
        return CP_API_INIT;
    if (strcmp(n, "cuDeviceGetCount") == 0)
        return CP_API_DEVICE_GET_COUNT;
    if (strcmp(n, "cuDeviceGet") == 0)
        return CP_API_DEVICE_GET;
    if (strncmp(n, "cuModuleLoad", 12) == 0 || strncmp(n, "cuLibraryLoad", 13) == 0)
        return CP_API_MODULE_LOAD;
    if (strncmp(n, "cuLaunch", 8) == 0)
        return CP_API_LAUNCH;
    if (strncmp(n, "cuGetProcAddress", 16) == 0)
        return CP_API_GET_PROC;
    return CP_API_OTHER;
}

/* The api ids p->api_kind caches. */
#define CP_API_KIND_IDS 4096

int cp_model_api_kind(cp_proc *p, const cp_record *r)
{
    uint64_t id = r->ev.api;
    if (id < CP_API_KIND_IDS && p->api_kind && p->api_kind[id])
        return p->api_kind[id] - 1;
    int k = cp_api_kind_of(p->dec ? cp_dec_api_name(p->dec, id) : NULL);
    if (id < CP_API_KIND_IDS && p->dec && cp_dec_api_name(p->dec, id) &&
        (p->api_kind || (p->api_kind = calloc(CP_API_KIND_IDS, 1))))
        p->api_kind[id] = (uint8_t)(k + 1);
    return k;
}

/* --- memory ------------------------------------------------------------------------------ */

static cp_lives *cp_live_map(cp_proc *p, uint64_t kind)
{
    switch (kind) {
    case CP_MK_HOST_PINNED:
    case CP_MK_HOST_REGISTERED: return &p->live_host;
    case CP_MK_VMM_PHYS:
    case CP_MK_VMM_HOST: return &p->live_vmm;
    default: return &p->live_dev;
    }
}

static void cp_unhold(cp_proc *p, const cp_live *l)
{
    int h = cp_hold_of_kind(l->kind);
    if (h < 0) {
        if (l->kind != CP_MK_VMM_HOST)
            p->host_pinned -= l->size <= p->host_pinned ? l->size : p->host_pinned;
        return;
    }
    if (l->dev < 0 || l->dev >= CP_MAX_DEV)
        return;
    cp_devmem *m = &p->mem[l->dev];
    m->held[h] -= l->size <= m->held[h] ? l->size : m->held[h];
    uint64_t gone = l->size <= m->held_total ? l->size : m->held_total;
    m->held_total -= gone;
    p->held_all -= gone;
}

/* What an allocation of size holds: its device's totals and peaks (or the
 * pinned host bytes). */
static void cp_hold(cp_proc *p, const cp_record *r, uint64_t kind, uint64_t size, int dev)
{
    p->n_alloc_ok++;
    int h = cp_hold_of_kind(kind);
    if (h < 0) {
        if (kind != CP_MK_VMM_HOST)
            p->host_pinned += size;
        return;
    }
    if (dev < 0 || dev >= CP_MAX_DEV)
        return;
    if (dev >= p->n_dev)
        p->n_dev = dev + 1;
    cp_devmem *dm = &p->mem[dev];
    dm->held[h] += size;
    dm->held_total += size;
    p->held_all += size;
    if (dm->held_total > dm->peak_total) {
        dm->peak_total = dm->held_total;
        dm->peak_ts = r->ts;
    }
    if (size > dm->max_request)
        dm->max_request = size;
    if (!dm->n_alloc)
        dm->first_alloc_stack = r->ev.stack;
    dm->n_alloc++;
    dm->alloc_bytes += size;
}

static int cp_model_alloc(cp_proc *p, const cp_record *r, cp_live **made)
{
    if (r->ev.result != 0)
        return 0;
    uint64_t kind = r->u.alloc.kind, size = r->u.alloc.size;
    int dev = (int)r->ev.dev;
    cp_lives *m = cp_live_map(p, kind);
    if (p->live_dev.n + p->live_host.n + p->live_vmm.n >= g_max_live &&
        cp_lives_find(m, r->u.alloc.ptr) == CP_LIVES_NONE) {
        /* Past the bound: counted at its call site, held all the same. */
        cp_over *o = cp_map_put(&p->live_over, r->ev.stack, NULL);
        if (!o)
            return -ENOMEM;
        o->count++;
        o->bytes += size;
        p->over_n++;
        p->over_bytes += size;
        p->mem_seq++;
        cp_hold(p, r, kind, size, dev);
        return 0;
    }
    int created;
    cp_live *l = cp_lives_put(m, r->u.alloc.ptr, &created);
    if (!l)
        return -ENOMEM;
    if (!created)        /* a free we never saw: forget the old one */
        cp_unhold(p, l);
    *l = (cp_live){ .ptr = r->u.alloc.ptr, .size = size, .ts = r->ts, .ctx = r->ev.ctx,
                    .stack = r->ev.stack, .kind = (uint8_t)kind, .dev = (int16_t)dev,
                    .seq = ++p->mem_seq };
    *made = l;
    cp_hold(p, r, kind, size, dev);
    return 0;
}

const cp_live *cp__model_freeing_find(cp_proc *p, const cp_record *r)
{
    p->freeing_rec = r;
    p->freeing = NULL;
    cp_lives *m = cp_live_map(p, r->u.free.kind);
    size_t i = r->ev.result == 0 ? cp_lives_find(m, r->u.free.ptr) : CP_LIVES_NONE;
    if (i != CP_LIVES_NONE) {
        p->freeing = cp_lives_at(m, i);
        p->freeing_map = m;
        p->freeing_i = i;
    }
    return p->freeing;
}

static void cp_model_free(cp_proc *p, const cp_record *r)
{
    /* Found already (cp_model_feed asks before applying a FREE, and nothing
     * put or deleted in the live maps since): no second probe. */
    const cp_live *l = cp_model_freeing(p, r);
    if (!l && r->ev.result == 0 && p->over_freed < p->over_n) {
        /* An address not kept while some past the bound are live: one of
         * them, as far as can be told. */
        cp_live gone = { .size = r->u.free.size, .kind = (uint8_t)r->u.free.kind,
                         .dev = (int16_t)r->ev.dev };
        p->over_freed++;
        p->over_freed_bytes += gone.size;
        p->mem_seq++;
        cp_unhold(p, &gone);
        if (gone.dev >= 0 && gone.dev < CP_MAX_DEV && cp_hold_of_kind(gone.kind) >= 0)
            p->mem[gone.dev].n_free++;
        return;
    }
    if (!l)
        return;
    p->mem_seq++;
    cp_unhold(p, l);
    if (l->dev >= 0 && l->dev < CP_MAX_DEV && cp_hold_of_kind(l->kind) >= 0)
        p->mem[l->dev].n_free++;
    cp_lives_del_at(p->freeing_map, p->freeing_i);
    p->freeing = NULL;
}

/* The driver frees whatever a destroyed context still held. */
static void cp_model_drop_ctx(cp_proc *p, uint64_t ctx)
{
    cp_lives *maps[2] = { &p->live_dev, &p->live_vmm };
    for (int i = 0; i < 2; i++) {
        /* A removed entry's place takes the last one: look at it again. */
        for (size_t k = 0; k < maps[i]->n;) {
            cp_live gone = maps[i]->e[k];
            if (gone.ctx != ctx) {
                k++;
                continue;
            }
            cp_lives_del(maps[i], gone.ptr, NULL);
            cp_unhold(p, &gone);
        }
    }
}

int cp_model_ctx_ending(const cp_proc *p, const cp_record *r, uint64_t *ctx, int *dev)
{
    if (r->type != CP_REC_CTX || r->ev.result != 0)
        return 0;
    int64_t d = r->u.ctx.target_dev;
    switch (r->u.ctx.op) {
    case CP_CTX_DESTROY:
        *ctx = r->u.ctx.target_ctx;
        *dev = (int)d;
        return *ctx != 0;
    case CP_CTX_RELEASE:
        if (d < 0 || d >= CP_MAX_DEV || p->primary_refs[d] != 1)
            return 0;
        /* fall through */
    case CP_CTX_RESET:
        if (d < 0 || d >= CP_MAX_DEV || !p->primary_ctx[d])
            return 0;
        *ctx = p->primary_ctx[d];
        *dev = (int)d;
        return 1;
    default:
        return 0;
    }
}

static int cp_model_ctx(cp_proc *p, const cp_record *r)
{
    uint64_t gone;
    int gdev;
    if (cp_model_ctx_ending(p, r, &gone, &gdev))
        cp_model_drop_ctx(p, gone);
    if (r->ev.result != 0)
        return 0;
    int64_t d = r->u.ctx.target_dev;
    int okdev = d >= 0 && d < CP_MAX_DEV;
    switch (r->u.ctx.op) {
    case CP_CTX_CREATE:
    case CP_CTX_RETAIN:
        if (okdev) {
            cp_devmem *m = &p->mem[d];
            if (!m->has_ctx) {
                m->has_ctx = 1;
                m->ctx_stack = r->ev.stack;
                m->ctx_ts = r->ts;
            }
            if (d >= p->n_dev)
                p->n_dev = (int)d + 1;
            if (r->u.ctx.op == CP_CTX_RETAIN) {
                p->primary_refs[d]++;
                p->primary_ctx[d] = r->u.ctx.target_ctx;
            }
        }
        if (r->u.ctx.target_ctx) {
            int *v = cp_map_put(&p->ctxs, r->u.ctx.target_ctx, NULL);
            if (!v)
                return -ENOMEM;
            *v = (int)d;
        }
        break;
    case CP_CTX_DESTROY:
        cp_map_del(&p->ctxs, r->u.ctx.target_ctx, NULL);
        break;
    case CP_CTX_RELEASE:
        if (okdev && p->primary_refs[d] > 0)
            p->primary_refs[d]--;
        break;
    case CP_CTX_RESET:
        if (okdev)
            p->primary_refs[d] = 0;
        break;
    }
    return 0;
}

static int cp_model_stream(cp_proc *p, const cp_record *r)
{
    if (r->ev.result != 0)
        return 0;
    if (r->u.stream.op == CP_STREAM_CREATE && r->u.stream.target_stream) {
        cp_stream_info *s = cp_map_put(&p->streams, r->u.stream.target_stream, NULL);
        if (!s)
            return -ENOMEM;
        s->ctx = r->ev.ctx;
        s->dev = (int)r->ev.dev;
    } else if (r->u.stream.op == CP_STREAM_DESTROY) {
        cp_map_del(&p->streams, r->u.stream.target_stream, NULL);
    }
    return 0;
}

static int cp_model_vmm(cp_proc *p, const cp_record *r)
{
    if (r->ev.result != 0)
        return 0;
    int dev = r->u.vmm.loc_id >= 0 ? (int)r->u.vmm.loc_id : (int)r->ev.dev;
    switch (r->u.vmm.op) {
    case CP_VMM_RESERVE: {
        uint64_t *v = cp_map_put(&p->vmm_va, r->u.vmm.va, NULL);
        if (!v)
            return -ENOMEM;
        *v = r->u.vmm.size;
        p->vmm_reserved += r->u.vmm.size;
        break;
    }
    case CP_VMM_ADDR_FREE: {
        uint64_t sz;
        if (cp_map_del(&p->vmm_va, r->u.vmm.va, &sz) == 0)
            p->vmm_reserved -= sz <= p->vmm_reserved ? sz : p->vmm_reserved;
        break;
    }
    case CP_VMM_MAP:
        if (dev >= 0 && dev < CP_MAX_DEV)
            p->mem[dev].vmm_mapped += r->u.vmm.size;
        break;
    case CP_VMM_UNMAP:
        if (dev >= 0 && dev < CP_MAX_DEV) {
            uint64_t *m = &p->mem[dev].vmm_mapped;
            *m -= r->u.vmm.size <= *m ? r->u.vmm.size : *m;
        }
        break;
    }
    return 0;
}

static void cp_model_call(cp_proc *p, const cp_record *r)
{
    if (!p->first_cuda_ts) {
        p->first_cuda_ts = r->ts;
        p->first_cuda_stack = r->ev.stack;
        const char *n = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
        p->first_cuda_api = cp_sym_intern(n ? n : "?", n ? strlen(n) : 1);
    }
    if (r->type != CP_REC_CALL || cp_model_api_kind(p, r) != CP_API_INIT)
        return;
    p->init_calls++;
    if (r->ev.result == 0) {
        if (!p->init_ok)
            p->init_ts = r->ts;
        p->init_ok = 1;
    } else {
        p->init_fail_result = r->ev.result;
    }
}

void cp_model_last_names(cp_proc *p, const cp_dec *d)
{
    for (unsigned i = 0; i < CP_LAST_EVENTS && i < p->n_last; i++) {
        const char *n = cp_dec_api_name(d, p->last[i].api_id);
        p->last[i].api = n ? cp_sym_intern(n, strlen(n)) : NULL;
    }
}

static int cp_model_apply(cp_proc *p, const cp_dec *d, const cp_record *r, cp_live **made)
{
    p->t_last = r->ts;
    p->fw_ready_kind = NULL;
    if (r->type >= CP_REC_CALL && r->type <= CP_REC_SYNC && r->type != CP_REC_LAUNCH_COUNT) {
        cp_model_call(p, r);
        /* A ring of the last calls: what a killed process was doing. */
        cp_last_event *le = &p->last[p->n_last++ % CP_LAST_EVENTS];
        le->ts = r->ts;
        le->api_id = r->ev.api;
        le->api = NULL;
        le->type = (uint8_t)r->type;
        le->dev = (int16_t)r->ev.dev;
        le->bytes = r->type == CP_REC_ALLOC ? r->u.alloc.size
                  : r->type == CP_REC_COPY ? r->u.copy.bytes : 0;
    }
    switch (r->type) {
    case CP_REC_HEADER:
        return cp_model_header(p, d, r);
    case CP_REC_MODULE: {
        const cp_str *ps = &r->u.module.path, *b = &r->u.module.build_id;
        int rc = cp_stacks_module(&p->stacks, r->u.module.base, r->u.module.size,
                                  r->u.module.file_offset, ps->p, ps->n, b->p, b->n);
        if (rc == 0) {
            const char *ip = cp_sym_intern(ps->p, ps->n);
            if (ip)
                cp__model_library(p, ip);
        }
        return rc;
    }
    case CP_REC_MODULE_RESET:
        cp_stacks_module_reset(&p->stacks);
        return 0;
    case CP_REC_PYFRAME:
        return cp_stacks_pyframe(&p->stacks, r->u.pyframe.id,
                                 cp_dec_string(d, r->u.pyframe.file_str),
                                 cp_dec_string(d, r->u.pyframe.func_str), r->u.pyframe.line);
    case CP_REC_STACK:
        return cp_stacks_add(&p->stacks, r->u.stack.id, r->u.stack.n_native, r->u.stack.ip,
                             r->u.stack.n_py, r->u.stack.pyframe) == -ENOMEM ? -ENOMEM : 0;
    case CP_REC_DLOPEN:
        cp__model_dlopen(p, r);
        return 0;
    case CP_REC_DRIVER:
        p->driver_seen = 1;
        p->driver_version = r->u.driver.driver_version;
        p->driver_result = r->u.driver.result;
        return 0;
    case CP_REC_DEVICE: {
        uint64_t o = r->u.device.ordinal;
        if (o >= CP_MAX_DEV)
            return 0;
        cp_devinfo *di = &p->dev[o];
        /* Interned: every process of a run names the same few GPUs, and a
         * process is not worth a name buffer per possible device. */
        di->name = cp_sym_intern(r->u.device.name.p, r->u.device.name.n);
        if (!di->name)
            return -ENOMEM;
        di->seen = 1;
        memcpy(di->uuid, r->u.device.uuid, 16);
        di->pci_domain = r->u.device.pci_domain;
        di->pci_bus = r->u.device.pci_bus;
        di->pci_device = r->u.device.pci_device;
        di->cc_major = r->u.device.cc_major;
        di->cc_minor = r->u.device.cc_minor;
        di->total_mem = r->u.device.total_mem;
        di->pageable_access = r->u.device.pageable_access;
        di->host_page_tables = r->u.device.uses_host_page_tables;
        di->sm_count = r->u.device.sm_count;
        if ((int)o >= p->n_dev)
            p->n_dev = (int)o + 1;
        return 0;
    }
    case CP_REC_RESOLVE: {
        const typeof(r->u.resolve) *rs = &r->u.resolve;
        /* Runtimes ask for every driver function at their own version (or
         * the function's, when older): the highest version asked for is
         * the newest runtime in the process. */
        if (rs->route >= CP_ROUTE_GPA && rs->cuda_version > p->runtime_version)
            p->runtime_version = rs->cuda_version;
        return 0;
    }
    case CP_REC_ALLOC:
        return cp_model_alloc(p, r, made);
    case CP_REC_FREE:
        cp_model_free(p, r);
        return 0;
    case CP_REC_COPY:
        p->n_copy++;
        return 0;
    case CP_REC_CTX:
        return cp_model_ctx(p, r);
    case CP_REC_STREAM:
        return cp_model_stream(p, r);
    case CP_REC_VMM:
        return cp_model_vmm(p, r);
    case CP_REC_LAUNCH_COUNT:
        p->n_launch += r->u.launch_count.count;
        if (!p->first_cuda_ts)
            p->first_cuda_ts = r->ts;
        return 0;
    case CP_REC_FORK:
        if (p->init_ok) {
            uint64_t *f = realloc(p->forks, (p->n_forks + 1) * sizeof *f);
            if (!f)
                return -ENOMEM;
            p->forks = f;
            p->forks[p->n_forks++] = r->u.fork.child_pid;
        } else {
            p->fork_before_init++;
        }
        return 0;
    case CP_REC_LOST:
        p->lost += r->u.lost.records_lost;
        return 0;
    case CP_REC_NOSPACE:
    case CP_REC_FD_LOST:
    case CP_REC_END:
        cp__model_end(p, r);
        return 0;
    case CP_REC_FRAMEWORK:
        return cp__model_framework(p, r);
    case CP_REC_HOSTINFO:
    case CP_REC_HOSTMEM:
        return cp__model_host(p, r);
    default:
        return 0;
    }
}

int cp_model_feed(cp_proc *p, const cp_dec *d, const cp_record *r)
{
    cp_live *made = NULL;
    int rc = cp_model_apply(p, d, r, &made);
    /* What a FREE's checks found is gone now; and a later record may come
     * at this one's address (batches are reused). */
    p->freeing_rec = NULL;
    p->made = made;
    return rc;
}

void cp_model_drop_live(cp_proc *p)
{
    free(p->api_kind);
    p->api_kind = NULL;
    cp_map_free(&p->live_over);
    cp_lives_free(&p->live_dev);
    cp_lives_free(&p->live_host);
    cp_lives_free(&p->live_vmm);
    cp_map_free(&p->vmm_va);
    cp_map_free(&p->streams);
    cp_map_free(&p->ctxs);
}
