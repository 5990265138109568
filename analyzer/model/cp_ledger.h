/*
 * cp_ledger.h - the tables a user reaches for, kept per process while its
 * records stream past (cp_ledger.c, cp_ledger_sites.c): driver calls per
 * API (count, errors, time in the driver), per device copies by direction
 * and class and the time blocked in synchronous ones, and device memory by
 * call site as heaptrack keeps it (held at the device's peak and at each
 * OOM, allocations, temporary allocations); PyTorch's segments at each of
 * its OOMs; when each call site was first seen.  `cuprobe stats`, `cuprobe
 * diff` and the HTML page read it.
 *
 * Everything is bounded by APIs, devices and call sites, never by the
 * trace's length; the per-site timelines (the page's highlight of a site)
 * by CP_LG_SERIES_SITES sites more.
 */
#ifndef CP_LEDGER_H
#define CP_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include "cp_map.h"
#include "cp_series.h"

struct cp_proc;
struct cp_record;
struct cp_dec;

#define CP_LG_HIST 1920         /* log buckets of call durations (cp_lg_hist_ix) */
#define CP_LG_OOMS 32           /* OOMs kept per process */
#define CP_LG_OOM_TOP 20        /* sites kept per OOM */
#define CP_LG_SEGS 64           /* PyTorch segments kept per OOM (the largest) */
#define CP_LG_SEG_FREE 32       /* free blocks kept per segment */
#define CP_LG_SERIES_SITES 512  /* sites with a timeline, per process (the first ones) */

/* Direction of a copy, from its two ends. */
enum cp_lg_dir { CP_LG_HTOD = 0, CP_LG_DTOH, CP_LG_DTOD, CP_LG_HTOH, CP_LG_DIR_N };

/* Class of a copy: the copy lane's (enum cp_copy_class), then device-only. */
enum { CP_LG_CLS_DEVICE = CP_CC_N, CP_LG_CLS_N };

/* One API's calls as the trace recorded them. */
typedef struct cp_lg_api {
    const char *name;           /* interned; NULL until cp_ledger_finish() */
    uint64_t calls, errors;     /* records naming it (launches: their counts) */
    uint64_t timed, total_ns, min_ns, max_ns;
    uint32_t *hist;             /* CP_LG_HIST counts, NULL until a timed call */
} cp_lg_api;

/* One device of the process. */
typedef struct cp_lg_dev {
    uint64_t copies[CP_LG_DIR_N][CP_LG_CLS_N], copy_bytes[CP_LG_DIR_N][CP_LG_CLS_N];
    uint64_t blocked_ns, n_blocking;    /* synchronous copies */
    uint64_t held, peak, peak_ts;       /* device memory by the sites' account */
    uint32_t epoch;                     /* bumped at each new peak */
    int seen;
} cp_lg_dev;

/* Device memory allocated at one call site on one device. */
typedef struct cp_lg_site {
    uint64_t stack;
    int dev;
    uint32_t epoch;             /* at_peak is the value at this peak of dev */
    uint64_t live, at_peak, max_live;
    uint64_t n_alloc, alloc_bytes, n_free, n_temp, temp_bytes;
    int32_t ser;                /* its timeline (CP_SER_N values), -1: none */
    int32_t ser_last;           /* last bucket written */
} cp_lg_site;

typedef struct cp_lg_top {
    uint64_t stack, bytes;
} cp_lg_top;

/* A segment of PyTorch's caching allocator at an OOM (torch.oom). */
typedef struct cp_lg_seg {
    uint64_t address, total, allocated, active;
    uint32_t n_free, n_free_all;    /* free blocks kept / recorded */
    uint64_t free[CP_LG_SEG_FREE];  /* their sizes, address order */
} cp_lg_seg;

typedef struct cp_lg_oom {
    uint64_t ts, request;
    int dev;
    int driver;                 /* an OOM record of the driver (else the framework's only) */
    cp_lg_top top[CP_LG_OOM_TOP];   /* the sites holding the most, most first */
    int n_top;
    cp_lg_seg *seg;             /* NULL when the companion recorded none */
    int n_seg, n_seg_all;
} cp_lg_oom;

typedef struct cp_ledger {
    int timeline;               /* keep per-site timelines (the page) */
    cp_lg_api *api;             /* by API id */
    size_t n_api;
    cp_lg_dev dev[64];
    cp_lg_site *site;
    size_t n_site, cap_site;
    cp_map site_ix;             /* stack << 7 | (dev + 1) -> index + 1 */
    cp_map first_ts;            /* stack -> ts of the first record naming it */
    cp_lg_oom oom[CP_LG_OOMS];
    int n_oom;
    uint64_t *ser;              /* CP_SER_N values per tracked site */
    int n_ser;
    uint64_t ser_width;         /* the process's series bucket width they follow */
    /* what the FREE (or context end) being read releases: noted before the
     * model forgets it, applied after the timeline moved to its bucket */
    struct cp_lg_gone { uint64_t size, stack; int dev, temp; } *gone;
    size_t n_gone, cap_gone;
    int err;                    /* out of memory once: the tables are partial */
} cp_ledger;

/*! cp_ledger_new() : an empty ledger; timeline: keep the per-site timelines
 *  (read by the page, off for stats and diff).  @return : it, or NULL. */
cp_ledger *cp_ledger_new(int timeline);

/*! cp_ledger_free() : free lg (NULL is fine). */
void cp_ledger_free(cp_ledger *lg);

/*! cp_ledger_pre() : record r of p, before the model applies it (a FREE's
 *  allocation and a context's last allocations are still known then). */
void cp_ledger_pre(cp_ledger *lg, struct cp_proc *p, const struct cp_record *r);

/*! cp_ledger_post() : record r of p, after the model and its timeline
 *  applied it. */
void cp_ledger_post(cp_ledger *lg, struct cp_proc *p, const struct cp_record *r);

/*! cp_ledger_seed() : lg (fed nothing yet) starts from p's live device
 *  memory as its sites' (a window opens, cp_window.h): what each site and
 *  device holds, the devices' peaks at it; no allocation counted. */
void cp_ledger_seed(cp_ledger *lg, struct cp_proc *p);

/*! cp_ledger_finish() : at the end of p's trace, while its decoder d is
 *  open: name the APIs, settle what was held at each peak and fill the
 *  timelines to the end. */
void cp_ledger_finish(cp_ledger *lg, struct cp_proc *p, const struct cp_dec *d);

/*! cp_ledger_first_ts() : when a record first named call site stack (trace
 *  clock, ns), 0 when none did. */
uint64_t cp_ledger_first_ts(const cp_ledger *lg, uint64_t stack);

/*! cp_ledger_series() : site's most held per bucket of the process's series
 *  (cp_series_n() values), or NULL when it has no timeline. */
const uint64_t *cp_ledger_series(const cp_ledger *lg, const cp_lg_site *site);

/*! cp_ledger_median() : the median duration of a's timed calls, from its
 *  histogram (within about 3%), clamped to [min, max]; 0 when none. */
uint64_t cp_ledger_median(const cp_lg_api *a);

/*! cp_ledger_hist_add() : add histogram src into dst (CP_LG_HIST counts). */
void cp_ledger_hist_add(uint32_t *dst, const uint32_t *src);

/*! cp_lg_dir_name() : "HtoD", "DtoH", "DtoD", "HtoH".  cp_lg_cls_name() :
 *  "pinned", "pageable", "peer", "device". */
const char *cp_lg_dir_name(int dir);
const char *cp_lg_cls_name(int cls);

/* --- call sites (cp_ledger_sites.c) ----------------------------------------------- */

/*! cp__lg_site_alloc() / cp__lg_site_free() : (ledger internal) device
 *  memory of size at stack on dev taken or given back at ts, p's timeline
 *  in its bucket of ts; temp: the free came with no other memory event
 *  since its allocation. */
void cp__lg_site_alloc(cp_ledger *lg, struct cp_proc *p, uint64_t stack, int dev,
                       uint64_t size);
void cp__lg_site_free(cp_ledger *lg, struct cp_proc *p, uint64_t stack, int dev,
                      uint64_t size, int temp);

/*! cp__lg_oom_sites() : (ledger internal) note the sites holding the most
 *  on o->dev into o. */
void cp__lg_oom_sites(cp_ledger *lg, cp_lg_oom *o);

/*! cp__lg_sites_finish() : (ledger internal) settle at_peak and the
 *  timelines at the end of p's trace. */
void cp__lg_sites_finish(cp_ledger *lg, struct cp_proc *p);

/*! cp__lg_torch_oom() : (ledger internal) a torch.oom payload at ts: its
 *  segments onto the last OOM of its device that has none (or a new one). */
void cp__lg_torch_oom(cp_ledger *lg, const char *json, size_t n, uint64_t ts);

/*! cp_ledger_sort_sites() : the indices of lg's sites with dev (-1: any)
 *  ordered by key (0 held at the peak, 1 allocations, 2 temporary
 *  allocations, 3 most held at any time), largest first, ties by stack;
 *  only those with a non-zero key.  @return : the number written to out
 *  (at most cap). */
size_t cp_ledger_sort_sites(const cp_ledger *lg, int dev, int key, size_t *out, size_t cap);

/* The sites of one device merged by label: the stacks that print alike
 * (the same file:line and function reached through other frames) are one
 * row, as in the report's findings. */
typedef struct cp_lg_row {
    const char *label;
    uint64_t stack;             /* the first of its stacks (the most by key) */
    uint64_t at_peak, n_alloc, alloc_bytes, n_free, n_temp, temp_bytes;
    int n_stacks;
} cp_lg_row;

/*! cp_ledger_rows() : p's sites on device d merged by label (cp_site_label),
 *  ordered by key as cp_ledger_sort_sites(), the first top of them.
 *  @return : their number, with *out (free it); 0 with *out NULL when none
 *  or out of memory. */
size_t cp_ledger_rows(struct cp_proc *p, int d, int key, size_t top, cp_lg_row **out);

#endif /* CP_LEDGER_H */
