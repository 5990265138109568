/*
 * cp_pysite.h - the Python call-site cache of the frame walker: (code
 * object address, instruction index) -> file, function and line, resolved
 * from the live objects once and re-validated on later hits, unless the
 * code-watcher memo proves the code object is still the same one
 * (cp_pysite.c).  Internal to cp_pystack.c, exposed for
 * tests/unit/test_pysite.c.
 */
#ifndef CP_PYSITE_H
#define CP_PYSITE_H

#include <stdint.h>

#include "cp_pylayout.h"

/* One resolved site, in arena memory: never freed, so a pointer to it stays
 * readable even after a newer site replaced it in the cache. */
struct cp_pysite {
    uintptr_t code;
    int32_t lasti;              /* instruction index, in code units */
    int32_t line;
    /* The memo's epoch this site was last validated in (0: never by a
     * walker holding the code object); on the first line, which a hit
     * reads anyway. */
    _Atomic uint64_t memo_epoch;
    /* With the stamp: lasti passes CPython's traceback rule (lasti >=
     * co_firsttraceable), so a memo hit needs no look at the code object. */
    _Atomic uint32_t traceable;
    uintptr_t filename, qualname, linetable;
    int64_t file_hash, func_hash;
    int32_t firstlineno;
    uint32_t file_len, func_len;
    const char *file, *func;
    _Atomic uint64_t file_id, func_id;  /* trace string ids, 0 = not yet */
    /* The frame's trace id and the file epoch its record was last known to
     * be in: a repeated site skips interning (hash and probe) per frame. */
    _Atomic uint64_t frame_id, frame_epoch;
};

/*! cp_pysite_setup() : the interpreter's layout and object types, once,
 *  before any cp_pysite_get() (the walker calls it when it finds the
 *  interpreter).  L must stay valid for the life of the process. */
void cp_pysite_setup(const struct cp_pylayout *L, uintptr_t unicode_type, uintptr_t bytes_type);

/*! cp_pysite_memo() : the memo's epoch for a batch of lookups (one walk),
 *  read once before them and after the code objects the caller's frames
 *  hold were made (at the start of the walk); 0 when the memo is off. */
uint64_t cp_pysite_memo(void);

#define CP_PYSITE_HELD 1        /* the caller's frame holds the code object */
#define CP_PYSITE_TRACEABLE 2   /* and lasti >= its co_firsttraceable (or none) */

/*! cp_pysite_get() : the site of instruction lasti of the code object at
 *  `code`, from the cache or resolved now.  `memo`: cp_pysite_memo() of
 *  this batch; a cached site stamped with it is answered without
 *  validation.  `held`: 0, or CP_PYSITE_HELD when the caller's own frame
 *  holds a reference to the code object (it is alive during the call), plus
 *  CP_PYSITE_TRACEABLE as the case may be; only held lookups stamp a site.
 *  The caller has checked that `code` is a readable code object and lasti
 *  one of its instructions.
 *  @return : the site, or NULL when the objects do not look like CPython's. */
const struct cp_pysite *cp_pysite_get(uintptr_t code, int lasti, uint64_t memo, int held);

/*! cp_pysite_memo_get() : for a walker, before it looks at the code
 *  object: the site of (code, lasti) when it is stamped with `memo` (not 0),
 *  i.e. when a walk holding this very code object checked it at this
 *  instruction and no code object died since; unless its instruction fails
 *  the traceback rule and the frame is not a generator's.  Reads nothing of
 *  the code object.  @return : the site, or NULL (look as before). */
const struct cp_pysite *cp_pysite_memo_get(uintptr_t code, intptr_t lasti, uint64_t memo,
                                           int generator);

/*! cp_pysite_tick() : once per batch of lookups: publishes the calling
 *  thread's counters now and then (cp_pysite_stats). */
void cp_pysite_tick(void);

/*! cp_pysite_memo_start() : the code watcher (cuprobe_py_code_event) is
 *  registered with the only interpreter of the process: from now on a hit
 *  whose stamp equals the current epoch skips validation.
 *  @return : 0, or -ECANCELED when the memo was turned off for good. */
int cp_pysite_memo_start(void);

/*! cp_pysite_memo_stop() : turn the memo off for good (every hit validates
 *  again, as without it); logs `why` once (CUPROBE_LOG=2) when it was on. */
void cp_pysite_memo_stop(const char *why);

/*! cp_pysite_memo_on() : whether the memo is on (started, not stopped). */
int cp_pysite_memo_on(void);

/*! cuprobe_py_code_event() : CPython's PyCode_WatchCallback, exported for
 *  the companion to register with PyCode_AddWatcher (3.12+).  Called with
 *  the GIL held; PY_CODE_EVENT_CREATE (0) is ignored, any other event
 *  (PY_CODE_EVENT_DESTROY = 1) moves the epoch on.  Never fails, never
 *  sets an exception.  @return : 0. */
int cuprobe_py_code_event(int event, void *code);

/* The cache's counters (lookups by the walkers of every thread). */
struct cp_pysite_stats {
    uint64_t memo_hits;         /* hits that skipped validation */
    uint64_t validations;       /* hits validated against the live object */
    uint64_t resolves;          /* sites resolved from the objects */
};

/*! cp_pysite_stats() : the counters so far: every thread's flushed counts
 *  and the calling thread's own (which are flushed first). */
void cp_pysite_stats(struct cp_pysite_stats *out);

/*! cp_pysite_atfork_child() : reset the cache's lock in a forked child. */
void cp_pysite_atfork_child(void);

#endif /* CP_PYSITE_H */
