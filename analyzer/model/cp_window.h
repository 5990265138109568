/*
 * cp_window.h - one part of a run looked at alone (`--since S --until U`,
 * seconds from the run's start: the earliest process start among the
 * traces read).
 *
 * State carries into the window, counts do not.  The records before it
 * still build the model (devices, contexts, streams, libraries, what is
 * live and where it was allocated) and the memory timeline's state, so
 * the window starts from the memory really held then; the checks, the
 * call tables (cp_ledger.h) and a record hook see only the records inside
 * it (but for the process's fatal CUDA error and the launches in flight
 * then: a broken context stays broken, and a death in the window is
 * explained by it), and the model's tallies (allocations, peaks, largest
 * request) start over where it opens.  An allocation made before the window and freed in
 * it is a free of memory the window started with: it lowers what is held,
 * never counts as an allocation of the window, and one never freed is not
 * the window's leak.  Records after it are not read: a process still
 * running at the window's end has not exited in it, so what is judged at
 * an exit (leaks at exit, a kill, how it died) is not.
 */
#ifndef CP_WINDOW_H
#define CP_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "cp_model.h"

#define CP_WINDOW_END UINT64_MAX

/* The window of a report, for what it prints. */
typedef struct cp_window {
    uint64_t since, until;      /* ns from the run's start; until CP_WINDOW_END: the end */
    uint64_t origin;            /* the run's start on the clock of its first trace */
    uint64_t run_len;           /* the run's length (ns); 0: not known (a trace was
                                 * not read to its end) */
} cp_window;

/* Where the window falls in one trace: its records at lo and after, and
 * before hi, on that trace's own clock (0 and CP_WINDOW_END: all); off:
 * when the process started, in ns after the run's start. */
typedef struct cp_wspan {
    uint64_t lo, hi, off;
} cp_wspan;

/*! cp_window_open() : the window opens in p at ts, before the first
 *  record in it is applied: the model's tallies start over from what is held now (the
 *  peaks at it), its timeline restarts at ts with that state, and its call
 *  tables (when kept) start with the live allocations as their sites'. */
void cp_window_open(cp_proc *p, uint64_t ts);

/*! cp_window_close() : the window ends at ts, before p's trace does: its
 *  timeline runs on to ts (the last record before it is not the end). */
void cp_window_close(cp_proc *p, uint64_t ts);

/*! cp_window_say() : "12.5 s – 30 s of the run" ("12.5 s – the end of the
 *  run") into buf.  @return : buf. */
const char *cp_window_say(const cp_window *w, char *buf, size_t cap);

#endif /* CP_WINDOW_H */
