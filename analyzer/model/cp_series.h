/*
 * cp_series.h - one process's memory and copy timeline, built once while
 * the records stream past and read by every picture: the HTML page, the
 * Perfetto export and the text report's memory-over-time line.
 *
 * The run is cut into CP_SER_N buckets of equal time.  When a record falls
 * beyond the last one, neighbouring buckets merge pairwise and the width
 * doubles, so the series costs the same for a second or a week and for ten
 * records or a billion.  Per device, a bucket keeps the most memory held
 * during it (with the split by holder at that moment, and the largest live
 * allocations then), the least, and the framework's own counts; per process
 * it keeps copies by class and the time blocked in synchronous copies.
 */
#ifndef CP_SERIES_H
#define CP_SERIES_H

#include <stdint.h>

#include "cp_map.h"

#define CP_SER_N 256        /* buckets of the timeline */
#define CP_SER_TOP 4        /* largest live allocations kept per bucket and device */
#define CP_SER_OOMS 32      /* OOM marks kept per process */

struct cp_proc;
struct cp_record;
struct cp_live;

/* Who holds device memory, bottom to top in the stacked charts. */
enum cp_holder {
    CP_HD_FW_TENSORS = 0,   /* the framework's live tensors (its "allocated") */
    CP_HD_FW_CACHE = 1,     /* the framework's cache ("reserved" - "allocated") */
    CP_HD_LIBS = 2,         /* allocated from inside cuBLAS, cuDNN, NCCL, ... */
    CP_HD_POOL_VMM = 3,     /* stream-ordered pools and VMM, outside the framework */
    CP_HD_OTHER = 4,        /* the rest of this process (plain cuMemAlloc) */
    CP_HD_OTHER_PROCS = 5,  /* other processes, where the OOM record listed them */
    CP_HD_N = 6,
};

/* Copy classes of the copy lane. */
enum cp_copy_class { CP_CC_PINNED = 0, CP_CC_PAGEABLE = 1, CP_CC_PEER = 2, CP_CC_N = 3 };

typedef struct cp_ser_alloc {
    uint64_t size, stack, ts;
} cp_ser_alloc;

/* One device in one bucket. */
typedef struct cp_ser_dev {
    uint64_t max_held, min_held, max_ts;    /* this process's held total */
    uint64_t hold[CP_HD_N];                 /* split at max_ts */
    uint64_t fw_alloc, fw_res;              /* last framework counts (fw_seen) */
    cp_ser_alloc top[CP_SER_TOP];           /* largest live at max_ts, largest first */
    uint8_t used, n_top, fw_seen, oom;
} cp_ser_dev;

/* What the process did in one bucket, all devices. */
typedef struct cp_ser_bucket {
    uint64_t copies[CP_CC_N], copy_bytes[CP_CC_N];
    uint64_t blocked_ns;        /* in synchronous copies */
} cp_ser_bucket;

typedef struct cp_ser_oom {
    uint64_t ts, request;
    int dev;
} cp_ser_oom;

/* The live state the buckets are sampled from. */
typedef struct cp_ser_now {
    uint64_t lib_held, fw_alloc, fw_res, other_procs;
    cp_ser_alloc top[CP_SER_TOP];
    uint64_t top_ptr[CP_SER_TOP];
    int n_top, top_dirty, fw_seen;
} cp_ser_now;

typedef struct cp_series {
    uint64_t t0, width, t_end;  /* start and bucket width (trace clock, ns), last record */
    int cur;                    /* the bucket being filled, -1 before the first */
    int n_dev;                  /* devices with a timeline */
    cp_ser_bucket *b;           /* CP_SER_N while fed (cp_series_start); the
                                 * buckets in use once frozen */
    cp_ser_dev *dev[64];        /* the same, each allocated on first use */
    cp_ser_now *now;            /* [64] while fed, else NULL */
    cp_ser_oom oom[CP_SER_OOMS];
    int n_oom;
    uint64_t n_oom_all;
    cp_map lib_stack;           /* stack id -> 1 library, 2 not (a cache) */
    uint64_t since_rescan;      /* memory events since the largest-live list was rebuilt */
    int lean;                   /* cp_series_lean(): the most held per bucket only */
    /* width * (cur + 1), 0 before the first record: a record at ts - t0 at
     * or past it moves to another bucket (cp_ser_move()), the one test
     * every record pays. */
    uint64_t span;
    uint64_t types;             /* bit t: records of type t change the series */
} cp_series;

/*! cp_series_new() : an empty series, with no buckets yet: either fed
 *  (cp_series_start) or filled (cp_series_buckets).  @return : it, or NULL
 *  out of memory. */
cp_series *cp_series_new(void);

/*! cp_series_start() : make s ready to be fed records (its CP_SER_N buckets
 *  and live state).  @return : 0 or -ENOMEM. */
int cp_series_start(cp_series *s);

/*! cp_series_buckets() : give s (never fed) n zeroed buckets to be filled
 *  in place (a timeline read back from a summary), and no live state: it
 *  is frozen.  @return : 0 or -ENOMEM. */
int cp_series_buckets(cp_series *s, size_t n);

/*! cp_series_free() : free s (NULL is fine). */
void cp_series_free(cp_series *s);

/*! cp_series_freeze() : s will not be fed again (its trace was read, or it
 *  was read back from a summary): drop the live state and keep only the
 *  buckets in use, which is all cp_series_n() and cp_series_dev() show.
 *  A run of thousands of short processes then holds the few buckets each
 *  used, not CP_SER_N of each. */
void cp_series_freeze(cp_series *s);

/*! cp_series_lean() : from now on s (new, nothing fed yet) keeps only what
 *  cp_series_max_in() reads: each device's most held per bucket (the text
 *  and JSON reports' "over time" line).  The holders, the largest live
 *  allocations, the lows and the copies stay empty: what reads them (the
 *  page, the summary, the Perfetto export) must not be given s. */
void cp_series_lean(cp_series *s);

/*! cp_series_pre() : record r before the model applies it (only a FREE
 *  needs it); freeing is the live allocation it releases
 *  (cp_model_freeing(), NULL when unknown).  O(1). */
void cp_series_pre(cp_series *s, const struct cp_record *r, const struct cp_live *freeing);

/*! cp_series_feed() : record r after the model applied it; made is the
 *  live entry the model made for an ALLOC (p->made, NULL otherwise): the
 *  timeline notes in it whether a CUDA library allocated it, so the FREE
 *  needs no lookup of its stack.  O(1) amortised.
 *  @return : 0, or -ENOMEM. */
int cp_series_feed(cp_series *s, struct cp_proc *p, const struct cp_record *r,
                   struct cp_live *made);

/*! cp_series_restart() : start s over at ts (a window opens there,
 *  cp_window.h): no bucket before it, the first one opening with what p
 *  holds now and the state s keeps (the holders' split, the largest live
 *  allocations, the framework's counts); OOM marks and copies start from
 *  none. */
void cp_series_restart(cp_series *s, struct cp_proc *p, uint64_t ts);

/*! cp_series_reach() : the timeline runs on to ts with no record (a
 *  window ends there before the process did): the buckets up to ts carry
 *  the state of the last one. */
void cp_series_reach(cp_series *s, struct cp_proc *p, uint64_t ts);

/*! cp_series_n() : buckets in use (the last one is partly filled). */
int cp_series_n(const cp_series *s);

/*! cp_series_dev() : device d's buckets (cp_series_n of them), or NULL when
 *  the process held no memory there.  Buckets without events carry the
 *  state of the previous one. */
const cp_ser_dev *cp_series_dev(const cp_series *s, int d);

/*! cp_series_max_in() : the most memory held on device d between
 *  fractions f0 and f1 (0..1) of the run, at bucket resolution. */
uint64_t cp_series_max_in(const cp_series *s, int d, double f0, double f1);

/*! cp_series_copy_class() : enum cp_copy_class of COPY record r, or -1
 *  when neither end is host memory nor another GPU (device to device). */
int cp_series_copy_class(const struct cp_record *r);

/*! cp_series_copy_blocks() : whether COPY record r kept its caller waiting
 *  for the copy (its duration is time blocked): a synchronous copy, or an
 *  asynchronous one with pageable host memory, which the driver stages and
 *  returns from only once staged (host to device) or done (device to host).
 *  The stats' "blocked in sync copies", the page's black line and `diff`
 *  all count these. */
int cp_series_copy_blocks(const struct cp_record *r);

/*! cp_holder_name() : "framework tensors", "CUDA libraries", ... */
const char *cp_holder_name(int h);

/*! cp_copy_class_name() : "pinned", "pageable", "peer". */
const char *cp_copy_class_name(int c);

#endif /* CP_SERIES_H */
