/*
 * cp_evt.h - what every hook needs to write an event: the EV prefix (api,
 * result, context, device, stream, duration, call site), API-name
 * announcements, the current context and its device, capture state, and
 * copy-endpoint classification.
 */
#ifndef CP_EVT_H
#define CP_EVT_H

#include <stdint.h>

#include "cp_cuda.h"
#include "cp_real.h"
#include "cp_rec.h"
#include "cp_wrap.h"

/* Who the call ran for: filled by cp_ev_ctx(). */
typedef struct cp_where {
    CUcontext ctx;
    int dev;
    uint64_t stack;
} cp_where;

/*! cp_ev_ctx() : the calling thread's current context and its device, and
 *  (when want_stack) the call site.  While a stream capture is active no
 *  driver call is made: the context is then the one cuprobe last saw made
 *  current on this thread. */
void cp_ev_ctx(cp_where *w, int want_stack);

/*! cp_ev_site() : the call site into w->stack (native and Python frames),
 *  for a hook that decides after cp_ev_ctx(w, 0) whether its record needs
 *  one (a free, a memset: only where a check reads it). */
void cp_ev_site(cp_where *w);

/*! cp_ev_announce() : write CP_REC_API for api unless this file has it. */
void cp_ev_announce(uint32_t api);

/*! cp_ev_begin() : announce c->api if this file has not seen it, then open
 *  a record of `type` with room for `extra` bytes after the EV prefix, and
 *  write the prefix.  @return : where the type's own fields go, or NULL. */
uint8_t *cp_ev_begin(unsigned type, const cp_call *c, const cp_where *w, CUstream stream,
                     size_t extra);

/*! cp_ev_commit() : commit an EV record of call c: its time is when the
 *  timed call returned (the wrapper's clock read, no other), or for an
 *  untimed call the clock at commit. */
static inline void cp_ev_commit(const cp_call *c, uint8_t *end)
{
    cp_rec_commit_at(end, c->t0 ? c->t0 + c->dur : 0);
}

/*! cp_ev_put_<rec>(c, w, stream, fields...) : record <rec> (an EV record of
 *  include/cp_records.h) with the EV prefix of call c, made in w, on
 *  stream: the size bound comes from the table (CP_REC_BOUND), the fields
 *  are written by cp_enc_<rec>().  Nothing is written when tracing is off.
 *  Generated for every EV record. */
#define CP_EV_PUT_FN_(N, id, l, shape, doc) CP_EV_PUT_##shape(N, l)
#define CP_EV_PUT_REC(N, l)
#define CP_EV_PUT_BARE(N, l)
#define CP_EV_PUT_EV(N, l)                                                  \
    static inline __attribute__((always_inline, unused)) void               \
        cp_ev_put_##l(const cp_call *c_, const cp_where *w_,                \
                      CUstream s_ CP_F_##N(CP_ENC_PARAM))                   \
    {                                                                       \
        uint8_t *p = cp_ev_begin(CP_REC_##N, c_, w_, s_, CP_REC_BOUND(N));  \
        if (p)                                                              \
            cp_ev_commit(c_, cp_enc_##l(p CP_F_##N(CP_ENC_ARG)));           \
    }
CP_RECORDS(CP_EV_PUT_FN_)

/*! cp_ev_call() : a CP_REC_CALL record (nothing more to say). */
void cp_ev_call(const cp_call *c, CUstream stream, int want_stack);

/*! cp_ev_capturing() : non-zero while any stream capture is active in the
 *  process; hooks then make no extra driver calls. */
int cp_ev_capturing(void);

/*! cp_ev_capture_delta() : +1 when a capture began, -1 when one ended. */
void cp_ev_capture_delta(int d);

/*! cp_ev_set_tls_ctx() : the context this thread made current (set, push,
 *  pop, create): the fallback for cp_ev_ctx() during capture. */
void cp_ev_set_tls_ctx(CUcontext ctx);

/*! cp_ev_tls_ctx() : the context this thread last made current through a
 *  call cuprobe saw (NULL if none): no driver call. */
CUcontext cp_ev_tls_ctx(void);

/*! cp_ctx_learn() / cp_ctx_forget() : ctx -> device, learned when a context
 *  is created or retained. */
void cp_ctx_learn(CUcontext ctx, int dev);
void cp_ctx_forget(CUcontext ctx);

/*! cp_ctx_device() : the device of ctx, or -1 if unknown (no driver call). */
int cp_ctx_device(CUcontext ctx);

/*! cp_classify() : the memory class and device of addr: cuprobe's maps first,
 *  then (when not capturing and `may_query`) one cuPointerGetAttributes.
 *  host_side says the API declares addr host memory (an HtoD source...):
 *  the device map is not consulted. */
void cp_classify(uint64_t addr, int host_side, int may_query, int *mclass, int *dev);

/*! cp_ev_devices() : record the driver version and every device (name,
 *  UUID, PCI bus id, compute capability, memory, pageable access).  Called
 *  after a successful cuInit and again for each new trace file. */
void cp_ev_devices(void);

/*! cp_devinfo_on_new_file() : record the driver version and devices known
 *  so far into a new trace file (a forked child's), without driver calls. */
void cp_devinfo_on_new_file(void);

/*! cp_devinfo_after_fork() : in a fork child: re-initialise the device
 *  table's lock (another thread may have held it). */
void cp_devinfo_after_fork(void);

/*! cp_ev_oom() : a failed allocation: record free/total memory of dev, the
 *  other processes on it (NVML, when it can be loaded), then flush the trace
 *  so the post-mortem survives whatever happens next. */
void cp_ev_oom(const cp_call *c, const cp_where *w, CUstream stream, int dev,
               uint64_t requested);

#endif /* CP_EVT_H */
