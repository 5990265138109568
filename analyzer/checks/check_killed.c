/*
 * check_killed.c - killed: a trace that decodes cleanly up to a cut and has
 * no END record.  The shim writes END on every exit it can see (exit, _exit,
 * exec, a fatal signal it catches), so a clean cut means the process was
 * ended by a signal nobody can catch: SIGKILL, from the kernel's OOM killer,
 * a scheduler's time limit or a user.  This is the post-mortem case: the
 * report says when the process was last seen, what it held on the devices
 * and what it was doing.
 */
#include <stdio.h>
#include <string.h>

#include "cp_checks.h"

extern const cp_check cp_check_killed;   /* defined at the end of this file */

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
    cp_finding *f = cp_finding_new(rep, &cp_check_killed, p,
                                   "killed: no exit was recorded, consistent with SIGKILL (the "
                                   "kernel's OOM killer, a scheduler's time limit)");
    if (!f)
        return;
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
