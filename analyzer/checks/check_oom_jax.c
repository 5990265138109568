/*
 * check_oom_jax.c - the post-mortem of an out-of-memory error inside XLA's
 * pool (see check_oom_jax.h).
 *
 * XLA's pool has a limit: the memory fraction (XLA_PYTHON_CLIENT_MEM_FRACTION,
 * 75% by default) of the card's total memory, taken whole at start-up unless
 * XLA_PYTHON_CLIENT_PREALLOCATE=false (then taken as needed, up to the same
 * limit).  Its numbers are the companion's, read where the error entered
 * Python: the failing step's other buffers are already freed then, so the
 * request is judged against what stayed in use.
 */
#include <stdio.h>
#include <string.h>

#include "check_oom_jax.h"
#include "cp_knobs.h"

/* The failing device's pool, and what the card around it could do. */
typedef struct jx_pool {
    const cp_jax_dev *d;        /* NULL: XLA gave no numbers */
    uint64_t card;              /* the card's memory, 0 unknown */
    uint64_t need;              /* in use + request */
    unsigned share;             /* the limit in % of the card, 0 unknown */
    unsigned frac;              /* the fraction (hundredths) that holds need and is
                                 * more than the pool has, 0 none */
    int prealloc;               /* taken whole at start-up */
} jx_pool;

int cp_oom_jax_pool(const cp_oom_ep *e)
{
    return e->have_jax && !e->api;
}

static uint64_t jx_sub(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

static unsigned jx_pct(uint64_t part, uint64_t whole)
{
    return whole ? (unsigned)((part * 100 + whole / 2) / whole) : 0;
}

static void jx_pool_of(const cp_proc *p, const cp_oom_ep *e, jx_pool *x)
{
    const cp_jax_oom *j = &e->jax;
    memset(x, 0, sizeof *x);
    x->d = e->jax_dev >= 0 && e->jax_dev < j->n_dev ? &j->dev[e->jax_dev] : NULL;
    if (e->dev >= 0 && e->dev < CP_MAX_DEV)
        x->card = p->dev[e->dev].total_mem;
    /* What XLA reads as "false" (xla_client: 'false', 'False', '0'). */
    const char *pre = j->preallocate;
    x->prealloc = strcmp(pre, "false") && strcmp(pre, "False") && strcmp(pre, "0");
    if (!x->d)
        return;
    x->need = x->d->in_use + e->request;
    if (x->d->have_limit) {
        x->share = jx_pct(x->d->limit, x->card);
        if (x->d->have_pool)
            x->prealloc = x->d->pool_bytes + x->d->limit / 100 >= x->d->limit;
        unsigned f = cp_knob_xla_fraction(x->need, x->card);
        if (f && (uint64_t)f * x->card / 100 > x->d->limit)
            x->frac = f;
    }
}

int cp_oom_jax_verdict(const cp_proc *p, const cp_oom_ep *e, char *why, size_t cap)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    jx_pool x;
    jx_pool_of(p, e, &x);
    const cp_jax_dev *d = x.d;
    uint64_t req = e->request;
    if (!d) {
        snprintf(why, cap, "XLA recorded no numbers for the device; %s were requested",
                 cp_fmt_bytes(req, b1, sizeof b1));
        return CP_V_CAPACITY;
    }
    if (d->have_limit && x.need > d->limit) {
        if (x.frac) {
            snprintf(why, cap, "%s in use and %s requested need %s, which the card (%s) "
                     "could hold, but the pool's limit is %s",
                     cp_fmt_bytes(d->in_use, b1, sizeof b1), cp_fmt_bytes(req, b2, sizeof b2),
                     cp_fmt_bytes(x.need, b3, sizeof b3), cp_fmt_bytes(x.card, b4, sizeof b4),
                     cp_fmt_bytes(d->limit, b5, sizeof b5));
            return CP_V_POOL_LIMIT;
        }
        snprintf(why, cap, "%s in use of the pool's %s limit left %s, less than the %s "
                 "requested%s", cp_fmt_bytes(d->in_use, b1, sizeof b1),
                 cp_fmt_bytes(d->limit, b2, sizeof b2),
                 cp_fmt_bytes(jx_sub(d->limit, d->in_use), b3, sizeof b3),
                 cp_fmt_bytes(req, b4, sizeof b4),
                 x.card && x.need > x.card / 100 * CP_KNOB_XLA_FRACTION_MAX
                     ? "; the whole card could not hold it either" : "");
        return CP_V_CAPACITY;
    }
    if (d->have_limit && d->have_free && d->largest_free < req) {
        snprintf(why, cap, "XLA's pool had %s free, enough for the %s requested, but its "
                 "largest free block was %s", cp_fmt_bytes(d->limit - d->in_use, b1, sizeof b1),
                 cp_fmt_bytes(req, b2, sizeof b2), cp_fmt_bytes(d->largest_free, b3, sizeof b3));
        return CP_V_FRAGMENTATION;
    }
    snprintf(why, cap, "XLA's pool had room for the %s requested when it was read (%s in "
             "use): the failing step's other buffers, freed when the error was raised, had "
             "filled it", cp_fmt_bytes(req, b1, sizeof b1), cp_fmt_bytes(d->in_use, b2, sizeof b2));
    return CP_V_CAPACITY;
}

const char *cp_oom_jax_headline(const cp_proc *p, const cp_oom_ep *e, int v, char *buf,
                                size_t cap)
{
    jx_pool x;
    jx_pool_of(p, e, &x);
    if (v == CP_V_POOL_LIMIT)
        snprintf(buf, cap, "the pool is a fraction of the card: XLA %s %u%%%s", x.prealloc
                 ? "took" : "may use", x.share, x.prealloc ? " at start-up" : " of it");
    else
        snprintf(buf, cap, "%s", v == CP_V_FRAGMENTATION ? "fragmented pool" : "the pool is full");
    return buf;
}

/* "VAR=VALUE, ..." of XLA's settings the process had, into buf. */
static const char *jx_settings(const cp_jax_oom *j, char *buf, size_t cap)
{
    const struct { const char *var, *val; } s[] = {
        { "XLA_PYTHON_CLIENT_PREALLOCATE", j->preallocate },
        { j->fraction_var, j->fraction },
        { "XLA_PYTHON_CLIENT_ALLOCATOR", j->allocator },
    };
    size_t o = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        if (!s[i].val[0])
            continue;
        int w = snprintf(buf + o, cap - o, "%s%s=%s", o ? ", " : "", s[i].var, s[i].val);
        if (w < 0 || (size_t)w >= cap - o)
            break;
        o += (size_t)w;
    }
    return buf;
}

void cp_oom_jax_lines(const cp_proc *p, cp_finding *f, const cp_oom_ep *e)
{
    char b1[32], b2[32], b3[32], b4[32], set[256];
    const cp_jax_oom *j = &e->jax;
    jx_pool x;
    jx_pool_of(p, e, &x);
    const cp_jax_dev *d = x.d;
    if (d) {
        char lim[96] = "";
        if (d->have_limit)
            snprintf(lim, sizeof lim, " of its %s limit", cp_fmt_bytes(d->limit, b2, sizeof b2));
        if (d->have_limit && x.card)
            snprintf(lim + strlen(lim), sizeof lim - strlen(lim), " (%u%% of the card's %s)",
                     x.share, cp_fmt_bytes(x.card, b3, sizeof b3));
        cp_finding_line(f, "XLA's pool on this device: %s in use%s, peak %s%s%s; %llu "
                        "allocations so far.", cp_fmt_bytes(d->in_use, b1, sizeof b1), lim,
                        cp_fmt_bytes(d->peak, b4, sizeof b4),
                        d->have_free ? ", largest free block " : "",
                        d->have_free ? cp_fmt_bytes(d->largest_free, b2, sizeof b2) : "",
                        (unsigned long long)d->num_allocs);
        if (x.prealloc)
            cp_finding_line(f, "XLA took the pool from the driver at start-up, in one piece, "
                            "and serves every array from it: the driver saw no failure, only "
                            "XLA did.");
        else
            cp_finding_line(f, "XLA takes its pool from the driver as it needs it, up to the "
                            "limit (%s taken so far).", cp_fmt_bytes(d->pool_bytes, b1, sizeof b1));
    }
    cp_finding_line(f, "XLA raised %s: %s", j->type[0] ? j->type : "an error", j->line);
    if (j->user_line)
        cp_finding_line(f, "  at your line %s:%lld (%s)", j->user_file, (long long)j->user_line,
                        j->user_func);
    if (strcmp(j->hook, "exit") == 0)
        cp_finding_line(f, "The program did not catch it (seen at exit).");
    else if (p->complete && p->end_reason == CP_END_EXIT && p->end_status == 0)
        cp_finding_line(f, "The program caught it and went on (exit status 0).");
    cp_finding_line(f, "XLA's settings in the process: %s.", jx_settings(j, set, sizeof set)[0]
                    ? set : "none (its defaults)");
}

void cp_oom_jax_advice(const cp_proc *p, cp_finding *f, const cp_oom_ep *e, int v)
{
    char b1[32];
    f->fix = "Follow the advice that comes with the verdict: a larger memory fraction when "
             "XLA's pool is a fraction of the card; less live at the peak (smaller batch, "
             "jax.checkpoint, donate_argnums) when the pool is full; arrays deleted before the "
             "step, or a larger pool, when it is fragmented.";
    const cp_jax_oom *j = &e->jax;
    const char *var = j->fraction_var[0] ? j->fraction_var : "XLA_PYTHON_CLIENT_MEM_FRACTION";
    jx_pool x;
    jx_pool_of(p, e, &x);
    switch (v) {
    case CP_V_POOL_LIMIT:
        cp_finding_line(f, "Advice: let XLA's pool take more of the card: %s=.%02u (a fraction "
                        "of the card's total memory; %s are needed here, %u%% of it).", var,
                        x.frac, cp_fmt_bytes(x.need, b1, sizeof b1), jx_pct(x.need, x.card));
        cp_finding_line(f, "%s alone keeps the limit: XLA then takes the pool as it needs it, "
                        "up to the same %u%%, and it fragments more.", CP_KNOB_XLA_NO_PREALLOC,
                        x.share);
        cp_finding_line(f, "%s has no pool and no limit but the card's: every array is a "
                        "driver allocation of its own, freed with the array; slow, but it shows "
                        "what the program itself needs.", CP_KNOB_XLA_PLATFORM);
        break;
    case CP_V_FRAGMENTATION: {
        cp_finding_line(f, "Advice: delete arrays you no longer need before this step (del, "
                        ".delete(), donate_argnums so a jitted function reuses its inputs' "
                        "buffers) and allocate the largest buffers first: live arrays pin the "
                        "free space around them.");
        unsigned more = x.d ? cp_knob_xla_fraction(x.d->limit + e->request, x.card) : 0;
        if (more > x.share)
            cp_finding_line(f, "A larger pool gives the same pieces more room: %s=.%02u.", var,
                            more);
        if (!x.prealloc)
            cp_finding_line(f, "Let XLA take the pool whole at start-up (%s, or leave it "
                            "unset): a pool taken piece by piece fragments more.",
                            CP_KNOB_XLA_PREALLOC);
        cp_finding_line(f, "%s has no pool to fragment (every array a driver allocation of "
                        "its own), at a large cost in speed.", CP_KNOB_XLA_PLATFORM);
        break;
    }
    default:
        cp_finding_line(f, "Advice: reduce what is live at the peak: a smaller batch or "
                        "sequence length, jax.checkpoint (rematerialisation) for activations, "
                        "donate_argnums so a step reuses its inputs' buffers, bf16; do not keep "
                        "arrays from step to step.");
        cp_finding_line(f, "To see which arrays held the pool: "
                        "jax.profiler.save_device_memory_profile(\"mem.prof\") just before "
                        "this step (pprof format).");
        break;
    }
}

void cp_oom_jax_json(const cp_proc *p, cp_finding *f, const cp_oom_ep *e)
{
    char set[256], fr[8];
    const cp_jax_oom *j = &e->jax;
    jx_pool x;
    jx_pool_of(p, e, &x);
    cp_jb *b = &f->details;
    cp_jb_key(b, "xla");
    cp_jb_open(b, '{');
    if (x.d) {
        cp_jb_ki(b, "device_id", x.d->id);
        cp_jb_ku(b, "bytes_in_use", x.d->in_use);
        cp_jb_ku(b, "peak_bytes_in_use", x.d->peak);
        if (x.d->have_limit)
            cp_jb_ku(b, "bytes_limit", x.d->limit);
        if (x.d->have_free)
            cp_jb_ku(b, "largest_free_block_bytes", x.d->largest_free);
        if (x.d->have_pool)
            cp_jb_ku(b, "pool_bytes", x.d->pool_bytes);
        cp_jb_ku(b, "num_allocs", x.d->num_allocs);
        cp_jb_ku(b, "needed_bytes", x.need);
    }
    cp_jb_ku(b, "card_bytes", x.card);
    cp_jb_ku(b, "limit_percent_of_card", x.share);
    cp_jb_kb(b, "preallocated", x.prealloc);
    cp_jb_ks(b, "exception", j->type);
    cp_jb_ks(b, "message", j->line);
    cp_jb_ks(b, "seen", j->hook);
    cp_jb_ks(b, "file", j->user_line ? j->user_file : NULL);
    cp_jb_ki(b, "line", j->user_line);
    cp_jb_ks(b, "settings", jx_settings(j, set, sizeof set));
    snprintf(fr, sizeof fr, ".%02u", x.frac);
    cp_jb_ks(b, "suggested_mem_fraction", x.frac ? fr : NULL);
    cp_jb_close(b, '}');
}
