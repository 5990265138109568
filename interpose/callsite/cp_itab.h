/*
 * cp_itab.h - intern tables for the call-site records (stacks, strings,
 * Python frames): content -> small id, with an "announced in this file"
 * mark so that each id's defining record is written once per trace file.
 *
 * Lookups are lock-free (open addressing over published, immutable entries);
 * inserts and re-announcements take the table's mutex and write the defining
 * record while holding it, and only then publish, so no thread can use an id
 * before its record has been committed (records leave in commit-time order).
 */
#ifndef CP_ITAB_H
#define CP_ITAB_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct cp_itab_ent;

/* Writes the record that defines `id` for `key`.  Called with the table's
 * mutex held; may call cp_rec_begin/commit and intern into OTHER tables
 * (lock order: stacks -> pyframes -> strings).  @return : 0, or -1 when the
 * record could not be written (the id is then not marked announced). */
typedef int (*cp_itab_announce_fn)(void *ctx, uint64_t id, const void *key, size_t len);

struct cp_itab {
    const char *name;                    /* for the one "table full" log line */
    unsigned cap_log2;                   /* slots = 1 << cap_log2 */
    _Atomic(struct cp_itab_ent *) *slots;  /* mmap'd lazily */
    pthread_mutex_t lock;                /* inserts, announcements, arena */
    uint64_t next_id;                    /* under lock; ids start at 1 */
    unsigned count;                      /* under lock */
    int full_logged;                     /* under lock */
    uint8_t *arena, *arena_end;          /* under lock: bump allocator */
};

#define CP_ITAB_INIT(nm, log2) \
    { .name = (nm), .cap_log2 = (log2), .lock = PTHREAD_MUTEX_INITIALIZER, .next_id = 1 }

/*! cp_itab_intern() : find or add `key` (len bytes) and make sure its
 *  defining record is in the current trace file (announce() is called when
 *  the entry is new, or was announced in an earlier file).
 *  @return : the id (>= 1), or 0 when the table is full, memory ran out or
 *  the announcement failed (the caller then records nothing for it). */
uint64_t cp_itab_intern(struct cp_itab *t, const void *key, size_t len,
                        cp_itab_announce_fn announce, void *ctx);

/*! cp_itab_intern_ref() : as cp_itab_intern(), and *stored (when not
 *  NULL) is set to the table's own copy of the key (immutable, lives as
 *  long as the process; NULL when the id is 0), so that a caller can later
 *  recognise the same key with one memcmp instead of a hash and a probe. */
uint64_t cp_itab_intern_ref(struct cp_itab *t, const void *key, size_t len,
                            cp_itab_announce_fn announce, void *ctx, const void **stored);

/*! cp_itab_epoch() : the current trace-file epoch (changes with every new
 *  file, and at fork); other per-file state (the module map) compares it. */
uint64_t cp_itab_epoch(void);

/*! cp_itab_new_file() : every id must be announced again (a new trace file
 *  was started).  Lock-free; safe from a cp_rec_on_new_file callback. */
void cp_itab_new_file(void);

/*! cp_itab_atfork_child() : re-initialise `t`'s mutex in a forked child (the
 *  parent's holder does not exist there) and start a new file epoch. */
void cp_itab_atfork_child(struct cp_itab *t);

/*! cp_itab_hash() : 64-bit hash of len bytes (never 0). */
uint64_t cp_itab_hash(const void *key, size_t len);

/*! cp_itab_alloc() : arena memory that lives as long as the process, for
 *  the Python caches (n bytes, 8-aligned).  Takes the arena's own lock.
 *  @return : the memory, or NULL when the 64 MiB cap is reached. */
void *cp_itab_alloc(size_t n);

#endif /* CP_ITAB_H */
