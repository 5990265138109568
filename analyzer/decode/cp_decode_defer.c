/*
 * cp_decode_defer.c - the reader's side of the decoder thread: taking its
 * batches, stopping it, and the reader's share of the fields' parsing.
 *
 * The decoder thread decompresses, frames and parses; the reader runs the
 * model and the checks.  Which of the two sets the pace depends on the
 * machine (on the AMD VM of BENCHMARKS.md 3l the reader waited for a third
 * of its time, on the GPU host's Xeon hardly at all).  So the lean
 * records' fields, about a fifth of the decoder thread's work, go to
 * whichever thread has time: a batch begun while the reader had caught up
 * is handed over raw (cp_batch.raw), its lean records with their time and
 * thread decoded and their fields' bounds stashed, and the reader parses
 * them here, a run at a time just before handing them out, with the same
 * parser (cp__dec_fields_direct()) into the same slots.  A record that
 * does not parse that way goes through cp__dec_fields_fast(), as on the
 * decoder thread; one that does not parse at all ends the stream with the
 * decoder thread's message, after the records before it were handed out.
 */
#include <pthread.h>
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

/* Records parsed per call: the slots are handed out next, while still in
 * the cache. */
#define CP_UNSTASH_RUN 64

/* The strict parser, as cp_dec_parse() on the decoder thread.
 * @return : 0 (r has its fields), or cp__dec_fields_fast()'s < 0 and *why. */
static int cp_unstash_strict(cp_dec *d, cp_record *r, unsigned type, const cp_stash *st,
                             const char **why)
{
    _Alignas(16) cp_record one;
    if (!cp_rec_has_ev(type))
        memset(&one.ev, 0, sizeof one.ev);
    one.type = type;
    one.ts = st->ts;
    one.tid = st->tid;
    one.offset = st->off;
    one.payload = st->p;
    one.payload_len = (size_t)(st->e - st->p);
    int rc = cp__dec_fields_fast(&d->rscratch, &one, why);
    if (rc == 0)
        memcpy(r, &one, sizeof one);
    return rc;
}

/* The record that does not parse is the next to hand out: stop the
 * stream there, with the decoder thread's message.  @return : d->rc. */
static int cp_unstash_fail(cp_dec *d, unsigned type, const cp_stash *st, int frc,
                           const char *why)
{
    cp__dec_stop_thread(d);     /* its error, if any, came later in the stream */
    d->cur_i = d->cur_parsed = d->cur->n;
    return cp__dec_fields_fail(d, frc, st->off, type, why, st->plen);
}

/* Parse the fields of the next run of d->cur's raw records from
 * cur_parsed on, and advance cur_parsed past them.  A record that does
 * not parse ends the run; once it is the next to hand out, d fails as the
 * decoder thread would have (same message), with the thread stopped.
 * @return : 0, or d->rc. */
static int cp_dec_unstash(cp_dec *d)
{
    cp_batch *b = d->cur;
    size_t i = d->cur_parsed;
    size_t end = b->n - i > CP_UNSTASH_RUN ? i + CP_UNSTASH_RUN : b->n;
    for (; i < end; i++) {
        const cp_stash *st = &b->stash[i];
        if (!(st->type & CP_REC_RAW))
            continue;                       /* parsed by the decoder thread */
        unsigned type = st->type & ~CP_REC_RAW;
        cp_record *r = &b->recs[i];
        r->type = type;
        r->ts = st->ts;
        r->tid = st->tid;
        if (cp__dec_fields_direct(type, st->p, st->e, r) == 0)
            continue;
        const char *why = "";
        int frc = cp_unstash_strict(d, r, type, st, &why);
        if (frc == 0)
            continue;
        if (i == d->cur_i)
            return cp_unstash_fail(d, type, st, frc, why);
        break;      /* hand out the records before it first: it fails once it is next */
    }
    d->cur_parsed = i;
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
    }
    if (d->cur_i == d->cur_parsed) {
        int rc = cp_dec_unstash(d);
        if (rc < 0)
            return rc;
    }
    *out = &d->cur->recs[d->cur_i++];
    return 1;
}
