/*
 * cp_writer.h - internal interface between the recorder (cp_rec.c,
 * cp_rec_drain.c, cp_header.c), the writer thread that consumes its records
 * (cp_writer.c) and the process lifecycle (cp_lifecycle.c, cp_sigchain.c).  Not for hooks: they use
 * cp_rec.h only.  Names with a double underscore cross files but stay inside
 * the shim.
 */
#ifndef CP_WRITER_H
#define CP_WRITER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* In-buffer record header: u8 type, u32 len (field bytes), u64 ts. */
#define CP_HDR_BYTES 13u

/* ---- recorder (cp_rec.c) ------------------------------------------------ */

struct cp__rec_consumer;

/*! cp__rec_init() : set up the recorder for this process image (called once
 *  from the shim constructor; cheap, no file I/O), with `out` consuming its
 *  records (the writer, &cp__writer).  `enabled` 0 keeps tracing off for
 *  good (CUPROBE_DISABLE=1). */
void cp__rec_init(int enabled, const struct cp__rec_consumer *out);

/*! cp__rec_start_now() : open the trace file now instead of at the first
 *  record (the root process does this so that a program that never touches
 *  CUDA still leaves a trace).  @return : 0 or a negative errno. */
int cp__rec_start_now(void);

/*! cp__rec_shutdown() : drain every buffer, write END(reason, status) and
 *  close the file, waiting at most wait_ms.  final != 0: tracing stays off
 *  for the rest of the process; final == 0 (exec): tracing is suspended until
 *  cp__rec_resume().  Safe when no file was ever opened (writes nothing). */
void cp__rec_shutdown(int reason, int64_t status, int final, unsigned wait_ms);

/*! cp__rec_resume() : after a failed exec: bump the generation and accept
 *  records again; the next record opens a new file.  No effect unless
 *  cp__rec_shutdown(final=0) suspended tracing. */
void cp__rec_resume(void);

/*! cp__rec_pause() : paused != 0: every wrapper passes straight through (as
 *  with CUPROBE_DISABLE) until cp__rec_pause(0).  For timing the recorder
 *  against itself in one process (cuprobe_bench_pause()); events meanwhile
 *  are lost, so the trace is incomplete.
 *  @return : 0, or -ENODEV when the recorder is off or shut down. */
int cp__rec_pause(int paused);

/*! cuprobe_bench_pause() : exported (cp_lifecycle.c) for benchmarks that
 *  find it with dlsym(RTLD_DEFAULT): cp__rec_pause(paused), with a one-time
 *  log line saying the trace is incomplete.  @return : as cp__rec_pause(). */
int cuprobe_bench_pause(int paused);

/*! cp__rec_running() : non-zero while a trace file is open. */
int cp__rec_running(void);

/*! cp__rec_owner() : non-zero when the caller is the process that owns the
 *  recorder state (false in a vfork child, which shares our memory). */
int cp__rec_owner(void);

/*! cp__rec_fork_child() : in a fork child: forget every inherited buffer,
 *  lock and the writer (it does not exist here), bump the generation and go
 *  back to opening a file lazily. */
void cp__rec_fork_child(void);

/*! cp__rec_fatal() : async-signal context, the process is about to die of
 *  `sig`: stop accepting records and, without ever blocking, write what is
 *  buffered plus SIGNAL and END(SIGNAL) records. */
void cp__rec_fatal(int sig, int code, uint64_t addr);

/*! cp__rec_signal_note() : async-signal context, a handler of the program
 *  will run: record CP_REC_SIGNAL on the calling thread's buffer if that is
 *  possible without blocking or allocating. */
void cp__rec_signal_note(int sig, int code, uint64_t addr);

/*! cp__rec_writer_failed() : the writer could not write: turn tracing off
 *  without taking any lock (called from the writer thread). */
void cp__rec_writer_failed(void);

/*! cp__rec_may_log() : non-zero when cp_log() may record on this thread. */
int cp__rec_may_log(void);

/* Called by the drain for every record it takes, in time order. */
typedef void (*cp__emit_fn)(void *ctx, uint32_t tid, unsigned type,
                            uint64_t ts, const uint8_t *fields, uint32_t len);

/*! cp__rec_drain() : cut at time T: hand every buffered record with ts < T,
 *  from all threads merged by time, to emit(); records older than `min_ts`
 *  (left over from a previous file) are discarded.  emergency != 0: signal
 *  context, never wait, allocate or free.  Only the writer (holder of the
 *  output lock) calls it.  @return : records emitted. */
uint64_t cp__rec_drain(uint64_t T, uint64_t min_ts, int emergency,
                       cp__emit_fn emit, void *ctx);

/*! cp__rec_lost() : records dropped so far in this process image. */
uint64_t cp__rec_lost(void);

/* ---- the consumer of the recorder's queue (cp_writer.c) ---------------- */

/* The recorder owns the per-thread buffers; the writer thread consumes them
 * (cp__rec_drain) and writes the file.  The recorder drives its consumer
 * only through these operations, handed to cp__rec_init() by the lifecycle,
 * so the writer calls the recorder and never the other way round. */
struct cp__rec_consumer {
    /* Create the trace file from CUPROBE_OUTPUT, write the 16-byte prefix
     * and start the writer thread (all signals blocked).  On failure prints
     * one warning naming the path and the errno text.  @return : 0 or a
     * negative errno. */
    int (*start)(uint64_t start_ts);
    /* Drain everything, write END(reason, status), end the zstd frame and
     * close the file; wait up to wait_ms.  @return : 0, or -ETIMEDOUT (the
     * thread is left running). */
    int (*stop)(int reason, int64_t status, unsigned wait_ms);
    /* A drain + ZSTD_e_flush, waited for at most wait_ms.  Not from the
     * writer thread. */
    void (*flush)(unsigned wait_ms);
    /* Wake the writer early (a buffer chunk filled). */
    void (*kick)(void);
    /* A producer saw its record's time pass cp__flush_due: if no one holds
     * the output lock, do the overdue drain and flush on this thread
     * (signals blocked, errno kept), or wait for it.  Not from a handler. */
    void (*help)(void);
    /* Async-signal context: if the output lock can be taken within ~100 ms,
     * drain, write SIGNAL + END(SIGNAL) and close; the writer thread never
     * writes again.  @return : 0 or -EBUSY. */
    int (*emergency)(int sig, int code, uint64_t addr, uint32_t tid);
    /* After stop(): delete the file just closed if it holds no event at all
     * (only HEADER, THREAD, id announcements, EXEC, END), e.g. a launcher
     * script that only execs.  @return : 1 when the file was removed. */
    int (*discard_if_empty)(void);
    /* Fork child: drop the inherited writer state (close our copy of the fd,
     * re-initialise locks) without touching it. */
    void (*forget)(void);
    /* Non-zero on the writer thread. */
    int (*is_self)(void);
};

/* The writer thread of cp_writer.c. */
extern const struct cp__rec_consumer cp__writer;

/* When the next timed flush is due (ns, CLOCK_MONOTONIC); UINT64_MAX while
 * no file is open.  Owned by the recorder (cp_rec.c), which reads it on
 * every commit (one relaxed load); set by its consumer after each flush. */
extern _Atomic uint64_t cp__flush_due;

/*! cp__output_path() : expand the CUPROBE_OUTPUT pattern into buf
 *  (cp_outpath.c, for the writer).  @return : 0, or -ENAMETOOLONG. */
int cp__output_path(const char *pattern, char *buf, size_t cap);

/*! cp__output_create() : create the trace file named by pattern (expanded
 *  by cp__output_path) with O_EXCL; when that name is taken, NAME.PID (a
 *  pattern without %p), then NAME.N.  The name used, made absolute (or the
 *  pattern, when it does not expand), is left in path.
 *  @return : the fd, or a negative errno; -ECANCELED when the name is a
 *  directory or a device (said on stderr already). */
int cp__output_create(const char *pattern, char *path, size_t cap);

/* ---- file start (cp_header.c) ------------------------------------------- */

/*! cp__header_encode() : the fields of this process's CP_REC_HEADER, encoded
 *  (cp_enc_header) into a malloc'd buffer of *len bytes.
 *  @return : the buffer (the caller frees it), or NULL when out of memory. */
uint8_t *cp__header_encode(size_t *len);

/* cp__image_forked : non-zero in a forked child that has not exec'd: its
 * image is a copy of the parent's (the HEADER's last field). */
extern int cp__image_forked;

/* ---- lifecycle (cp_lifecycle.c, cp_sigchain.c) ------------------------- */

/*! cp__sigchain_install() : put cuprobe's handler in front of the fatal
 *  signals (SEGV, BUS, ILL, FPE, ABRT, TERM, INT) unless they are ignored;
 *  the program's own handlers, installed before or after, are chained. */
void cp__sigchain_install(void);

#endif /* CP_WRITER_H */
