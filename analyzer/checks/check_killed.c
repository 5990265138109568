/*
 * check_killed.c - killed: a trace that decodes cleanly up to a cut and has
 * no END record.  The shim writes END on every exit it can see (exit, _exit,
 * exec, a fatal signal it catches), so a clean cut means the process was
 * ended by a signal nobody can catch: SIGKILL, from the kernel's OOM killer,
 * a scheduler's time limit or a user.  This is the post-mortem case: the
 * report says when the process was last seen, what it held on the devices
 * and what it was doing.  When `cuprobe run` reaped the process, the signal
 * it died of is known and named (cp_discover.h); one that exited is not
 * killed (cp_analyze.c).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cp_checks.h"

extern const cp_check cp_check_killed;   /* defined at the end of this file */

/* Verdicts on host memory at the last sample. */
enum { CP_HV_NONE, CP_HV_CGROUP, CP_HV_HOST, CP_HV_RSS, CP_HV_GROWING, CP_HV_CG_FULL,
       CP_HV_NOT_SHORT };

/* Within 5 % of a limit counts as at it: the last sample is up to a flush
 * interval and a sampling period older than the kill. */
static int cp_at_limit(uint64_t used, uint64_t limit)
{
    return limit && used >= limit - limit / 20;
}

/* What the last host memory sample says about the kill.  *left: the room
 * that was left (bytes), for the growth verdict. */
static int cp_host_verdict(const cp_proc *p, int64_t d_rss, uint64_t d_ns, uint64_t *left)
{
    if (!p->hm_n)
        return CP_HV_NONE;
    /* A cgroup is filled by page cache too, which the kernel reclaims
     * before it kills: "at its limit" convicts only when this process's
     * own RSS is at least half of it. */
    int cg_full = cp_at_limit(p->hm_cg_usage, p->hm_cg_limit);
    if (cg_full && p->hm_rss >= p->hm_cg_limit / 2)
        return CP_HV_CGROUP;
    if (p->hm_mem_total && p->hm_avail && p->hm_avail <= p->hm_mem_total / 50)
        return CP_HV_HOST;
    if (cp_at_limit(p->hm_rss, p->hm_mem_total) || cp_at_limit(p->hm_rss, p->hm_cg_limit))
        return CP_HV_RSS;
    /* Growing fast enough to use what was left within 2 s of the sample. */
    uint64_t room = p->hm_avail ? p->hm_avail : UINT64_MAX;
    if (p->hm_cg_limit) {
        uint64_t cg_room = p->hm_cg_limit > p->hm_cg_usage ? p->hm_cg_limit - p->hm_cg_usage : 0;
        room = cg_room < room ? cg_room : room;
    }
    if (d_rss > 0 && room != UINT64_MAX &&
        (double)room <= 2e9 * (double)d_rss / (double)d_ns) {
        *left = room;
        return CP_HV_GROWING;
    }
    return cg_full ? CP_HV_CG_FULL : CP_HV_NOT_SHORT;
}

/* The host memory lines of a killed process (nothing for a trace from a
 * shim without HOSTMEM). */
static void cp_killed_host(cp_finding *f, const cp_proc *p)
{
    char b1[32], b2[32], b3[32], b4[32], tot[96] = "", cg[160] = "";
    int64_t d_rss = 0;
    uint64_t d_ns = 0, left = 0;
    int trend = cp_model_host_trend(p, 30ull * 1000000000u, &d_rss, &d_ns);
    int v = cp_host_verdict(p, trend ? d_rss : 0, trend ? d_ns : 1, &left);
    if (v == CP_HV_NONE)
        return;
    uint64_t at = p->hm_ts > p->t0 ? p->hm_ts - p->t0 : 0;
    uint64_t peak = p->hm_peak_ts > p->t0 ? p->hm_peak_ts - p->t0 : 0;
    /* A value the shim could not read is 0: left out. */
    if (p->hm_mem_total)
        snprintf(tot, sizeof tot, " of %s total (MemAvailable %s)",
                 cp_fmt_bytes(p->hm_mem_total, b3, sizeof b3),
                 cp_fmt_bytes(p->hm_avail, b4, sizeof b4));
    if (p->hm_cg_limit)
        snprintf(cg, sizeof cg, ", cgroup %s of %s limit",
                 cp_fmt_bytes(p->hm_cg_usage, b3, sizeof b3),
                 cp_fmt_bytes(p->hm_cg_limit, b4, sizeof b4));
    cp_finding_line(f, "Host memory at the last sample (+%s): RSS %s%s%s, pinned %s.",
                    cp_fmt_ns(at, b1, sizeof b1), cp_fmt_bytes(p->hm_rss, b2, sizeof b2), tot,
                    cg, cp_fmt_bytes(p->hm_pinned, b3, sizeof b3));
    cp_finding_line(f, "Peak RSS %s at +%s.", cp_fmt_bytes(p->hm_peak_rss, b1, sizeof b1),
                    cp_fmt_ns(peak, b2, sizeof b2));
    if (trend) {
        uint64_t mag = (uint64_t)(d_rss < 0 ? -d_rss : d_rss);
        double rate = (double)mag * 1e9 / (double)d_ns;
        if (mag >= (1u << 20))
            cp_finding_line(f, "RSS %s %s in the last %s (%s/s).", d_rss < 0 ? "fell" : "grew",
                            cp_fmt_bytes(mag, b1, sizeof b1), cp_fmt_ns(d_ns, b2, sizeof b2),
                            cp_fmt_bytes((uint64_t)rate, b3, sizeof b3));
        else
            cp_finding_line(f, "RSS was steady in the last %s.", cp_fmt_ns(d_ns, b1, sizeof b1));
    }
    switch (v) {
    case CP_HV_CGROUP:
        cp_finding_line(f, "Verdict: consistent with the host OOM killer (the cgroup %s was at "
                        "its limit).", p->hm_cg_path ? p->hm_cg_path : "");
        break;
    case CP_HV_HOST:
        cp_finding_line(f, "Verdict: consistent with the host OOM killer (the host had %s "
                        "available of %s).", cp_fmt_bytes(p->hm_avail, b1, sizeof b1),
                        cp_fmt_bytes(p->hm_mem_total, b2, sizeof b2));
        break;
    case CP_HV_RSS:
        cp_finding_line(f, "Verdict: consistent with the host OOM killer (the process's RSS "
                        "was at the memory limit).");
        break;
    case CP_HV_GROWING:
        cp_finding_line(f, "Verdict: consistent with the host OOM killer (RSS was growing "
                        "fast enough to use the %s left within 2 s of the last sample).",
                        cp_fmt_bytes(left, b1, sizeof b1));
        break;
    case CP_HV_CG_FULL:
        cp_finding_line(f, "Verdict: the cgroup %s was at its limit but this process's RSS "
                        "was not half of it (page cache or other processes fill it): an OOM "
                        "kill in the cgroup is possible, not shown.",
                        p->hm_cg_path ? p->hm_cg_path : "");
        break;
    default:
        cp_finding_line(f, "Verdict: host memory was not short: another signal source (a "
                        "scheduler's time limit, kill -9).");
    }
    static const char *const names[] = {
        [CP_HV_CGROUP] = "oom_killer_cgroup", [CP_HV_HOST] = "oom_killer_host",
        [CP_HV_RSS] = "oom_killer_rss", [CP_HV_GROWING] = "oom_killer_growing",
        [CP_HV_CG_FULL] = "cgroup_full", [CP_HV_NOT_SHORT] = "not_short",
    };
    cp_jb_key(&f->details, "host_memory");
    cp_jb_open(&f->details, '{');
    cp_jb_ku(&f->details, "t_ns", at);
    cp_jb_ku(&f->details, "rss_bytes", p->hm_rss);
    cp_jb_ku(&f->details, "mem_total_bytes", p->hm_mem_total);
    cp_jb_ku(&f->details, "mem_available_bytes", p->hm_avail);
    cp_jb_ku(&f->details, "cgroup_usage_bytes", p->hm_cg_usage);
    cp_jb_ku(&f->details, "cgroup_limit_bytes", p->hm_cg_limit);
    cp_jb_ku(&f->details, "pinned_bytes", p->hm_pinned);
    cp_jb_ku(&f->details, "peak_rss_bytes", p->hm_peak_rss);
    cp_jb_ku(&f->details, "peak_rss_t_ns", peak);
    if (trend)
        cp_jb_kd(&f->details, "rss_bytes_per_s", (double)d_rss * 1e9 / (double)d_ns);
    cp_jb_ks(&f->details, "verdict", names[v]);
    cp_jb_close(&f->details, '}');
}

static void killed_finish(cp_proc *p, void *st, cp_report *rep)
{
    (void)st;
    if (!p->killed)
        return;
    char b1[32], b2[32], nm[192];
    uint64_t held = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        held += cp_proc_hold_total(p, d);
    uint64_t at = p->t_last > p->t0 ? p->t_last - p->t0 : 0;
    /* `cuprobe run` reaped it: the signal is known, not inferred. */
    int sig = p->reaped ? p->reaped_signo : 0;
    const char *sn = sig ? sigabbrev_np(sig) : NULL;
    cp_finding *f =
        !sig ? cp_finding_new(rep, &cp_check_killed, p, "killed: no exit was recorded, "
                              "consistent with SIGKILL (the kernel's OOM killer, a scheduler's "
                              "time limit)")
             : cp_finding_new(rep, &cp_check_killed, p, "killed by signal %d (SIG%s), as "
                              "`cuprobe run` saw it: no exit was recorded%s", sig,
                              sn ? sn : "?", sig == SIGKILL ? " (the kernel's OOM killer, a "
                              "scheduler's time limit, kill -9)" : "");
    if (!f)
        return;
    if (sig)
        cp_jb_ki(&f->details, "signal", sig);
    f->count = 1;
    f->bytes = held;
    cp_finding_line(f, "Last recorded: %s after the trace began (%llu records, up to the "
                    "last flush).", cp_fmt_ns(at, b1, sizeof b1),
                    (unsigned long long)p->records);
    cp_finding_line(f, "Device memory held then: %s%s", cp_fmt_bytes(held, b2, sizeof b2),
                    held ? ":" : ".");
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++)
        if (cp_proc_hold_total(p, d))
            cp_finding_line(f, "  %s: %s", cp_dev_name(p, d, nm, sizeof nm),
                            cp_fmt_bytes(cp_proc_hold_total(p, d), b1, sizeof b1));
    if (p->host_pinned)
        cp_finding_line(f, "Pinned host memory held: %s.",
                        cp_fmt_bytes(p->host_pinned, b1, sizeof b1));
    if (!sig || sig == SIGKILL)
        cp_killed_host(f, p);
    unsigned n = p->n_last < CP_LAST_EVENTS ? p->n_last : CP_LAST_EVENTS;
    if (n)
        cp_finding_line(f, "Last events:");
    cp_jb_key(&f->details, "last_events");
    cp_jb_open(&f->details, '[');
    for (unsigned i = 0; i < n; i++) {
        const cp_last_event *e = &p->last[(p->n_last - n + i) % CP_LAST_EVENTS];
        uint64_t t = e->ts > p->t0 ? e->ts - p->t0 : 0;
        cp_finding_line(f, "  +%s  %s%s%s%s", cp_fmt_ns(t, b1, sizeof b1),
                        e->api ? e->api : cp_rec_type_name(e->type),
                        e->dev >= 0 ? (snprintf(nm, sizeof nm, " on GPU %d", e->dev), nm) : "",
                        e->bytes ? ", " : "", e->bytes ? cp_fmt_bytes(e->bytes, b2, sizeof b2)
                                                       : "");
        cp_jb_open(&f->details, '{');
        cp_jb_ku(&f->details, "t_ns", t);
        cp_jb_ks(&f->details, "api", e->api ? e->api : cp_rec_type_name(e->type));
        cp_jb_ki(&f->details, "device", e->dev);
        cp_jb_ku(&f->details, "bytes", e->bytes);
        cp_jb_close(&f->details, '}');
    }
    cp_jb_close(&f->details, ']');
    cp_jb_ku(&f->details, "last_ns", at);
    cp_jb_ku(&f->details, "device_bytes_held", held);
    cp_jb_ku(&f->details, "pinned_bytes_held", p->host_pinned);
}

const cp_check cp_check_killed = {
    .id = "killed",
    .sev = CP_SEV_WARNING,
    .name = "process killed without an exit",
    .explain = "The trace stops cleanly at its last flush and has no END record: the process "
               "was ended by a signal that cannot be caught, SIGKILL. The usual senders are "
               "the kernel's OOM killer (host memory ran out: see dmesg or journalctl -k for "
               "\"Out of memory: Killed process\"), a scheduler's time or memory limit (Slurm, "
               "Kubernetes) or a user. Everything up to the last flush was recorded; memory "
               "live at the cut is not called a leak.",
    .fix = "Check the kernel log for the OOM killer and the scheduler's log for limits. If "
           "host memory ran out, lower what the process holds on the host (DataLoader "
           "workers, pinned buffers, datasets loaded into memory) or ask for more memory.",
    .types = 0,
    .finish = killed_finish,
};
