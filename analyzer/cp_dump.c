/*
 * cp_dump.c - `cuprobe-analyze dump TRACE...`: every record as one line of
 * text, for debugging the format and the shim (like `uftrace dump`).
 */
#include <stdio.h>
#include <string.h>

#include "cp_decode.h"
#include "cp_dump.h"

static void cp_put_esc(FILE *f, const char *name, cp_str s)
{
    fprintf(f, " %s=\"", name);
    for (size_t i = 0; i < s.n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            putc(c, f);
    }
    putc('"', f);
}

#define U(name, v) fprintf(f, " " name "=%llu", (unsigned long long)(v))
#define S(name, v) fprintf(f, " " name "=%lld", (long long)(v))
#define X(name, v) fprintf(f, " " name "=0x%llx", (unsigned long long)(v))
#define STR(name, v) cp_put_esc(f, name, v)

static void cp_put_api(FILE *f, const cp_dec *d, const char *name, uint64_t id)
{
    const char *n = cp_dec_api_name(d, id);
    if (n)
        fprintf(f, " %s=%s", name, n);
    else
        fprintf(f, " %s=#%llu", name, (unsigned long long)id);
}

static void cp_put_ev(FILE *f, const cp_dec *d, const cp_ev *e)
{
    cp_put_api(f, d, "api", e->api);
    U("result", e->result);
    X("ctx", e->ctx);
    S("dev", e->dev);
    X("stream", e->stream);
    U("dur_ns", e->dur_ns);
    U("stack", e->stack);
}

static void cp_dump_header(FILE *f, const cp_record *r)
{
    const typeof(r->u.header) *h = &r->u.header;
    U("pid", h->pid);
    U("ppid", h->ppid);
    U("wall_ns", h->wall_ns);
    U("root", h->root);
    STR("host", h->host);
    STR("exe", h->exe);
    STR("shim_version", h->shim_version);
    U("argc", h->argc);
    for (uint64_t i = 0; i < h->argc; i++) {
        char n[32];
        snprintf(n, sizeof n, "argv[%llu]", (unsigned long long)i);
        STR(n, h->argv[i]);
    }
    U("nenv", h->nenv);
    for (uint64_t i = 0; i < h->nenv; i++) {
        char n[256];
        snprintf(n, sizeof n, "env.%.*s", (int)h->env_name[i].n, h->env_name[i].p);
        STR(n, h->env_value[i]);
    }
    U("page_size", h->page_size);
}

static void cp_dump_stack(FILE *f, const cp_record *r)
{
    U("id", r->u.stack.id);
    fputs(" native=[", f);
    for (uint64_t i = 0; i < r->u.stack.n_native; i++)
        fprintf(f, "%s0x%llx", i ? " " : "", (unsigned long long)r->u.stack.ip[i]);
    fputs("] py=[", f);
    for (uint64_t i = 0; i < r->u.stack.n_py; i++)
        fprintf(f, "%s%llu", i ? " " : "", (unsigned long long)r->u.stack.pyframe[i]);
    fputs("]", f);
}

static void cp_dump_device(FILE *f, const cp_record *r)
{
    const typeof(r->u.device) *x = &r->u.device;
    U("ordinal", x->ordinal);
    STR("name", x->name);
    fputs(" uuid=", f);
    for (int i = 0; i < 16; i++)
        fprintf(f, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", x->uuid[i]);
    U("pci_domain", x->pci_domain);
    U("pci_bus", x->pci_bus);
    U("pci_device", x->pci_device);
    U("cc_major", x->cc_major);
    U("cc_minor", x->cc_minor);
    U("total_mem", x->total_mem);
    U("pageable_access", x->pageable_access);
    U("uses_host_page_tables", x->uses_host_page_tables);
    U("sm_count", x->sm_count);
}

static void cp_dump_mem(FILE *f, const cp_dec *d, const cp_record *r)
{
    char fl[96];
    switch (r->type) {
    case CP_REC_ALLOC:
        fprintf(f, " kind=%s", cp_mem_kind_name(r->u.alloc.kind));
        X("ptr", r->u.alloc.ptr);
        U("size", r->u.alloc.size);
        X("flags", r->u.alloc.flags);
        X("pool", r->u.alloc.pool);
        break;
    case CP_REC_FREE:
        fprintf(f, " kind=%s", cp_mem_kind_name(r->u.free.kind));
        X("ptr", r->u.free.ptr);
        U("size", r->u.free.size);
        break;
    case CP_REC_COPY: {
        const typeof(r->u.copy) *c = &r->u.copy;
        U("bytes", c->bytes);
        fprintf(f, " dst_class=%s", cp_mem_class_name(c->dst_class));
        S("dst_dev", c->dst_dev);
        fprintf(f, " src_class=%s", cp_mem_class_name(c->src_class));
        S("src_dev", c->src_dev);
        X("dst_ptr", c->dst_ptr);
        X("src_ptr", c->src_ptr);
        fprintf(f, " flags=%s", cp_copy_flags_str(c->flags, fl, sizeof fl));
        U("n_batch", c->n_batch);
        if (c->launches != CP_LAUNCHES_UNKNOWN)
            U("launches", c->launches);
        break;
    }
    case CP_REC_MEMSET:
        X("dst_ptr", r->u.memset.dst_ptr);
        U("bytes", r->u.memset.bytes);
        fprintf(f, " dst_class=%s", cp_mem_class_name(r->u.memset.dst_class));
        S("dst_dev", r->u.memset.dst_dev);
        break;
    case CP_REC_XDEV: {
        const typeof(r->u.xdev) *x = &r->u.xdev;
        X("func", x->func);
        U("param_index", x->param_index);
        X("ptr", x->ptr);
        S("ptr_dev", x->ptr_dev);
        X("alloc_base", x->alloc_base);
        U("alloc_size", x->alloc_size);
        STR("func_name", x->func_name);
        break;
    }
    case CP_REC_OOM:
        U("requested", r->u.oom.requested);
        U("free", r->u.oom.free);
        U("total", r->u.oom.total);
        U("n_procs", r->u.oom.n_procs);
        for (uint64_t i = 0; i < r->u.oom.n_procs; i++)
            fprintf(f, " proc[%llu]=%llu:%llu", (unsigned long long)i,
                    (unsigned long long)r->u.oom.procs[i].pid,
                    (unsigned long long)r->u.oom.procs[i].used_bytes);
        break;
    }
    (void)d;
}

static void cp_dump_ops(FILE *f, const cp_record *r)
{
    fprintf(f, " op=%s", cp_op_name(r->type, r->type == CP_REC_CTX ? r->u.ctx.op
                                             : r->type == CP_REC_STREAM ? r->u.stream.op
                                             : r->type == CP_REC_VMM ? r->u.vmm.op
                                             : r->type == CP_REC_POOL ? r->u.pool.op
                                                                      : r->u.sync.op));
    if (r->type == CP_REC_SYNC && r->u.sync.launches != CP_LAUNCHES_UNKNOWN)
        U("launches", r->u.sync.launches);
    switch (r->type) {
    case CP_REC_CTX:
        X("target_ctx", r->u.ctx.target_ctx);
        S("target_dev", r->u.ctx.target_dev);
        X("flags", r->u.ctx.flags);
        break;
    case CP_REC_STREAM:
        X("target_stream", r->u.stream.target_stream);
        X("flags", r->u.stream.flags);
        S("priority", r->u.stream.priority);
        break;
    case CP_REC_VMM:
        X("va", r->u.vmm.va);
        U("size", r->u.vmm.size);
        X("handle", r->u.vmm.handle);
        U("loc_type", r->u.vmm.loc_type);
        S("loc_id", r->u.vmm.loc_id);
        U("offset", r->u.vmm.offset);
        X("flags", r->u.vmm.flags);
        break;
    case CP_REC_POOL:
        X("pool", r->u.pool.pool);
        S("pool_dev", r->u.pool.pool_dev);
        U("attr", r->u.pool.attr);
        U("value", r->u.pool.value);
        break;
    }
}

static void cp_dump_misc(FILE *f, const cp_dec *d, const cp_record *r)
{
    switch (r->type) {
    case CP_REC_THREAD:
        U("os_tid", r->u.thread.os_tid);
        STR("name", r->u.thread.name);
        break;
    case CP_REC_MODULE:
        X("base", r->u.module.base);
        U("size", r->u.module.size);
        X("file_offset", r->u.module.file_offset);
        STR("path", r->u.module.path);
        STR("build_id", r->u.module.build_id);
        break;
    case CP_REC_STRING:
        U("id", r->u.string.id);
        STR("text", r->u.string.text);
        break;
    case CP_REC_API:
        U("api_id", r->u.api.api_id);
        STR("elf_name", r->u.api.elf_name);
        fputs(" routes=", f);
        if (!r->u.api.routes)
            fputs("none", f);
        for (unsigned b = 0, sep = 0; b < 8; b++)
            if (r->u.api.routes & (1u << b)) {
                fprintf(f, "%s%s", sep++ ? "|" : "", cp_route_name(b));
            }
        break;
    case CP_REC_RESOLVE:
        STR("symbol", r->u.resolve.symbol);
        S("cuda_version", r->u.resolve.cuda_version);
        X("flags", r->u.resolve.flags);
        U("result", r->u.resolve.result);
        U("status", r->u.resolve.status);
        fprintf(f, " route=%s", cp_route_name(r->u.resolve.route));
        U("handed_out", r->u.resolve.handed_out);
        break;
    case CP_REC_DLOPEN:
        STR("requested", r->u.dlopen.requested);
        X("flags", r->u.dlopen.flags);
        U("ok", r->u.dlopen.ok);
        STR("found_path", r->u.dlopen.found_path);
        STR("error", r->u.dlopen.error);
        fprintf(f, " lib_kind=%s", cp_libkind_name(r->u.dlopen.lib_kind));
        break;
    case CP_REC_DRIVER:
        S("driver_version", r->u.driver.driver_version);
        U("result", r->u.driver.result);
        break;
    case CP_REC_LAUNCH_COUNT:
        cp_put_api(f, d, "api", r->u.launch_count.api);
        X("func", r->u.launch_count.func);
        U("count", r->u.launch_count.count);
        STR("name", r->u.launch_count.name);
        break;
    case CP_REC_FORK:
        U("child_pid", r->u.fork.child_pid);
        break;
    case CP_REC_EXEC:
        STR("path", r->u.exec.path);
        S("errno_after", r->u.exec.errno_after);
        break;
    case CP_REC_SIGNAL:
        U("signo", r->u.signal.signo);
        S("code", r->u.signal.code);
        X("addr", r->u.signal.addr);
        break;
    case CP_REC_LOST:
        U("records_lost", r->u.lost.records_lost);
        STR("why", r->u.lost.why);
        break;
    case CP_REC_LOG:
        U("level", r->u.log.level);
        STR("text", r->u.log.text);
        break;
    case CP_REC_FRAMEWORK:
        STR("kind", r->u.framework.kind);
        STR("json", r->u.framework.json);
        break;
    case CP_REC_PYFRAME:
        U("id", r->u.pyframe.id);
        U("file_str", r->u.pyframe.file_str);
        U("func_str", r->u.pyframe.func_str);
        U("line", r->u.pyframe.line);
        break;
    case CP_REC_END:
        fprintf(f, " reason=%s", cp_end_reason_name(r->u.end.reason));
        S("status", r->u.end.status);
        U("records", r->u.end.records);
        U("dropped", r->u.end.dropped);
        break;
    case CP_REC_MODULE_RESET:
        break;
    default:
        U("len", r->payload_len);
        break;
    }
}

static void cp_dump_record(FILE *f, const cp_dec *d, const cp_record *r)
{
    if (strcmp(cp_rec_type_name(r->type), "UNKNOWN") == 0)
        fprintf(f, "UNKNOWN(%u)", r->type);
    else
        fputs(cp_rec_type_name(r->type), f);
    fprintf(f, " ts=%llu.%09llu tid=%llu", (unsigned long long)(r->ts / 1000000000u),
            (unsigned long long)(r->ts % 1000000000u), (unsigned long long)r->tid);
    switch (r->type) {
    case CP_REC_HEADER:
        cp_dump_header(f, r);
        break;
    case CP_REC_STACK:
        cp_dump_stack(f, r);
        break;
    case CP_REC_DEVICE:
        cp_dump_device(f, r);
        break;
    case CP_REC_CALL:
        cp_put_ev(f, d, &r->ev);
        break;
    case CP_REC_ALLOC: case CP_REC_FREE: case CP_REC_COPY: case CP_REC_MEMSET:
    case CP_REC_XDEV: case CP_REC_OOM:
        cp_put_ev(f, d, &r->ev);
        cp_dump_mem(f, d, r);
        break;
    case CP_REC_CTX: case CP_REC_STREAM: case CP_REC_VMM: case CP_REC_POOL:
    case CP_REC_SYNC:
        cp_put_ev(f, d, &r->ev);
        cp_dump_ops(f, r);
        break;
    default:
        cp_dump_misc(f, d, r);
        break;
    }
    putc('\n', f);
}

/* @return : 0 complete, 2 truncated/corrupt/unreadable. */
static int cp_dump_file(const char *path, FILE *f)
{
    const char *err;
    cp_dec *d = cp_dec_open(path, &err);
    if (!d) {
        fflush(f);
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    cp_record r;
    int rc;
    while ((rc = cp_dec_next(d, &r)) == 1)
        cp_dump_record(f, d, &r);
    fflush(f);
    if (rc < 0)
        fprintf(stderr, "%s\n", cp_dec_err(d));
    cp_dec_close(d);
    return rc < 0 ? 2 : 0;
}

int cp_dump_main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cuprobe-analyze dump TRACE...\n");
        return 2;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    int status = 0;
    for (int i = 1; i < argc; i++) {
        if (argc > 2)
            printf("%s==> %s <==\n", i > 1 ? "\n" : "", argv[i]);
        if (cp_dump_file(argv[i], stdout))
            status = 2;
    }
    fflush(stdout);
    return status;
}
