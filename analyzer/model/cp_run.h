/*
 * cp_run.h - the run model: what the traces of one run say together.  After
 * every trace was read, each process gets its place in the run: its parent
 * among the traces, the image it exec'd into (the images of one pid are
 * joined), its rank identity from the launcher's variables (torchrun, Slurm,
 * Open MPI, PMI), whether it used a GPU and which device it worked on.
 * Checks that judge the run (no-gpu-used, fork-after-init, rank-placement)
 * and the renderers read it.
 */
#ifndef CP_RUN_H
#define CP_RUN_H

#include <stddef.h>

#include "cp_model.h"

/* The processes of a run by (host, pid, start time), then input order: the
 * key that joins a process to its parent, to the image it exec'd into and
 * to the children its FORK records name. */
typedef struct cp_run_ix {
    cp_proc **by;
    size_t n;
} cp_run_ix;

/*! cp_run_build() : fill the run members of every process of procs[0..n)
 *  (id, parent, next_image, exec_only, used_gpu, main_dev) and the run's
 *  index *ix (zeroed or built before: it is rebuilt; NULL: none kept), in
 *  O(n log n).  A
 *  process's parent is the image of its ppid on its host that ran when it
 *  started; its next image, after an exec, the next image of its pid there.
 *  @return : 0, or -ENOMEM. */
int cp_run_build(cp_proc **procs, size_t n, cp_run_ix *ix);

/*! cp_run_pid() : the processes with pid on host (NULL: none recorded) in
 *  ix, by start time.  @return : the first of them, *n their count. */
cp_proc *const *cp_run_pid(const cp_run_ix *ix, const char *host, uint64_t pid, size_t *n);

/*! cp_run_ix_free() : free the index (a zeroed one is fine). */
void cp_run_ix_free(cp_run_ix *ix);

/*! cp_proc_dev_allocs() : the device allocations p made, before a window
 *  (cp_window.h) and in it. */
uint64_t cp_proc_dev_allocs(const cp_proc *p);

/*! cp_proc_used_gpu() : whether p allocated device memory, copied or
 *  launched after a successful cuInit (valid before cp_run_build too). */
int cp_proc_used_gpu(const cp_proc *p);

/*! cp_proc_dev_used() : whether p had a context, memory or launches on dev. */
int cp_proc_dev_used(const cp_proc *p, int dev);

/*! cp_run_is_rank() : whether p carries a rank or local rank (-1 both: no). */
int cp_run_is_rank(const cp_proc *p);

/*! cp_run_who() : how a finding names p: "rank 3 (local 3) on host h, pid
 *  123" or "pid 123 (python3) on host h", into buf.  @return : buf. */
const char *cp_run_who(const cp_proc *p, char *buf, size_t cap);

/*! cp_run_who_many() : how a finding names the processes ps[0..n): "ranks
 *  0-3, 5 on host h" when all are ranks, else "pids 12, 13 on hosts a, b",
 *  into buf (one process: cp_run_who).  @return : buf. */
const char *cp_run_who_many(cp_proc *const *ps, size_t n, char *buf, size_t cap);

/*! cp_run_ranks_str() : the sorted numbers v[0..n) (n <= 4096) as "0-3, 5"
 *  into buf (v is sorted in place).  @return : buf. */
const char *cp_run_ranks_str(long *v, size_t n, char *buf, size_t cap);

#endif /* CP_RUN_H */
