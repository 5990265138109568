/*
 * cp_names.c - printable names of the trace format's enums (cp_trace.h).
 */
#include <stdio.h>
#include <string.h>

#include "cp_names.h"
#include "cp_trace.h"

#define CP_NAME(tab, i) \
    ((i) < sizeof(tab) / sizeof(*(tab)) && (tab)[i] ? (tab)[i] : "?")

#define CP_REC_NAME_(N, id, l, shape, doc) [CP_REC_##N] = #N,

const char *cp_rec_type_name(unsigned type)
{
    static const char *const n[] = { CP_RECORDS(CP_REC_NAME_) };
    const char *s = type < sizeof n / sizeof *n ? n[type] : NULL;
    return s ? s : "UNKNOWN";
}

const char *cp_mem_class_name(uint64_t c)
{
    static const char *const n[] = {
        [CP_MC_UNKNOWN] = "unknown", [CP_MC_DEVICE] = "device",
        [CP_MC_PINNED] = "pinned", [CP_MC_REGISTERED] = "registered",
        [CP_MC_PAGEABLE] = "pageable", [CP_MC_MANAGED] = "managed",
        [CP_MC_ARRAY] = "array",
    };
    return CP_NAME(n, c);
}

const char *cp_mem_kind_name(uint64_t k)
{
    static const char *const n[] = {
        [CP_MK_DEVICE] = "device", [CP_MK_ASYNC] = "async", [CP_MK_POOL] = "pool",
        [CP_MK_MANAGED] = "managed", [CP_MK_HOST_PINNED] = "host_pinned",
        [CP_MK_HOST_REGISTERED] = "host_registered", [CP_MK_VMM_PHYS] = "vmm_phys",
        [CP_MK_VMM_HOST] = "vmm_host",
    };
    return CP_NAME(n, k);
}

const char *cp_op_name(unsigned type, uint64_t op)
{
    static const char *const ctx[] = {
        [CP_CTX_CREATE] = "create", [CP_CTX_DESTROY] = "destroy",
        [CP_CTX_RETAIN] = "retain", [CP_CTX_RELEASE] = "release",
        [CP_CTX_RESET] = "reset", [CP_CTX_SET] = "set", [CP_CTX_PUSH] = "push",
        [CP_CTX_POP] = "pop",
    };
    static const char *const stream[] = {
        [CP_STREAM_CREATE] = "create", [CP_STREAM_DESTROY] = "destroy",
        [CP_STREAM_BEGIN_CAPTURE] = "begin_capture",
        [CP_STREAM_END_CAPTURE] = "end_capture",
    };
    static const char *const vmm[] = {
        [CP_VMM_RESERVE] = "reserve", [CP_VMM_ADDR_FREE] = "addr_free",
        [CP_VMM_MAP] = "map", [CP_VMM_UNMAP] = "unmap",
        [CP_VMM_SET_ACCESS] = "set_access",
    };
    static const char *const pool[] = {
        [CP_POOL_CREATE] = "create", [CP_POOL_DESTROY] = "destroy",
        [CP_POOL_TRIM] = "trim", [CP_POOL_SET_ATTR] = "set_attr",
        [CP_POOL_ATTR_AT_FAILURE] = "attr_at_failure", [CP_POOL_DEFAULT] = "default",
    };
    static const char *const sync[] = {
        [CP_SYNC_CTX] = "ctx", [CP_SYNC_STREAM] = "stream",
        [CP_SYNC_EVENT] = "event", [CP_SYNC_GRAPH_LAUNCH] = "graph_launch",
    };
    switch (type) {
    case CP_REC_CTX: return CP_NAME(ctx, op);
    case CP_REC_STREAM: return CP_NAME(stream, op);
    case CP_REC_VMM: return CP_NAME(vmm, op);
    case CP_REC_POOL: return CP_NAME(pool, op);
    case CP_REC_SYNC: return CP_NAME(sync, op);
    default: return "?";
    }
}

const char *cp_route_name(uint64_t r)
{
    static const char *const n[] = {
        [CP_ROUTE_SYMBOL] = "symbol", [CP_ROUTE_DLSYM] = "dlsym",
        [CP_ROUTE_GPA] = "gpa1", [CP_ROUTE_GPA2] = "gpa2",
    };
    return CP_NAME(n, r);
}

const char *cp_libkind_name(uint64_t k)
{
    static const char *const n[] = {
        [CP_LIB_NOT_FOUND] = "not_found", [CP_LIB_DRIVER] = "driver",
        [CP_LIB_STUB] = "stub", [CP_LIB_OTHER] = "other",
    };
    return CP_NAME(n, k);
}

const char *cp_end_reason_name(uint64_t r)
{
    static const char *const n[] = {
        [CP_END_EXIT] = "exit", [CP_END__EXIT] = "_exit", [CP_END_SIGNAL] = "signal",
        [CP_END_EXEC] = "exec", [CP_END_DESTRUCTOR] = "destructor",
        [CP_END_QUICK_EXIT] = "quick_exit",
    };
    return CP_NAME(n, r);
}

const char *cp_copy_flags_str(uint64_t f, char *buf, size_t cap)
{
    static const struct { uint64_t bit; const char *name; size_t n; } n[] = {
        {CP_CF_ASYNC, "async", 5}, {CP_CF_2D, "2d", 2}, {CP_CF_3D, "3d", 2},
        {CP_CF_PEER, "peer", 4}, {CP_CF_BATCH, "batch", 5},
        {CP_CF_CAPTURING, "capturing", 9},
    };
    size_t len = 0;
    buf[0] = 0;
    /* Names copied, not printed: `dump` asks once per COPY record. */
    for (size_t i = 0; i < sizeof n / sizeof *n; i++) {
        if (!(f & n[i].bit))
            continue;
        size_t w = n[i].n + (len != 0);
        if (w >= cap - len)
            return buf;
        if (len)
            buf[len++] = '|';
        memcpy(buf + len, n[i].name, n[i].n);
        len += n[i].n;
        buf[len] = 0;
        f &= ~n[i].bit;
    }
    if (f)
        snprintf(buf + len, cap - len, "%s0x%llx", len ? "|" : "", (unsigned long long)f);
    else if (!len)
        snprintf(buf, cap, "0");
    return buf;
}
