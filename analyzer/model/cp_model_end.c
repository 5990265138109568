/*
 * cp_model_end.c - how a trace and its process ended: writing stopped at a
 * full file system (NOSPACE), the program took the trace's descriptor and
 * the shim went on in the file opened again (FD_LOST), the exit (END).
 */
#include "cp_model.h"

void cp__model_end(cp_proc *p, const cp_record *r)
{
    switch (r->type) {
    case CP_REC_NOSPACE:
        p->nospace_ts = r->ts ? r->ts : 1;
        p->nospace_err = r->u.nospace.err;
        p->nospace_records = r->u.nospace.records_dropped;
        p->nospace_bytes = r->u.nospace.bytes_dropped;
        return;
    case CP_REC_FD_LOST:   /* the first time is kept, and how often */
        if (!p->fdlost_n++) {
            p->fdlost_ts = r->ts ? r->ts : 1;
            p->fdlost_how = r->u.fd_lost.how;
        }
        return;
    case CP_REC_END:
        p->complete = 1;
        p->end_reason = r->u.end.reason;
        p->end_status = r->u.end.status;
        p->dropped = r->u.end.dropped;
        /* Only END says the process died of a signal: a SIGNAL record is
         * one the program may have handled and lived on (siglongjmp out of
         * a SIGSEGV handler, Python's KeyboardInterrupt caught). */
        if (r->u.end.reason == CP_END_SIGNAL && r->u.end.status > 0)
            p->signo = (uint64_t)r->u.end.status;
        return;
    default:
        return;
    }
}
