/*
 * cp_pystack.h - Python frames of the calling thread, read without the GIL.
 *
 * PyTorch releases the GIL before it allocates, copies or launches,
 * and taking it in a hook can deadlock, so we never call the C API on the
 * hot path.  Instead we read the calling thread's own interpreter frame
 * chain: while the thread sits in our hook its frames cannot change.  The
 * layout of the running CPython (3.11, 3.12: checked tables; 3.13: the
 * interpreter's own _Py_DebugOffsets) is chosen once; any other version
 * turns the feature off with one log line.
 */
#ifndef CP_PYSTACK_H
#define CP_PYSTACK_H

#include <stddef.h>
#include <stdint.h>

/* One resolved frame.  The strings are cuprobe's own copies (not
 * NUL-terminated), valid for the life of the process. */
typedef struct cp_pyframe_raw {
    const char *file;
    size_t file_len;
    const char *func;           /* co_qualname */
    size_t func_len;
    int line;                   /* -1 when the instruction has no line */
} cp_pyframe_raw;

/*! cp_pystack_walk() : resolve the calling thread's Python frames,
 *  innermost first (at most 128), without recording anything.
 *  @return : the number of frames written to out (0..max): 0 when the
 *  process runs no (supported) CPython, the interpreter is not initialised or
 *  is finalising, or this thread has no thread state. */
int cp_pystack_walk(cp_pyframe_raw *out, int max);

/*! cp_pystack_capture() : as cp_pystack_walk(), but interns each frame as a
 *  trace id: new strings (CP_REC_STRING) and frames (CP_REC_PYFRAME) are
 *  recorded first.  Must not be called between cp_rec_begin and commit.
 *  fp, memo (either may be NULL): the walk's fingerprint, as
 *  cp_pystack_fp() would give it, when the frames alone decided the ids
 *  (every frame met was taken), else 0; and the code-watcher epoch the walk
 *  read at its start (cp_pysite_memo(), 0 when off).
 *  @return : the number of ids written to ids (0..max). */
int cp_pystack_capture(uint64_t *ids, int max, uint64_t *fp, uint64_t *memo);

/*! cp_pystack_fp() : a 64-bit fingerprint of the calling thread's Python
 *  frames, those cp_pystack_capture(ids, max) would meet, without reading
 *  any code object: each frame's code address, instruction pointer and
 *  whether a generator owns it.  Why equal fingerprints give equal ids: a
 *  capture with fingerprint F took every frame it met; the same code
 *  addresses hold the same code objects while the code watcher's epoch
 *  (*memo) has not moved (cp_pysite.c), and the same object at the same
 *  instruction and owner resolves to the same site.  A false match needs
 *  two different frame chains whose 64-bit mixes collide.
 *  @return : the frames counted (0: none, *fp = 0), or -1 (*fp = 0) when
 *  the walk's budget ran out or the code watcher is off (*memo = 0: then
 *  there are frames, but a fingerprint would prove nothing). */
int cp_pystack_fp(int max, uint64_t *fp, uint64_t *memo);

/* A frame as the launch path keeps it: the code object and the instruction
 * pointer, resolved only if ever needed (cp_pystack_intern_raw). */
typedef struct cp_pyraw {
    uintptr_t code, instr;
} cp_pyraw;

/*! cp_pystack_raw() : the calling thread's innermost Python frames as raw
 *  (code, instruction) pairs, innermost first: a few loads per frame, no
 *  lookup, no record.  @return : the number written (0..max). */
int cp_pystack_raw(cp_pyraw *out, int max);

/*! cp_pystack_intern_raw() : resolve frames taken by cp_pystack_raw(),
 *  possibly on another thread and later, into trace frame ids (recording
 *  strings and frames first, as cp_pystack_capture does).  A code object
 *  that is no longer readable is skipped, never touched.  Must not be
 *  called between cp_rec_begin and commit.  @return : ids written. */
int cp_pystack_intern_raw(const cp_pyraw *in, int n, uint64_t *ids, int max);

/*! cp_pystack_status() : why Python frames are (not) taken.
 *  @return : 1 when a supported interpreter was found, 0 when none is loaded
 *  (yet: the check is repeated until one is initialised), -1 when it is
 *  unsupported or the feature is off (logged once). */
int cp_pystack_status(void);

/*! cp_pystack_version() : PY_VERSION_HEX of the interpreter in use, or 0. */
unsigned long cp_pystack_version(void);

/*! cuprobe_py_code_watch() : exported for the companion.  on = 1: the
 *  caller (the main interpreter, GIL held or released) has registered
 *  cuprobe_py_code_event() with PyCode_AddWatcher, so call-site cache hits
 *  may skip validation (cp_pysite.c); refused when CPython is older than
 *  3.12, not running, or not the only interpreter.  on = 0: never again
 *  (the companion calls it at exit, before finalisation drops watchers).
 *  @return : 0; -ENOSYS (no usable CPython 3.12+), -ESRCH (finalising),
 *  -EXDEV (more than one interpreter: the memo is off for good) or
 *  -ECANCELED (already off for good). */
int cuprobe_py_code_watch(int on);

/*! cp_pystack_atfork_child() : reset the caches' locks in a forked child. */
void cp_pystack_atfork_child(void);

#endif /* CP_PYSTACK_H */
