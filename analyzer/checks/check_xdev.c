/*
 * check_xdev.c - cross-device-access: work on one device touching another
 * device's memory or stream:
 *   - a kernel launched on device A with a pointer argument into device B's
 *     memory (the shim's launch check, CP_REC_XDEV);
 *   - copies and memsets whose device endpoint is not on the calling
 *     context's device (explicit peer copies and a device-to-device copy
 *     with one end on the current device, i.e. tensor.to("cuda:1"), are
 *     what the user asked for and are not reported);
 *   - work submitted to a stream that was created in another device's
 *     context.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_checks.h"

extern const cp_check cp_check_xdev;   /* defined at the end of this file */

typedef struct cp_xd {
    cp_map kern, copy, stream;      /* -> cp_agg_val */
} cp_xd;

static const cp_state_map xd_maps[] = {
    CP_STATE_MAP(cp_xd, kern, cp_agg_val),
    CP_STATE_MAP(cp_xd, copy, cp_agg_val),
    CP_STATE_MAP(cp_xd, stream, cp_agg_val),
};

static uint64_t cp_mix(uint64_t a, uint64_t b)
{
    return (a * 0x9E3779B97F4A7C15ull) ^ (b + 0x7f4a7c159e3779b9ull + (a << 6) + (a >> 2));
}

static void xd_note(cp_agg_val *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xd_note(cp_agg_val *v, const char *fmt, ...)
{
    if (!v || v->note)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    v->note = cp_sym_intern(buf, strlen(buf));
}

static int cp_dev_ep(uint64_t c)
{
    return c == CP_MC_DEVICE;
}

/* Work on a stream of another GPU's context (never a default stream:
 * cp_stream_default). */
static void xd_stream(cp_proc *p, cp_xd *s, const cp_record *r)
{
    if (cp_stream_default(r->ev.stream) || r->ev.dev < 0)
        return;
    const cp_stream_info *si = cp_map_get(&p->streams, r->ev.stream);
    if (!si || si->ctx == r->ev.ctx || si->dev < 0 || si->dev == r->ev.dev)
        return;
    cp_agg_val *v = cp_agg_add(&s->stream, cp_mix(r->ev.stack, r->ev.api), r->ev.stack, 0,
                               r->ev.dur_ns, r->ts);
    const char *api = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
    xd_note(v, "%s from a GPU %lld context on a stream of GPU %d", api ? api : "?",
            (long long)r->ev.dev, si->dev);
}

static void xd_copy(cp_proc *p, cp_xd *s, const cp_record *r)
{
    int64_t cur = r->ev.dev;
    if (cur < 0 || (r->u.copy.flags & CP_CF_PEER))
        return;
    int dd = cp_dev_ep(r->u.copy.dst_class) && r->u.copy.dst_dev >= 0;
    int sd = cp_dev_ep(r->u.copy.src_class) && r->u.copy.src_dev >= 0;
    int64_t other;
    const char *what;
    if (dd && sd) {
        if (r->u.copy.dst_dev == cur || r->u.copy.src_dev == cur)
            return;
        other = r->u.copy.src_dev;
        what = "device-to-device copy between two other GPUs";
    } else if (dd && r->u.copy.dst_dev != cur) {
        other = r->u.copy.dst_dev;
        what = "copy into another GPU's memory";
    } else if (sd && r->u.copy.src_dev != cur) {
        other = r->u.copy.src_dev;
        what = "copy from another GPU's memory";
    } else {
        return;
    }
    cp_agg_val *v = cp_agg_add(&s->copy, cp_mix(r->ev.stack, (uint64_t)other), r->ev.stack,
                               r->u.copy.bytes, r->ev.dur_ns, r->ts);
    const char *api = p->dec ? cp_dec_api_name(p->dec, r->ev.api) : NULL;
    xd_note(v, "%s: %s (GPU %lld memory) from a GPU %lld context", api ? api : "?", what,
            (long long)other, (long long)cur);
}

/* The rest of cross-device-access's records: inline too (cp_checks.h). */
static inline __attribute__((always_inline)) void
xd_rec_full(cp_proc *p, cp_xd *s, const cp_record *r)
{
    switch (r->type) {
    case CP_REC_XDEV: {
        cp_agg_val *v = cp_agg_add(&s->kern, cp_mix(r->ev.stack, r->u.xdev.func), r->ev.stack,
                                   0, 0, r->ts);
        const cp_str *n = &r->u.xdev.func_name;
        xd_note(v, "kernel %.*s on GPU %lld: argument %llu points into GPU %lld memory "
                "(allocation of %llu bytes)", n->n ? (int)n->n : 1, n->n ? n->p : "?",
                (long long)r->ev.dev, (unsigned long long)r->u.xdev.param_index,
                (long long)r->u.xdev.ptr_dev, (unsigned long long)r->u.xdev.alloc_size);
        break;
    }
    case CP_REC_COPY:
        xd_copy(p, s, r);
        break;
    case CP_REC_MEMSET:
        if (cp_mem_other_gpu(r->u.memset.dst_class, r->u.memset.dst_dev, r->ev.dev)) {
            cp_agg_val *v = cp_agg_add(&s->copy, cp_mix(r->ev.stack, 1000), r->ev.stack,
                                       r->u.memset.bytes, r->ev.dur_ns, r->ts);
            xd_note(v, "memset of GPU %lld memory from a GPU %lld context",
                    (long long)r->u.memset.dst_dev, (long long)r->ev.dev);
        }
        break;
    default:
        break;
    }
    if (r->type != CP_REC_XDEV)
        xd_stream(p, s, r);
}

/* A record on a default stream (or of no device) that is not an XDEV,
 * COPY or MEMSET, before xd_rec_full(): inlined into the checks'
 * dispatch. */
__attribute__((always_inline)) inline void
cp_check_xdev_rec(cp_proc *p, void *st, const cp_record *r)
{
    if (r->type != CP_REC_XDEV && r->type != CP_REC_COPY && r->type != CP_REC_MEMSET &&
        (cp_stream_default(r->ev.stream) || r->ev.dev < 0))
        return;                 /* what xd_stream() returns at once for */
    xd_rec_full(p, st, r);
}

static void xd_finish(cp_proc *p, void *st, cp_report *rep)
{
    cp_xd *s = st;
    char b1[32];
    cp_finding *f = cp_finding_of_map(rep, &cp_check_xdev, p, &s->kern,
                                      CP_SEV_OF_CHECK, CP_SORT_COUNT);
    if (f) {
        cp_finding_retitle(f, "%llu kernel launch%s read or wrote another GPU's memory",
                           (unsigned long long)f->count, f->count == 1 ? "" : "es");
        cp_finding_line(f, "Such a kernel either faults (no peer access: "
                        "CUDA_ERROR_ILLEGAL_ADDRESS) or reads over NVLink/PCIe at a "
                        "fraction of local memory bandwidth.");
        cp_jb_ks(&f->details, "kind", "kernel");
    }
    f = cp_finding_of_map(rep, &cp_check_xdev, p, &s->copy, CP_SEV_WARNING, CP_SORT_BYTES);
    if (f) {
        cp_finding_retitle(f, "%llu cop%s or memset%s (%s) touched memory of a GPU other "
                           "than the current context's",
                           (unsigned long long)f->count, f->count == 1 ? "y" : "ies",
                           f->count == 1 ? "" : "s", cp_fmt_bytes(f->bytes, b1, sizeof b1));
        cp_finding_line(f, "The copy was issued from one device's context on another "
                        "device's memory: it works through unified addressing but is "
                        "staged or serialised, and usually means a tensor or buffer is "
                        "on the wrong device.");
        cp_jb_ks(&f->details, "kind", "copy");
    }
    f = cp_finding_of_map(rep, &cp_check_xdev, p, &s->stream, CP_SEV_OF_CHECK, CP_SORT_COUNT);
    if (f) {
        cp_finding_retitle(f, "%llu call%s submitted work to a stream created on another "
                           "GPU", (unsigned long long)f->count, f->count == 1 ? "" : "s");
        cp_finding_line(f, "A stream belongs to the context it was created in; work "
                        "submitted to it from another device's context fails "
                        "(CUDA_ERROR_INVALID_HANDLE) or runs on the stream's device.");
        cp_jb_ks(&f->details, "kind", "stream");
    }
}

const cp_check cp_check_xdev = {
    .id = "cross-device-access",
    .sev = CP_SEV_ERROR,
    .name = "work on one GPU touching another GPU",
    .explain = "Memory, streams and contexts belong to one device. A kernel on GPU A given a "
               "pointer into GPU B's memory, a copy issued from GPU A's context on GPU B's "
               "memory, or work put on a stream of another context means some tensor, "
               "buffer or stream is on the wrong device: the access is slow (peer traffic "
               "over NVLink or PCIe), or it faults when peer access is not enabled.",
    .fix = "Move the data to the device that uses it first (tensor.to(device) once, outside "
           "the loop), set the current device before launching (torch.cuda.set_device, "
           "with torch.cuda.device(...), cuCtxSetCurrent), and create streams on the device "
           "that will use them. For intended peer access, use explicit peer copies "
           "(cuMemcpyPeer) after enabling peer access.",
    .types = CP_TYPE_BIT(CP_REC_XDEV) | CP_TYPE_BIT(CP_REC_COPY) | CP_TYPE_BIT(CP_REC_MEMSET) |
             CP_TYPE_BIT(CP_REC_SYNC) | CP_TYPE_BIT(CP_REC_CALL) | CP_TYPE_BIT(CP_REC_ALLOC) |
             CP_TYPE_BIT(CP_REC_FREE),
    CP_CHECK_STATE(cp_xd, xd_maps),
    .rec = cp_check_xdev_rec,
    .finish = xd_finish,
};
