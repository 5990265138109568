/*
 * cp_decode_fields.c - field layouts of every record type, as listed in
 * include/cp_trace.h.  Each parser reads exactly the documented fields in
 * order and ignores any trailing bytes (fields appended by newer writers).
 */
#include <stdlib.h>
#include <string.h>

#include "cp_grow.h"
#include "cp_decode_int.h"
#include "cp_varint.h"

#define GU(x)                                   \
    do {                                        \
        *why = #x;                              \
        if (cp_get_u(&p, e, &(x)))              \
            return -1;                          \
    } while (0)
#define GS(x)                                   \
    do {                                        \
        *why = #x;                              \
        if (cp_get_s(&p, e, &(x)))              \
            return -1;                          \
    } while (0)
#define GSTR(x)                                 \
    do {                                        \
        uint64_t n_;                            \
        *why = #x;                              \
        if (cp_get_u(&p, e, &n_) ||             \
            n_ > (uint64_t)(e - p))             \
            return -1;                          \
        (x).p = (const char *)p;                \
        (x).n = (size_t)n_;                     \
        p += n_;                                \
    } while (0)

/* Grow a scratch array to hold n items; n is already bounded by the
 * record's length (every item takes at least one byte). */
void cp__dec_scratch_free(struct cp_scratch *s)
{
    free(s->strs);
    free(s->u64);
    free(s->procs);
    memset(s, 0, sizeof *s);
}

static int cp_f_header(struct cp_scratch *s, cp_record *r, const uint8_t *p,
                       const uint8_t *e, const char **why)
{
    typeof(r->u.header) *h = &r->u.header;
    GU(h->pid);
    GU(h->ppid);
    GU(h->wall_ns);
    GU(h->root);
    GSTR(h->host);
    GSTR(h->exe);
    GSTR(h->shim_version);
    GU(h->argc);
    *why = "argc";
    if (h->argc > (uint64_t)(e - p))
        return -1;
    /* argv and env share one array: argv first, then names and values. */
    size_t na = (size_t)h->argc;
    if (cp_grow((void **)&s->strs, &s->strs_cap, na + 2 * (size_t)(e - p), sizeof *s->strs, 64))
        return -2;
    for (size_t i = 0; i < na; i++)
        GSTR(s->strs[i]);
    GU(h->nenv);
    *why = "nenv";
    if (h->nenv > (uint64_t)(e - p) / 2)
        return -1;
    size_t ne = (size_t)h->nenv;
    for (size_t i = 0; i < ne; i++) {
        GSTR(s->strs[na + i]);
        GSTR(s->strs[na + ne + i]);
    }
    h->argv = s->strs;
    h->env_name = s->strs + na;
    h->env_value = s->strs + na + ne;
    GU(h->page_size);
    return 0;
}

static int cp_f_stack(struct cp_scratch *s, cp_record *r, const uint8_t *p,
                      const uint8_t *e, const char **why)
{
    typeof(r->u.stack) *st = &r->u.stack;
    GU(st->id);
    GU(st->n_native);
    *why = "n_native";
    if (st->n_native > (uint64_t)(e - p))
        return -1;
    if (cp_grow((void **)&s->u64, &s->u64_cap, (size_t)(e - p), sizeof *s->u64, 64))
        return -2;
    size_t k = 0;
    for (uint64_t i = 0; i < st->n_native; i++)
        GU(s->u64[k++]);
    GU(st->n_py);
    *why = "n_py";
    if (st->n_py > (uint64_t)(e - p))
        return -1;
    for (uint64_t i = 0; i < st->n_py; i++)
        GU(s->u64[k++]);
    st->ip = s->u64;
    st->pyframe = s->u64 + st->n_native;
    return 0;
}

static int cp_f_oom(struct cp_scratch *s, cp_record *r, const uint8_t *p,
                    const uint8_t *e, const char **why)
{
    typeof(r->u.oom) *o = &r->u.oom;
    GU(o->requested);
    GU(o->free);
    GU(o->total);
    GU(o->n_procs);
    *why = "n_procs";
    if (o->n_procs > (uint64_t)(e - p) / 2)
        return -1;
    if (cp_grow((void **)&s->procs, &s->procs_cap, (size_t)o->n_procs, sizeof *s->procs, 64))
        return -2;
    for (uint64_t i = 0; i < o->n_procs; i++) {
        GU(s->procs[i].pid);
        GU(s->procs[i].used_bytes);
    }
    o->procs = s->procs;
    return 0;
}

static int cp_has_ev(unsigned t)
{
    return (t >= CP_REC_CALL && t <= CP_REC_POOL) || t == CP_REC_XDEV ||
           t == CP_REC_OOM || t == CP_REC_SYNC;
}

int cp__dec_fields(struct cp_scratch *s, cp_record *r, const char **why)
{
    const uint8_t *p = r->payload, *e = p + r->payload_len;
    if (cp_has_ev(r->type)) {
        cp_ev *v = &r->ev;
        GU(v->api);
        GU(v->result);
        GU(v->ctx);
        GS(v->dev);
        GU(v->stream);
        GU(v->dur_ns);
        GU(v->stack);
    }
    switch (r->type) {
    case CP_REC_HEADER:
        return cp_f_header(s, r, p, e, why);
    case CP_REC_THREAD:
        GU(r->u.thread.os_tid);
        GSTR(r->u.thread.name);
        return 0;
    case CP_REC_MODULE:
        GU(r->u.module.base);
        GU(r->u.module.size);
        GU(r->u.module.file_offset);
        GSTR(r->u.module.path);
        GSTR(r->u.module.build_id);
        return 0;
    case CP_REC_MODULE_RESET:
    case CP_REC_CALL:
        return 0;
    case CP_REC_STRING:
        GU(r->u.string.id);
        GSTR(r->u.string.text);
        return 0;
    case CP_REC_STACK:
        return cp_f_stack(s, r, p, e, why);
    case CP_REC_API:
        GU(r->u.api.api_id);
        GSTR(r->u.api.elf_name);
        GU(r->u.api.routes);
        return 0;
    case CP_REC_RESOLVE: {
        typeof(r->u.resolve) *x = &r->u.resolve;
        GSTR(x->symbol);
        GS(x->cuda_version);
        GU(x->flags);
        GU(x->result);
        GU(x->status);
        GU(x->route);
        GU(x->handed_out);
        return 0;
    }
    case CP_REC_DLOPEN: {
        typeof(r->u.dlopen) *x = &r->u.dlopen;
        GSTR(x->requested);
        GU(x->flags);
        GU(x->ok);
        GSTR(x->found_path);
        GSTR(x->error);
        GU(x->lib_kind);
        return 0;
    }
    case CP_REC_DRIVER:
        GS(r->u.driver.driver_version);
        GU(r->u.driver.result);
        return 0;
    case CP_REC_DEVICE: {
        typeof(r->u.device) *x = &r->u.device;
        GU(x->ordinal);
        GSTR(x->name);
        *why = "uuid";
        if (e - p < 16)
            return -1;
        memcpy(x->uuid, p, 16);
        p += 16;
        GU(x->pci_domain);
        GU(x->pci_bus);
        GU(x->pci_device);
        GU(x->cc_major);
        GU(x->cc_minor);
        GU(x->total_mem);
        GU(x->pageable_access);
        GU(x->uses_host_page_tables);
        GU(x->sm_count);
        return 0;
    }
    case CP_REC_ALLOC:
        GU(r->u.alloc.kind);
        GU(r->u.alloc.ptr);
        GU(r->u.alloc.size);
        GU(r->u.alloc.flags);
        GU(r->u.alloc.pool);
        return 0;
    case CP_REC_FREE:
        GU(r->u.free.kind);
        GU(r->u.free.ptr);
        GU(r->u.free.size);
        return 0;
    case CP_REC_COPY: {
        typeof(r->u.copy) *x = &r->u.copy;
        GU(x->bytes);
        GU(x->dst_class);
        GS(x->dst_dev);
        GU(x->src_class);
        GS(x->src_dev);
        GU(x->dst_ptr);
        GU(x->src_ptr);
        GU(x->flags);
        GU(x->n_batch);
        x->launches = CP_LAUNCHES_UNKNOWN;
        if (p < e)
            GU(x->launches);
        return 0;
    }
    case CP_REC_MEMSET:
        GU(r->u.memset.dst_ptr);
        GU(r->u.memset.bytes);
        GU(r->u.memset.dst_class);
        GS(r->u.memset.dst_dev);
        return 0;
    case CP_REC_CTX:
        GU(r->u.ctx.op);
        GU(r->u.ctx.target_ctx);
        GS(r->u.ctx.target_dev);
        GU(r->u.ctx.flags);
        return 0;
    case CP_REC_STREAM:
        GU(r->u.stream.op);
        GU(r->u.stream.target_stream);
        GU(r->u.stream.flags);
        GS(r->u.stream.priority);
        return 0;
    case CP_REC_VMM: {
        typeof(r->u.vmm) *x = &r->u.vmm;
        GU(x->op);
        GU(x->va);
        GU(x->size);
        GU(x->handle);
        GU(x->loc_type);
        GS(x->loc_id);
        GU(x->offset);
        GU(x->flags);
        return 0;
    }
    case CP_REC_POOL:
        GU(r->u.pool.op);
        GU(r->u.pool.pool);
        GS(r->u.pool.pool_dev);
        GU(r->u.pool.attr);
        GU(r->u.pool.value);
        return 0;
    case CP_REC_LAUNCH_COUNT:
        GU(r->u.launch_count.api);
        GU(r->u.launch_count.func);
        GU(r->u.launch_count.count);
        GSTR(r->u.launch_count.name);
        return 0;
    case CP_REC_XDEV: {
        typeof(r->u.xdev) *x = &r->u.xdev;
        GU(x->func);
        GU(x->param_index);
        GU(x->ptr);
        GS(x->ptr_dev);
        GU(x->alloc_base);
        GU(x->alloc_size);
        GSTR(x->func_name);
        return 0;
    }
    case CP_REC_OOM:
        return cp_f_oom(s, r, p, e, why);
    case CP_REC_SYNC:
        GU(r->u.sync.op);
        r->u.sync.launches = CP_LAUNCHES_UNKNOWN;
        if (p < e)
            GU(r->u.sync.launches);
        return 0;
    case CP_REC_FORK:
        GU(r->u.fork.child_pid);
        return 0;
    case CP_REC_EXEC:
        GSTR(r->u.exec.path);
        GS(r->u.exec.errno_after);
        return 0;
    case CP_REC_SIGNAL:
        GU(r->u.signal.signo);
        GS(r->u.signal.code);
        GU(r->u.signal.addr);
        return 0;
    case CP_REC_LOST:
        GU(r->u.lost.records_lost);
        GSTR(r->u.lost.why);
        return 0;
    case CP_REC_LOG:
        GU(r->u.log.level);
        GSTR(r->u.log.text);
        return 0;
    case CP_REC_FRAMEWORK:
        GSTR(r->u.framework.kind);
        GSTR(r->u.framework.json);
        return 0;
    case CP_REC_PYFRAME:
        GU(r->u.pyframe.id);
        GU(r->u.pyframe.file_str);
        GU(r->u.pyframe.func_str);
        GU(r->u.pyframe.line);
        return 0;
    case CP_REC_END:
        GU(r->u.end.reason);
        GS(r->u.end.status);
        GU(r->u.end.records);
        GU(r->u.end.dropped);
        return 0;
    default:
        return 0;   /* unknown type: the caller still gets type and payload */
    }
}
