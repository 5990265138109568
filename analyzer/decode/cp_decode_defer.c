/*
 * cp_decode_defer.c - the reader's side of the decoder thread: taking its
 * batches, stopping it, and the reader's share of the fields' parsing.
 *
 * The decoder thread decompresses, frames and parses; the reader runs the
 * model and the checks.  Which of the two sets the pace depends on the
 * machine: on some the reader waits for the decoder thread, on others
 * hardly at all.  So the lean records' fields, a good part of the decoder
 * thread's work, go to whichever thread has time: a batch begun while the
 * reader had caught up
 * is handed over raw (cp_batch.raw), its lean records framed (and their
 * time and thread decoded, which accumulate) but nothing written for
 * them, and the reader frames them again and parses them here, a run at a
 * time into d->run just before handing them out, in the same loop
 * (cp__dec_lean_run()) or with the same parser (cp__dec_fields_direct()).
 * A record that does not parse that way goes through cp__dec_fields_fast(),
 * as on the decoder thread; one that does not parse at all ends the stream
 * with the decoder thread's message, after the records before it were
 * handed out.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cp_decode.h"
#include "cp_decode_int.h"

void cp__dec_stop_thread(cp_dec *d)
{
    if (!d->threaded || d->joined)
        return;
    cp__ring_stop(d->ring);
    pthread_join(d->thread, NULL);
    d->joined = 1;
    d->stopped = 1;
}

/* The strict parser, as cp_dec_parse() on the decoder thread, for record
 * r (its type, time and thread set) at stream offset off, fields p..e.
 * @return : 0 (r has its fields), or cp__dec_fields_fast()'s < 0 and *why. */
static int cp_unstash_strict(cp_dec *d, cp_record *r, uint64_t off, const uint8_t *p,
                             const uint8_t *e, const char **why)
{
    _Alignas(16) cp_record one;
    if (!cp_rec_has_ev(r->type))
        memset(&one.ev, 0, sizeof one.ev);
    one.type = r->type;
    one.ts = r->ts;
    one.tid = r->tid;
    one.offset = off;
    one.payload = p;
    one.payload_len = (size_t)(e - p);
    int rc = cp__dec_fields_fast(&d->rscratch, &one, why);
    if (rc == 0)
        memcpy(r, &one, sizeof one);
    return rc;
}

/* The record that does not parse is the next to hand out: stop the
 * stream there, with the decoder thread's message.  @return : d->rc. */
static int cp_unstash_fail(cp_dec *d, unsigned type, uint64_t off, uint64_t plen, int frc,
                           const char *why)
{
    cp__dec_stop_thread(d);     /* its error, if any, came later in the stream */
    d->cur_i = d->cur_parsed = d->cur->n;
    return cp__dec_fields_fail(d, frc, off, type, why, plen);
}

/* A varint of a raw record, which the decoder thread read already with
 * cp__get_u_slack() from the same bytes: it cannot fail here.
 * @return : the byte after it. */
static inline const uint8_t *cp_reread_u(const uint8_t *p, uint64_t *v)
{
    p = cp__get_u_slack(p, v);
    if (__builtin_expect(!p, 0))
        abort();
    return p;
}

/* The next slotted record of d->cur from cur_slotted on (SIZE_MAX: none). */
static size_t cp_next_slotted(const cp_dec *d)
{
    return d->cur_slotted < d->cur->n_slotted ? d->cur->slotted[d->cur_slotted] : SIZE_MAX;
}

/* Parse the next run of d->cur's records from cur_parsed on into d->run,
 * framing each again from raw_off on, and advance cur_parsed past them.
 * The decoder thread framed every one and decoded its time and thread, so
 * none of that can fail here.  A record whose fields do not parse ends the
 * run; once it is the next to hand out, d fails as the decoder thread
 * would have (same message), with the thread stopped.
 * @return : 0, or d->rc. */
static int cp_dec_unstash(cp_dec *d)
{
    cp_batch *b = d->cur;
    size_t i = d->cur_parsed;
    size_t end = b->n - i > CP_DEC_RUN ? i + CP_DEC_RUN : b->n;
    size_t slotted = cp_next_slotted(d);
    size_t off = d->raw_off;
    uint64_t ts = d->raw_ts;
    cp_record *r = d->run;
    d->run_base = i;
    for (; i < end; i++, r++) {
        if (i != slotted) {
            /* The lean records up to the next slotted one, framed and
             * parsed in the decoder thread's loop (cp__dec_lean_run(), the
             * parser inlined), cheaper than this loop's framing and call
             * of the parser for each record.  The batch's
             * records lie whole in buf, whose capacity bounds the loop;
             * `stop` ends it at the run's end or the next slotted one. */
            size_t stop = slotted < end ? slotted : end;
            size_t k = cp__dec_lean_run(b->buf, &off, b->cap, d->run, i - d->run_base,
                                        stop - d->run_base, &ts, 0, d->direct);
            i += k;
            r += k;
            if (i == end)
                break;
        }
        const uint8_t *q = b->buf + off, *p, *e;
        uint64_t plen, delta, tid;
        p = cp_reread_u(q + 1, &plen);
        e = p + plen;
        if (i == slotted) {     /* parsed by the decoder thread */
            memcpy(r, &b->recs[i], sizeof *r);
            ts = r->ts;
            d->cur_slotted++;
            slotted = cp_next_slotted(d);
            off = (size_t)(e - b->buf);
            continue;
        }
        p = cp_reread_u(cp_reread_u(p, &delta), &tid);
        r->type = q[0];
        r->ts = ts + delta;
        r->tid = tid;
        if (cp__dec_fields_direct(r->type, p, e, r) != 0) {
            const char *why = "";
            uint64_t at = b->base + off;
            int frc = cp_unstash_strict(d, r, at, p, e, &why);
            if (frc < 0 && i == d->cur_i)
                return cp_unstash_fail(d, q[0], at, plen, frc, why);
            if (frc < 0)
                break;  /* hand out the records before it first: it fails once it is next */
        }
        ts += delta;
        off = (size_t)(e - b->buf);
    }
    d->cur_parsed = i;
    d->raw_off = off;
    d->raw_ts = ts;
    return 0;
}

int cp__dec_take(cp_dec *d, const cp_record **out)
{
    while (!d->cur || d->cur_i == d->cur->n) {
        if (d->stopped)
            return d->rc;
        if (d->cur && d->cur->last) {
            if (!d->joined) {
                pthread_join(d->thread, NULL);
                d->joined = 1;
            }
            return d->rc;
        }
        if (d->cur)
            cp__ring_put_free(d->ring, d->cur);
        d->cur = cp__ring_take_full(d->ring);
        d->cur_i = 0;
        d->cur_noted = 0;
        d->cur_parsed = d->cur->raw ? 0 : d->cur->n;
        d->run_base = d->raw_off = d->cur_slotted = 0;
        d->raw_ts = d->cur->ts0;
    }
    if (d->cur_i == d->cur_parsed) {
        int rc = cp_dec_unstash(d);
        if (rc < 0)
            return rc;
    }
    *out = cp__dec_cur_rec(d, d->cur_i++);
    return 1;
}
