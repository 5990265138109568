/*
 * cp_clock.c - fitting the counter's line to CLOCK_MONOTONIC (cp_clock.h).
 *
 * Only the writer thread tunes, so the fitting state below has one owner;
 * the line itself is published under a sequence count that readers check
 * without waiting.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cp_clock.h"
#include "cp_env.h"
#include "cp_rec.h"

struct cp_clock_line cp__clock;

#define CP_CLK_GAP_NS 50000000ull       /* between two fits */
#define CP_CLK_FIRST_NS 10000000ull     /* base sample to the first line */
#define CP_CLK_RESTART_NS 1000000ll     /* a gap this large is a jump, not drift */
#define CP_CLK_HORIZON_NS 1000000000ll  /* a gap is closed over this much time */
#define CP_CLK_MAX_RESTARTS 3

static struct {
    int decided;                /* usable() was asked */
    uint64_t b_tick, b_ns;      /* the base sample: the rate is measured from it */
    int have_base;
    uint64_t last_ns;           /* the last fit */
    uint64_t l_tick, l_ns, l_mult;   /* the line published last */
} g_fit;

static _Atomic int g_state;            /* cp_clock_state(); 1: a line is out */
static _Atomic unsigned g_restarts;

void cp__clock_set(uint64_t tick0, uint64_t ns0, uint64_t mult)
{
    uint32_t cur = atomic_load_explicit(&cp__clock.cur, memory_order_relaxed);
    struct cp_clock_slot *l = &cp__clock.slot[cur == 1];   /* the one not in use */
    uint64_t odd = atomic_load_explicit(&l->seq, memory_order_relaxed) | 1;
    atomic_store_explicit(&l->seq, odd, memory_order_relaxed);
    /* Release stores, not a fence (TSan does not model fences): a reader
     * that acquires a new field also sees seq odd, and retries. */
    atomic_store_explicit(&l->tick0, tick0, memory_order_release);
    atomic_store_explicit(&l->ns0, ns0, memory_order_release);
    atomic_store_explicit(&l->mult, mult, memory_order_release);
    atomic_store_explicit(&l->seq, odd + 1, memory_order_release);
    atomic_store_explicit(&cp__clock.cur, cur == 1 ? 2 : 1, memory_order_release);
    g_fit.l_tick = tick0, g_fit.l_ns = ns0, g_fit.l_mult = mult;
}

static void cp_clock_give_up(const char *why)
{
    atomic_store_explicit(&cp__clock.cur, 0, memory_order_release);
    atomic_store(&g_state, -1);
    cp_log(2, "clock: %s; reading clock_gettime from now on", why);
}

/* Does file (under root) hold word, as a whole word, in its first 16 KB? */
static int cp_file_has_word(const char *root, const char *path, const char *word)
{
    char name[512], buf[16384];
    snprintf(name, sizeof name, "%s%s", root, path);
    FILE *f = fopen(name, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    size_t wl = strlen(word);
    for (const char *p = buf; (p = strstr(p, word)); p += wl) {
        int left = p == buf || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n';
        int right = !p[wl] || p[wl] == ' ' || p[wl] == '\n';
        if (left && right)
            return 1;
    }
    return 0;
}

/* Is the counter one clock for every CPU, at a constant rate?  The kernel
 * says so by timing with it: its clocksource is the counter itself or a
 * paravirtual clock built on a stable one. */
static int cp_clock_usable(void)
{
    const struct cp_config *cfg = cp_config();
    static const char cs[] = "/devices/system/clocksource/clocksource0/current_clocksource";
    if (!cfg->tsc)
        return 0;
#if defined(__x86_64__)
    if (!cp_file_has_word(cfg->procfs_root, "/cpuinfo", "constant_tsc") ||
        !cp_file_has_word(cfg->procfs_root, "/cpuinfo", "nonstop_tsc"))
        return 0;
    return cp_file_has_word(cfg->sysfs_root, cs, "tsc") ||
           cp_file_has_word(cfg->sysfs_root, cs, "kvm-clock") ||
           cp_file_has_word(cfg->sysfs_root, cs, "hyperv_clocksource_tsc_page");
#elif defined(__aarch64__)
    return cp_file_has_word(cfg->sysfs_root, cs, "arch_sys_counter");
#else
    return 0;
#endif
}

/* The counter at the middle of the narrowest of five brackets around one
 * clock_gettime, and that clock_gettime. */
static void cp_clock_sample(uint64_t *tick, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = cp_clock_tick();
        uint64_t n = cp__clock_slow();
        uint64_t b = cp_clock_tick();
        if (b >= a && b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
    if (best == UINT64_MAX)   /* the counter went back inside every bracket */
        *tick = 0, *ns = cp__clock_slow();
}

static uint64_t cp_line_at(uint64_t tick)
{
    return g_fit.l_ns +
           (uint64_t)(int64_t)(((__int128)(int64_t)(tick - g_fit.l_tick) * g_fit.l_mult) >> 32);
}

void cp_clock_tune(void)
{
    if (!g_fit.decided) {
        g_fit.decided = 1;
        if (!cp_clock_usable()) {
            atomic_store(&g_state, -1);
            return;
        }
    }
    int on = atomic_load_explicit(&g_state, memory_order_relaxed);
    if (on < 0)
        return;
    /* Most passes come too soon for a fit (a busy program kicks many): one
     * clock read decides, before the five brackets of a sample. */
    if (g_fit.have_base &&
        cp__clock_slow() - g_fit.last_ns < (on ? CP_CLK_GAP_NS : CP_CLK_FIRST_NS))
        return;
    uint64_t tick = 0, ns = 0;
    cp_clock_sample(&tick, &ns);
    if (!tick)
        return cp_clock_give_up("the counter runs backwards");
    g_fit.last_ns = ns;
    if (!g_fit.have_base) {
        g_fit.b_tick = tick, g_fit.b_ns = ns;
        g_fit.have_base = 1;
        return;
    }
    if (tick <= g_fit.b_tick)
        return cp_clock_give_up("the counter went back between two samples");
    unsigned __int128 r = ((unsigned __int128)(ns - g_fit.b_ns) << 32) / (tick - g_fit.b_tick);
    /* From 1/16 ns a tick (16 GHz) to 4,096 ns a tick (244 kHz). */
    if (r < (1u << 28) || r > ((unsigned __int128)1 << 44))
        return cp_clock_give_up("the counter's rate is implausible");
    uint64_t rate = (uint64_t)r;   /* ns per tick << 32, base to now */
    if (!on) {
        cp__clock_set(tick, ns, rate);
        atomic_store(&g_state, 1);
        return;
    }
    uint64_t at = cp_line_at(tick);
    int64_t gap = (int64_t)(ns - at);
    if (gap > CP_CLK_RESTART_NS || gap < -CP_CLK_RESTART_NS) {
        /* A jump (a migrated VM, a counter not shared after all): restart
         * the line and the rate's base at the true time. */
        unsigned n = atomic_fetch_add(&g_restarts, 1) + 1;
        if (n > CP_CLK_MAX_RESTARTS)
            return cp_clock_give_up("the counter jumped against clock_gettime again");
        cp_log(2, "clock: the counter was %lld ns off clock_gettime; line restarted",
               (long long)gap);
        g_fit.b_tick = tick, g_fit.b_ns = ns;
        cp__clock_set(tick, ns, g_fit.l_mult);
        return;
    }
    /* Continue from where the line is now, with the slope that closes the
     * gap over the horizon: the clock never steps, so a thread's times
     * keep their order and a call's duration never goes negative. */
    __int128 m = (__int128)rate * (CP_CLK_HORIZON_NS + gap) / CP_CLK_HORIZON_NS;
    cp__clock_set(tick, at, (uint64_t)m);
}

int cp_clock_state(unsigned *restarts)
{
    if (restarts)
        *restarts = atomic_load(&g_restarts);
    return atomic_load(&g_state);
}
