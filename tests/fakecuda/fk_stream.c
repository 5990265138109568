/*
 * fk_stream.c - streams, events, stream capture and graphs of the fake
 * driver.
 *
 * Work runs synchronously when it is issued, so streams and events are
 * handles that are validated and otherwise only matter for capture: work
 * issued to a capturing stream is recorded as graph nodes (copies, memsets,
 * kernels) and runs when the instantiated graph is launched.  Synchronizing
 * a capturing stream invalidates the capture, as on real GPUs.
 */
#include <stdlib.h>
#include <string.h>

#include "fk_internal.h"

/* CUDA_ERROR_ILLEGAL_STATE (401) of cuda.h; cp_cuda.h does not list it. */
#define FK_ERROR_ILLEGAL_STATE ((CUresult)401)

struct CUgraph_st {
    uint32_t magic;
    struct fk_node *nodes;
    size_t n, cap;
};

struct CUgraphExec_st {
    uint32_t magic;
    struct fk_node *nodes;
    size_t n;
};

struct CUevent_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    unsigned flags;
};

#define FK_MAX_CAPTURING 64
static struct CUstream_st *fk_capturing[FK_MAX_CAPTURING];
static int fk_ncapturing;

CUresult fk_sref_get(CUstream s, struct fk_sref *out)
{
    out->s = NULL;
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return fk_ctx_current(&out->ctx);
    if (s->magic != FK_MAGIC_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fk_ctx_check(s->ctx) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    out->ctx = s->ctx;
    out->s = s;
    return CUDA_SUCCESS;
}

/* Stop tracking s as capturing (fk_lock held). */
static void fk_capture_forget_locked(struct CUstream_st *s)
{
    for (int i = 0; i < fk_ncapturing; i++)
        if (fk_capturing[i] == s) {
            fk_capturing[i] = fk_capturing[--fk_ncapturing];
            return;
        }
}

int fk_capture_conflict_locked(const struct CUctx_st *ctx)
{
    int hit = 0;
    for (int i = 0; i < fk_ncapturing; i++) {
        struct CUstream_st *s = fk_capturing[i];
        if (s->ctx == ctx && s->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
            s->capture == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            s->capture = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
            hit = 1;
        }
    }
    return hit;
}

void fk_run_node(const struct fk_node *nd)
{
    switch (nd->kind) {
    case FK_NODE_COPY:
        memmove(nd->dst, nd->src, nd->n);
        break;
    case FK_NODE_MEMSET:
        if (nd->elem == 1) {
            memset(nd->dst, (int)(nd->value & 0xff), nd->n);
        } else if (nd->elem == 2) {
            uint16_t v = (uint16_t)nd->value, *p = nd->dst;
            for (size_t i = 0; i < nd->n; i++)
                p[i] = v;
        } else {
            uint32_t v = nd->value, *p = nd->dst;
            for (size_t i = 0; i < nd->n; i++)
                p[i] = v;
        }
        break;
    case FK_NODE_KERNEL:
        fk_kernel_run(nd->kdef, nd->params);
        break;
    }
}

/* Run nd now, or append it to the graph being captured on sr's stream. */
static CUresult fk_submit(const struct fk_sref *sr, const struct fk_node *nd)
{
    struct CUstream_st *s = sr ? sr->s : NULL;
    if (!s || s->capture == CU_STREAM_CAPTURE_STATUS_NONE) {
        fk_run_node(nd);
        return CUDA_SUCCESS;
    }
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&fk_lock);
    if (s->capture == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
        rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    } else {
        struct CUgraph_st *g = s->graph;
        if (g->n == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 16;
            struct fk_node *n = realloc(g->nodes, cap * sizeof(*n));
            if (!n) {
                rc = CUDA_ERROR_OUT_OF_MEMORY;
                goto out_unlock;
            }
            g->nodes = n;
            g->cap = cap;
        }
        g->nodes[g->n++] = *nd;
    }
out_unlock:
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult fk_op_copy(const struct fk_sref *sr, void *dst, const void *src, size_t n)
{
    struct fk_node nd = {.kind = FK_NODE_COPY, .dst = dst, .src = src, .n = n};
    return n ? fk_submit(sr, &nd) : CUDA_SUCCESS;
}

CUresult fk_op_memset(const struct fk_sref *sr, void *dst, unsigned value, int elem, size_t count)
{
    struct fk_node nd = {.kind = FK_NODE_MEMSET, .dst = dst, .value = value, .elem = elem, .n = count};
    return count ? fk_submit(sr, &nd) : CUDA_SUCCESS;
}

CUresult fk_op_kernel(const struct fk_sref *sr, const struct fk_kdef *k, const unsigned char *params)
{
    struct fk_node nd = {.kind = FK_NODE_KERNEL, .kdef = k};
    memcpy(nd.params, params, sizeof(nd.params));
    return fk_submit(sr, &nd);
}

static CUresult fk_stream_create(CUstream *phStream, unsigned int flags, int priority)
{
    FK_GUARD();
    if (!phStream || flags > 1)     /* CU_STREAM_DEFAULT, CU_STREAM_NON_BLOCKING */
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = fk_handle_alloc(sizeof(*s));
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = FK_MAGIC_STREAM;
    s->ctx = c;
    s->flags = flags;
    /* H200 priority range is [-5, 0]; out-of-range values are clamped. */
    s->priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
    *phStream = s;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return fk_stream_create(phStream, Flags, 0);
}
FK_ALIAS(cuStreamCreate);

CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    return fk_stream_create(phStream, flags, priority);
}
FK_ALIAS(cuStreamCreateWithPriority);

CUresult cuStreamDestroy_v2(CUstream hStream)
{
    FK_GUARD();
    if (!hStream || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD ||
        hStream->magic != FK_MAGIC_STREAM)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&fk_lock);
    fk_capture_forget_locked(hStream);
    hStream->magic = FK_MAGIC_DEAD;     /* never freed: stale handles stay detectable */
    pthread_mutex_unlock(&fk_lock);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuStreamDestroy_v2);

/* Sync or query: fails on a capturing stream and invalidates its capture. */
static CUresult fk_stream_wait(CUstream hStream, int pt, int query)
{
    FK_GUARD();
    if (fk_fault_sync() != CUDA_SUCCESS)
        return fk_fault_sync();
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&fk_lock);
    if (sr.s && sr.s->capture != CU_STREAM_CAPTURE_STATUS_NONE) {
        sr.s->capture = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    } else if (!query) {
        fk_pool_sync_trim_locked();
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult cuStreamSynchronize(CUstream hStream) { return fk_stream_wait(hStream, 0, 0); }
FK_ALIAS(cuStreamSynchronize);
CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return fk_stream_wait(hStream, 1, 0); }
FK_ALIAS(cuStreamSynchronize_ptsz);
CUresult cuStreamQuery(CUstream hStream) { return fk_stream_wait(hStream, 0, 1); }
FK_ALIAS(cuStreamQuery);
CUresult cuStreamQuery_ptsz(CUstream hStream) { return fk_stream_wait(hStream, 1, 1); }
FK_ALIAS(cuStreamQuery_ptsz);

static CUresult fk_stream_wait_event(CUstream hStream, CUevent hEvent, unsigned int Flags, int pt)
{
    FK_GUARD();
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!hEvent || hEvent->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    return Flags > 1 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return fk_stream_wait_event(hStream, hEvent, Flags, 0);
}
FK_ALIAS(cuStreamWaitEvent);
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return fk_stream_wait_event(hStream, hEvent, Flags, 1);
}
FK_ALIAS(cuStreamWaitEvent_ptsz);

static CUresult fk_stream_ctx(CUstream hStream, CUcontext *pctx, CUgreenCtx *green, int pt)
{
    FK_GUARD();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    *pctx = sr.ctx;
    if (green)
        *green = NULL;
    return CUDA_SUCCESS;
}

CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx) { return fk_stream_ctx(hStream, pctx, NULL, 0); }
FK_ALIAS(cuStreamGetCtx);
CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    return fk_stream_ctx(hStream, pctx, NULL, 1);
}
FK_ALIAS(cuStreamGetCtx_ptsz);
CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    return fk_stream_ctx(hStream, pCtx, pGreenCtx, 0);
}
FK_ALIAS(cuStreamGetCtx_v2);
CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx)
{
    return fk_stream_ctx(hStream, pCtx, pGreenCtx, 1);
}
FK_ALIAS(cuStreamGetCtx_v2_ptsz);

static CUresult fk_is_capturing(CUstream hStream, CUstreamCaptureStatus *st, int pt)
{
    FK_GUARD();
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc == CUDA_SUCCESS)
        *st = sr.s ? sr.s->capture : CU_STREAM_CAPTURE_STATUS_NONE;
    return rc;
}

CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return fk_is_capturing(hStream, captureStatus, 0);
}
FK_ALIAS(cuStreamIsCapturing);
CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    return fk_is_capturing(hStream, captureStatus, 1);
}
FK_ALIAS(cuStreamIsCapturing_ptsz);

static CUresult fk_begin_capture(CUstream hStream, CUstreamCaptureMode mode, int pt)
{
    FK_GUARD();
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!sr.s)      /* the NULL / legacy / per-thread streams cannot capture */
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if ((int)mode < 0 || (int)mode > 2)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraph_st *g = calloc(1, sizeof(*g));
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->magic = FK_MAGIC_GRAPH;
    pthread_mutex_lock(&fk_lock);
    if (sr.s->capture != CU_STREAM_CAPTURE_STATUS_NONE) {
        rc = FK_ERROR_ILLEGAL_STATE;
    } else if (fk_ncapturing == FK_MAX_CAPTURING) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        sr.s->capture = CU_STREAM_CAPTURE_STATUS_ACTIVE;
        sr.s->mode = mode;
        sr.s->graph = g;
        fk_capturing[fk_ncapturing++] = sr.s;
        g = NULL;
    }
    pthread_mutex_unlock(&fk_lock);
    free(g);
    return rc;
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return fk_begin_capture(hStream, mode, 0);
}
FK_ALIAS(cuStreamBeginCapture_v2);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return fk_begin_capture(hStream, mode, 1);
}
FK_ALIAS(cuStreamBeginCapture_v2_ptsz);

static CUresult fk_end_capture(CUstream hStream, CUgraph *phGraph, int pt)
{
    FK_GUARD();
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!sr.s)
        return FK_ERROR_ILLEGAL_STATE;
    pthread_mutex_lock(&fk_lock);
    struct CUgraph_st *g = sr.s->graph;
    if (sr.s->capture == CU_STREAM_CAPTURE_STATUS_NONE) {
        rc = FK_ERROR_ILLEGAL_STATE;
    } else {
        if (sr.s->capture == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
            free(g->nodes);
            free(g);
            g = NULL;
            rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        }
        sr.s->capture = CU_STREAM_CAPTURE_STATUS_NONE;
        sr.s->graph = NULL;
        fk_capture_forget_locked(sr.s);
        *phGraph = g;
    }
    pthread_mutex_unlock(&fk_lock);
    return rc;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return fk_end_capture(hStream, phGraph, 0);
}
FK_ALIAS(cuStreamEndCapture);
CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return fk_end_capture(hStream, phGraph, 1);
}
FK_ALIAS(cuStreamEndCapture_ptsz);

CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    FK_GUARD();
    (void)flags;
    if (!phGraphExec || !hGraph || hGraph->magic != FK_MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *e = calloc(1, sizeof(*e));
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->nodes = malloc((hGraph->n ? hGraph->n : 1) * sizeof(*e->nodes));
    if (!e->nodes) {
        free(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(e->nodes, hGraph->nodes, hGraph->n * sizeof(*e->nodes));
    e->n = hGraph->n;
    e->magic = FK_MAGIC_EXEC;
    *phGraphExec = e;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuGraphInstantiateWithFlags);

CUresult cuGraphDestroy(CUgraph hGraph)
{
    FK_GUARD();
    if (!hGraph || hGraph->magic != FK_MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    hGraph->magic = FK_MAGIC_DEAD;
    free(hGraph->nodes);
    free(hGraph);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuGraphDestroy);

CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    FK_GUARD();
    if (!hGraphExec || hGraphExec->magic != FK_MAGIC_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    hGraphExec->magic = FK_MAGIC_DEAD;
    free(hGraphExec->nodes);
    free(hGraphExec);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuGraphExecDestroy);

/* Replay: no copy or launch API is called, exactly the shim's blind spot. */
static CUresult fk_graph_launch(CUgraphExec e, CUstream hStream, int pt)
{
    FK_GUARD();
    if (!e || e->magic != FK_MAGIC_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    struct fk_sref sr;
    CUresult rc = fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
    for (size_t i = 0; rc == CUDA_SUCCESS && i < e->n; i++)
        rc = fk_submit(&sr, &e->nodes[i]);
    return rc;
}

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    return fk_graph_launch(hGraphExec, hStream, 0);
}
FK_ALIAS(cuGraphLaunch);
CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
    return fk_graph_launch(hGraphExec, hStream, 1);
}
FK_ALIAS(cuGraphLaunch_ptsz);

CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    FK_GUARD();
    if (!phEvent || (Flags & ~7u))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *c;
    if (fk_ctx_current(&c) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUevent_st *ev = fk_handle_alloc(sizeof(*ev));
    if (!ev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ev->magic = FK_MAGIC_EVENT;
    ev->ctx = c;
    ev->flags = Flags;
    *phEvent = ev;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuEventCreate);

static CUresult fk_event_record(CUevent hEvent, CUstream hStream, int pt)
{
    FK_GUARD();
    if (!hEvent || hEvent->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    struct fk_sref sr;
    return fk_sref_get(pt && !hStream ? CU_STREAM_PER_THREAD : hStream, &sr);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return fk_event_record(hEvent, hStream, 0); }
FK_ALIAS(cuEventRecord);
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return fk_event_record(hEvent, hStream, 1); }
FK_ALIAS(cuEventRecord_ptsz);

static CUresult fk_event_wait(CUevent hEvent, int sync)
{
    FK_GUARD();
    if (fk_fault_sync() != CUDA_SUCCESS)
        return fk_fault_sync();
    if (!hEvent || hEvent->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    if (sync) {
        pthread_mutex_lock(&fk_lock);
        fk_pool_sync_trim_locked();
        pthread_mutex_unlock(&fk_lock);
    }
    return CUDA_SUCCESS;
}

CUresult cuEventQuery(CUevent hEvent) { return fk_event_wait(hEvent, 0); }
FK_ALIAS(cuEventQuery);
CUresult cuEventSynchronize(CUevent hEvent) { return fk_event_wait(hEvent, 1); }
FK_ALIAS(cuEventSynchronize);

CUresult cuEventDestroy_v2(CUevent hEvent)
{
    FK_GUARD();
    if (!hEvent || hEvent->magic != FK_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    hEvent->magic = FK_MAGIC_DEAD;      /* kept, like streams */
    return CUDA_SUCCESS;
}
FK_ALIAS(cuEventDestroy_v2);
