/*
 * cp_hostmem.h - the process's host memory, sampled by the writer thread
 * (cp_writer.c) into HOSTINFO and HOSTMEM records, so that the report of a
 * process killed without an exit (SIGKILL) can tell the kernel's OOM killer
 * from a scheduler's time limit or a user's kill -9.
 *
 * Everything here runs on the writer thread or under its output lock, never
 * in a hook: a hook's cost does not change.  A sample is a few preads of
 * files kept open (no stdio, no allocation); a file that cannot be read
 * gives 0 and one LOG record.
 */
#ifndef CP_HOSTMEM_H
#define CP_HOSTMEM_H

#include <stdint.h>

#include "cp_ownfd.h"

#include "cp_writer.h"

/* A sample is read at most this often (at the writer's next pass after
 * it): its passes come every 0.6 CUPROBE_FLUSH_MS (60 ms by default), and
 * CUPROBE_FLUSH_MS=1 must not turn into a /proc read every 0.6 ms. */
#define CP_HM_READ_NS (50ull * 1000000u)
/* HOSTMEM is written at least this often while the file is open, even when
 * nothing moved: a killed process's last sample is at most this old at its
 * last flush. */
#define CP_HM_BEAT_NS (1000ull * 1000000u)
/* A value "moved" when it changed by at least this and by 1 % of itself. */
#define CP_HM_STEP_BYTES (1ull << 20)

/* What one sample read (bytes; 0 = could not be read). */
struct cp_hm_vals {
    uint64_t rss, rss_shared, pinned, mem_available, cg_usage;
    uint64_t mem_total, swap_total, cg_limit;
};

struct cp_hostmem {
    int fd_statm, fd_meminfo, fd_cg_max, fd_cg_cur;   /* -1 when closed */
    /* Their files, told apart from what the program may put at those
     * numbers (only ours are closed: cp_hostmem_forget). */
    struct cp_ownfd_id id_statm, id_meminfo, id_cg_max, id_cg_cur;
    int opened;               /* the files were looked up in this image */
    unsigned warned;          /* bit per file whose failure was logged */
    uint64_t page_size;
    char cg_path[512];        /* HOSTINFO's cg_path */
    uint64_t pinned;          /* page-locked host bytes held now */
    uint64_t read_ns;         /* time of the last sample; 0: none in this file */
    uint64_t written_ns;      /* time of the last HOSTMEM; 0: none in this file */
    int info_written;         /* HOSTINFO is in this file */
    struct cp_hm_vals last;   /* as last written */
};

/*! cp_hostmem_init() : a closed sampler with nothing counted (also what a
 *  fork child starts from: it closes nothing, the parent's fds are left to
 *  cp_hostmem_forget()). */
void cp_hostmem_init(struct cp_hostmem *hm);

/*! cp_hostmem_note() : one record the writer drained (fields as in the
 *  file): a successful ALLOC or FREE of a page-locked host kind changes the
 *  pinned count.  Cheap for every other type (one compare); async-signal
 *  safe (the emergency drain calls it too). */
void cp_hostmem_note(struct cp_hostmem *hm, unsigned type, const uint8_t *f, uint32_t len);

/*! cp_hostmem_new_file() : a trace file begins: its first sample writes
 *  HOSTINFO and HOSTMEM whatever they hold.  The pinned count goes on (a
 *  file started after a failed exec is the same process). */
void cp_hostmem_new_file(struct cp_hostmem *hm);

/*! cp_hostmem_sample() : if CP_HM_READ_NS passed since the last sample,
 *  read the host memory now and write what changed through emit(ctx, 0,
 *  type, ts, fields, len): HOSTINFO when a limit changed (or first in the
 *  file), HOSTMEM when a value moved, pinned changed or CP_HM_BEAT_NS
 *  passed.  Writer thread only, after the file's HEADER; keeps errno. */
void cp_hostmem_sample(struct cp_hostmem *hm, uint64_t now, uint64_t ts, cp__emit_fn emit,
                       void *ctx);

/*! cp_hostmem_forget() : in a fork child: close the files, which name the
 *  parent's /proc entries, and start over (a child holds no pinned memory:
 *  page locks are not inherited). */
void cp_hostmem_forget(struct cp_hostmem *hm);

#endif /* CP_HOSTMEM_H */
