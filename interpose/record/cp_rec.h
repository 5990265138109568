/*
 * cp_rec.h - the recorder core: per-thread record buffers feeding one writer
 * thread (cp_writer.c), and the process-wide tracing switch.
 *
 * Hooks never do I/O.  A hook calls the record's generated emitter,
 * cp_rec_put_<rec>() (below) or cp_ev_put_<rec>() (hooks/cp_evt.h), which
 * opens the record with cp_rec_begin(), writes the fields of
 * include/cp_records.h and calls cp_rec_commit().  The record's time and
 * thread id are added by the recorder.
 */
#ifndef CP_REC_H
#define CP_REC_H

#include <stddef.h>
#include <stdint.h>

#include "cp_clock.h"
#include "cp_varint.h"
#include "cp_trace.h"

/*! cp_rec_on() :
 *  @return : non-zero while records are accepted (the shim initialised, the
 *  output opened or still to be opened lazily, not shut down).  A few
 *  nanoseconds: one relaxed atomic load. */
int cp_rec_on(void);

/*! cp_rec_begin() : open a record of `type` whose fields take at most `max`
 *  bytes, on the calling thread's buffer.  Starts the writer (and opens the
 *  trace file) on first use in this process.
 *  @return : where to write the fields, or NULL when tracing is off or the
 *  shim failed (the caller then skips the record).  Between begin and commit
 *  the thread's buffer has the record open (a record begun meanwhile on
 *  this thread, by a signal handler, is dropped): do not call into CUDA or
 *  cp_rec_*. */
uint8_t *cp_rec_begin(unsigned type, size_t max);

/*! cp_rec_commit() : close the record opened by cp_rec_begin(); `end` points
 *  just past its last field.  The record's time is taken here, under the
 *  buffer lock, so that no record carrying an id it defines can leave the
 *  writer before it.  The record counts as a definition for
 *  cp_rec_commit_at(): publish the ids it defines only after this returns. */
void cp_rec_commit(uint8_t *end);

/*! cp_rec_commit_at() : cp_rec_commit() with the record's time given: `ts`,
 *  a cp_now_ns() this thread read before cp_rec_begin() (a timed call's
 *  end, so that its record costs no clock read of its own).  The time is
 *  raised to just after the latest record committed by cp_rec_commit() (any
 *  thread), so a record never precedes a definition whose id it carries.
 *  The writer keeps the output in time order all the same (cp_rec_drain.c);
 *  a ts from before the current trace file started, or 0, is replaced by
 *  the clock. */
void cp_rec_commit_at(uint8_t *end, uint64_t ts);

/*! cp_rec_put_<rec>(fields...) : write record <rec> (a REC record of
 *  include/cp_records.h) whole: begin with the table's size bound
 *  (CP_REC_BOUND), the fields by cp_enc_<rec>(), commit.
 *  @return : 0, or -1 when tracing is off (nothing written).  Generated for
 *  every REC record; the same locking rules as cp_rec_begin(). */
#define CP_REC_PUT_FN_(N, id, l, shape, doc) CP_REC_PUT_##shape(N, l)
#define CP_REC_PUT_EV(N, l)
#define CP_REC_PUT_BARE(N, l)
#define CP_REC_PUT_REC(N, l)                                                \
    static inline __attribute__((always_inline, unused)) int                \
        cp_rec_put_##l(CP_DROP1(CP_F_##N(CP_ENC_PARAM)))                    \
    {                                                                       \
        uint8_t *p = cp_rec_begin(CP_REC_##N, CP_REC_BOUND(N));             \
        if (!p)                                                             \
            return -1;                                                      \
        cp_rec_commit(cp_enc_##l(p CP_F_##N(CP_ENC_ARG)));                  \
        return 0;                                                           \
    }
CP_RECORDS(CP_REC_PUT_FN_)

/*! cp_rec_tid() : cuprobe's small index of the calling thread (announced by a
 *  CP_REC_THREAD record the first time it is used). */
uint32_t cp_rec_tid(void);

/*! cp_rec_flush() : hand every thread's records to the writer and wait until
 *  they are compressed and written (zstd frame flushed).  Used at OOM, before
 *  exec and at exit.  Safe to call from any thread that is not inside a
 *  cp_rec_begin/commit pair; bounded wait (CUPROBE_FLUSH_MS * 10). */
void cp_rec_flush(void);

/*! cp_rec_catch_up() : run the cp_rec_on_flush() callbacks without
 *  flushing, so that state kept outside the record buffers (launch counts)
 *  is recorded before the record that follows: a framework sample then
 *  sits after the work that preceded it.  Any thread; a no-op when tracing
 *  is off. */
void cp_rec_catch_up(void);

/*! cp_rec_generation() : a number that changes whenever a new trace file is
 *  started (process start, a forked child's first record).  Interning tables
 *  (strings, stacks, API names) compare it to know they must announce their
 *  entries again. */
uint32_t cp_rec_generation(void);

/*! cp_rec_on_new_file() : register fn to run, on the thread that started the
 *  file, right after a new trace file received its CP_REC_HEADER, so that
 *  process-wide state (devices, module map) is written into every file.  At
 *  most 16 callbacks. */
void cp_rec_on_new_file(void (*fn)(void));

/*! cp_rec_on_flush() : register fn to run before every cp_rec_flush(), at
 *  every cp_rec_catch_up() and before the file is closed (exit, _exit, exec,
 *  fatal signal), on the thread that flushes: state kept outside the record
 *  buffers (launch counters) is recorded there.  fn may record; it must not
 *  flush.  At most 8 callbacks. */
void cp_rec_on_flush(void (*fn)(void));

/*! cp_log() : the shim's one logging function.  Prints "[cuprobe pid] ..." on
 *  stderr when level <= CUPROBE_LOG (default 1: warnings), and records it as
 *  CP_REC_LOG when tracing is on.  level 0 = error, 1 = warning, 2 = info,
 *  3 = debug. */
void cp_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*! cp_log_set_trace() : where cp_log() lines go besides stderr: may() says
 *  whether a record can be written now, put() writes it (CP_REC_LOG).  Set
 *  once by the recorder at start-up (cp_log.c knows no recorder). */
void cp_log_set_trace(int (*may)(void), void (*put)(int level, const char *msg, size_t len));

#endif /* CP_REC_H */
