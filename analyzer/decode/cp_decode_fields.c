/*
 * cp_decode_fields.c - the field parser, expanded from the record table
 * (include/cp_records.h).  Each record's fields are read in table order;
 * trailing bytes (fields appended by newer writers) are ignored, and a UOPT
 * field an older writer did not append reads as CP_FIELD_ABSENT.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_grow.h"
#include "cp_decode_int.h"
#include "cp_varint.h"

void cp__dec_scratch_free(struct cp_scratch *s)
{
    free(s->strs);
    free(s->u64);
    free(s->procs);
    memset(s, 0, sizeof *s);
}

/* In the expansions below: p, e = the unread payload; x = the record's
 * member of r->u; s = scratch arrays; ku, ks = items of s->u64 and s->strs
 * this record already uses; *why = the field being read (for the error). */
#define CP_GET_U_(dst, n)                       \
    do {                                        \
        *why = n;                               \
        if (cp_get_u(&p, e, &(dst)))            \
            return -1;                          \
    } while (0)
#define CP_GET_STR_(dst, what)                  \
    do {                                        \
        uint64_t n_;                            \
        *why = what;                            \
        if (cp_get_u(&p, e, &n_) ||             \
            n_ > (uint64_t)(e - p))             \
            return -1;                          \
        (dst).p = (const char *)p;              \
        (dst).n = (size_t)n_;                   \
        p += n_;                                \
    } while (0)
/* A count read before its items: every item takes at least `per` bytes,
 * so a count beyond what is left is corrupt (and never allocated for). */
#define CP_GET_COUNT_(dst, n, per)                          \
    do {                                                    \
        CP_GET_U_(dst, n);                                  \
        if ((dst) > (uint64_t)(e - p) / (per))              \
            return -1;                                      \
    } while (0)

#define CP_GET(k, n, a, fmt) CP_GET_##k(n, a, fmt)
#define CP_GET_U(n, a, fmt) CP_GET_U_(x->n, #n);
#define CP_GET_S(n, a, fmt)                     \
    *why = #n;                                  \
    if (cp_get_s(&p, e, &x->n))                 \
        return -1;
#define CP_GET_STR(n, a, fmt) CP_GET_STR_(x->n, #n);
#define CP_GET_BYTES(n, a, fmt)                 \
    *why = #n;                                  \
    if (e - p < (a))                            \
        return -1;                              \
    memcpy(x->n, p, a);                         \
    p += (a);
#define CP_GET_UOPT(n, a, fmt)                  \
    x->n = CP_FIELD_ABSENT;                     \
    if (p < e)                                  \
        CP_GET_U_(x->n, #n);
/* All of a record's u64 items fit in payload_len entries (one byte each at
 * least): growing to that once keeps earlier arrays' pointers valid. */
#define CP_GET_UARR(n, a, fmt)                                              \
    CP_GET_COUNT_(x->a, #a, 1);                                             \
    if (cp_grow((void **)&s->u64, &s->u64_cap, r->payload_len, sizeof *s->u64, 64)) \
        return -2;                                                          \
    x->n = s->u64 + ku;                                                     \
    for (uint64_t i_ = 0; i_ < x->a; i_++, ku++)                            \
        CP_GET_U_(s->u64[ku], #n);
/* PAIRS: OOM's process list is the only one; a second pair type would get
 * its own scratch array. */
#define CP_GET_PAIRS(n, a, fmt)                                             \
    CP_GET_COUNT_(x->a, #a, 2);                                             \
    if (cp_grow((void **)&s->procs, &s->procs_cap, (size_t)x->a, sizeof *s->procs, 64)) \
        return -2;                                                          \
    for (uint64_t i_ = 0; i_ < x->a; i_++) {                                \
        CP_GET_U_(s->procs[i_].CP_PAIR_##fmt##_A, #n);                      \
        CP_GET_U_(s->procs[i_].CP_PAIR_##fmt##_B, #n);                      \
    }                                                                       \
    x->n = s->procs;
#define CP_GET_STRARR(n, a, fmt)                                            \
    CP_GET_COUNT_(x->a, #a, 1);                                             \
    if (cp_grow((void **)&s->strs, &s->strs_cap, r->payload_len, sizeof *s->strs, 64)) \
        return -2;                                                          \
    x->n = s->strs + ks;                                                    \
    for (uint64_t i_ = 0; i_ < x->a; i_++, ks++)                            \
        CP_GET_STR_(s->strs[ks], #n);
#define CP_GET_KVARR(n, a, fmt)                                             \
    CP_GET_COUNT_(x->a, #a, 2);                                             \
    if (cp_grow((void **)&s->strs, &s->strs_cap, r->payload_len, sizeof *s->strs, 64)) \
        return -2;                                                          \
    x->n##_name = s->strs + ks;                                             \
    x->n##_value = s->strs + ks + x->a;                                     \
    for (uint64_t i_ = 0; i_ < x->a; i_++) {                                \
        CP_GET_STR_(s->strs[ks + i_], #n);                                  \
        CP_GET_STR_(s->strs[ks + x->a + i_], #n);                           \
    }                                                                       \
    ks += 2 * x->a;

#define CP_PARSE_CASE_(N, id, l, shape, doc)    \
    case CP_REC_##N: {                          \
        typeof(r->u.l) *x = &r->u.l;            \
        (void)x;                                \
        CP_F_##N(CP_GET)                        \
        return 0;                               \
    }

int cp__dec_fields(struct cp_scratch *s, cp_record *r, const char **why)
{
    const uint8_t *p = r->payload, *e = p + r->payload_len;
    size_t ku = 0, ks = 0;
    (void)ku, (void)ks;
    if (cp_rec_has_ev(r->type)) {
        cp_ev *x = &r->ev;
        CP_EV_FIELDS(CP_GET)
    }
    switch (r->type) {
    CP_RECORDS(CP_PARSE_CASE_)
    default:
        return 0;   /* unknown type: the caller still gets type and payload */
    }
}

/* ---- the fast parser: the same table, bounds checked once per record ---- */

/* U, S, UOPT and STR fields are read inline (their varints read against the window's slack);
 * a record with a field of another kind (HEADER, STACK, OOM, DEVICE: rare)
 * and any record that does not parse go to the strict parser, which also
 * names the field at fault. */
#define CP_FGET(k, n, a, fmt) CP_FGET_##k(n, a, fmt)
#define CP_FGET_U(n, a, fmt)                                        \
    {                                                               \
        uint64_t v_;                                                \
        if (!(p = CP_RD(p, &v_)))                                   \
            goto strict;                                            \
        CP_ST(&x->n, v_);                                           \
    }
#define CP_FGET_S(n, a, fmt)                                        \
    {                                                               \
        uint64_t u_;                                                \
        if (!(p = CP_RD(p, &u_)))                                   \
            goto strict;                                            \
        CP_ST(&x->n, (int64_t)(u_ >> 1) ^ -(int64_t)(u_ & 1));      \
    }
#define CP_FGET_UOPT(n, a, fmt)                                     \
    {                                                               \
        uint64_t v_ = CP_FIELD_ABSENT;                              \
        if (p < e && !(p = CP_RD(p, &v_)))                          \
            goto strict;                                            \
        CP_ST(&x->n, v_);                                           \
    }
#define CP_FGET_STR(f, a, fmt)                                      \
    {                                                               \
        uint64_t len_;                                              \
        if (!(p = CP_RD(p, &len_)) || p > e ||                      \
            len_ > (uint64_t)(e - p))                               \
            goto strict;                                            \
        CP_ST(&x->f.p, (const char *)p);                            \
        CP_ST(&x->f.n, (size_t)len_);                               \
        p += len_;                                                  \
    }
#define CP_FGET_BYTES(n, a, fmt) goto strict;
#define CP_FGET_UARR(n, a, fmt) goto strict;
#define CP_FGET_PAIRS(n, a, fmt) goto strict;
#define CP_FGET_STRARR(n, a, fmt) goto strict;
#define CP_FGET_KVARR(n, a, fmt) goto strict;

#define CP_FPARSE_CASE_(N, id, l, shape, doc)   \
    case CP_REC_##N: {                          \
        typeof(r->u.l) *x = &r->u.l;            \
        (void)x;                                \
        CP_F_##N(CP_FGET)                       \
        if (p <= e)                             \
            return 0;                           \
        goto strict;                            \
    }

/* A record's fast fields (and its time, thread and EV prefix) may each run
 * CP_VARINT_MAX bytes past its end before the end check: the window's
 * slack must hold them all. */
#define CP_NF_(k, n, a, fmt) + 1
#define CP_NF_CHECK_(N, id, l, shape, doc)                                      \
    _Static_assert(CP_VARINT_MAX * (2 + 0 CP_EV_FIELDS(CP_NF_) + 0 CP_F_##N(CP_NF_)) + 8 \
                   <= CP_DEC_SLACK, "CP_DEC_SLACK too small for " #N);
CP_RECORDS(CP_NF_CHECK_)

/* The fast parser, once per varint reader (CP_RD): a plain one and, on
 * x86-64, one built for BMI2 that cp__dec_fields_fast() picks at run time. */
#define CP_FAST_PARSER_(name, attrs)                                    \
    static attrs int name(struct cp_scratch *s, cp_record *r, const char **why) \
    {                                                                   \
        const uint8_t *p = r->payload, *e = p + r->payload_len;         \
        if (cp_rec_has_ev(r->type)) {                                   \
            cp_ev *x = &r->ev;                                          \
            CP_EV_FIELDS(CP_FGET)                                       \
        }                                                               \
        switch (r->type) {                                              \
        CP_RECORDS(CP_FPARSE_CASE_)                                     \
        default:                                                        \
            return 0;                                                   \
        }                                                               \
    strict:                                                             \
        return cp__dec_fields(s, r, why);                               \
    }

#define CP_ST(dst, v) (*(dst) = (v))
#define CP_RD cp__get_u_slack
CP_FAST_PARSER_(cp_fields_plain, )
#undef CP_RD

#ifdef CP_DEC_HAVE_BMI2
#define CP_RD cp__get_u_slack_bmi2
CP_FAST_PARSER_(cp_fields_bmi2, __attribute__((target("bmi,bmi2"))))
#undef CP_RD

/* Decided once, before any decoder thread starts. */
static int g_bmi2;
__attribute__((constructor)) static void cp_fields_pick(void)
{
    g_bmi2 = cp__dec_bmi2_fast();
}

/* The same parser writing each field straight into the batch's slot
 * (cp__dec_fields_direct()): no record on the stack to copy.  Plain
 * stores: non-temporal ones gain nothing on AMD EPYC and slow the decoder
 * thread down on Xeons, whose write-combining buffers flush a line of
 * which only some fields are written as partial writes. */
#define CP_DIRECT_CASE_(N, id, l, shape, doc)   \
    case CP_REC_##N: {                          \
        typeof(r->u.l) *x = &r->u.l;            \
        (void)x;                                \
        CP_F_##N(CP_FGET)                       \
        return p <= e ? 0 : -1;                 \
    }
/* Twice: called by cp__dec_fields_direct() (the reader's raw batches) and
 * inlined into cp__dec_lean_run(). */
#define CP_DIRECT_PARSER_(name, attrs)                                  \
    static attrs int name(unsigned type, const uint8_t *p, const uint8_t *e, cp_record *r) \
    {                                                                   \
        if (cp_rec_has_ev(type)) {                                      \
            cp_ev *x = &r->ev;                                          \
            CP_EV_FIELDS(CP_FGET)                                       \
        } else {                                                        \
            memset(&r->ev, 0, sizeof r->ev);   /* as cp__dec_fields() leaves it */ \
        }                                                               \
        switch (type) {                                                 \
        CP_RECORDS(CP_DIRECT_CASE_)                                     \
        default:                                                        \
            break;                                                      \
        }                                                               \
    strict:                                                             \
        return -1;                                                      \
    }
#define CP_RD cp__get_u_slack_bmi2
CP_DIRECT_PARSER_(cp_fields_direct_bmi2, __attribute__((target("bmi,bmi2"))))
CP_DIRECT_PARSER_(cp_fields_direct_inl, inline __attribute__((always_inline, target("bmi,bmi2"))))
#undef CP_RD
#define CP_DEC_HAVE_DIRECT 1
#endif

int cp__dec_fields_direct(unsigned type, const uint8_t *p, const uint8_t *e, cp_record *r)
{
#ifdef CP_DEC_HAVE_DIRECT
    return cp_fields_direct_bmi2(type, p, e, r);
#else
    (void)type, (void)p, (void)e, (void)r;
    return -1;
#endif
}

/* Here, not with the framing in cp_decode.c, so that the parser inlines
 * into the loop (they need the same target): no call and frame for each
 * record. */
#ifdef CP_DEC_HAVE_DIRECT
__attribute__((target("bmi,bmi2")))
#endif
size_t cp__dec_lean_run(const uint8_t *buf, size_t *pos, size_t len, cp_record *recs, size_t n,
                        size_t cap, uint64_t *ts, int raw, const uint8_t *direct)
{
#ifdef CP_DEC_HAVE_DIRECT
    size_t at = *pos, n0 = n;
    uint64_t t = *ts;
    while (len - at >= 2 && n < cap) {
        const uint8_t *q = buf + at, *p = q + 2, *e = p + q[1];
        unsigned type = q[0];
        uint64_t delta, tid;
        if (!direct[type] || q[1] >= 0x80 || len - at < 2 + (size_t)q[1] ||
            !(p = cp__get_u_slack(p, &delta)) || !(p = cp__get_u_slack(p, &tid)) ||
            p > e)
            break;
        if (!raw) {
            cp_record *slot = &recs[n];
            if (cp_fields_direct_inl(type, p, e, slot) < 0)
                break;
            slot->type = type;
            slot->ts = t + delta;
            slot->tid = tid;
        }
        t += delta;
        at = (size_t)(e - buf);
        n++;
    }
    *pos = at;
    *ts = t;
    return n - n0;
#else
    (void)buf, (void)pos, (void)len, (void)recs, (void)n, (void)cap, (void)ts, (void)raw,
        (void)direct;
    return 0;
#endif
}

int cp__dec_fields_direct_ok(void)
{
#ifdef CP_DEC_HAVE_DIRECT
    return g_bmi2;
#else
    return 0;
#endif
}

int cp__dec_fields_fast(struct cp_scratch *s, cp_record *r, const char **why)
{
#ifdef CP_DEC_HAVE_BMI2
    if (g_bmi2)
        return cp_fields_bmi2(s, r, why);
#endif
    return cp_fields_plain(s, r, why);
}
