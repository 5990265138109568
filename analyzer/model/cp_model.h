/*
 * cp_model.h - the report's state model of one traced process, fed record
 * by record in trace order: environment (header, driver, devices, loaded
 * libraries), contexts and streams, live memory by device and kind, call
 * sites.  Checks (check_*.c) read it while the records stream past and keep
 * their own per-process state; nothing grows with the trace's length, only
 * with what is live (allocations, streams, contexts) and with the number of
 * distinct call sites.
 */
#ifndef CP_MODEL_H
#define CP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cp_decode.h"
#include "cp_format.h"
#include "cp_live.h"
#include "cp_map.h"
#include "cp_sym.h"

#define CP_MAX_DEV 64

/* Where device memory is held: the accounting classes of the oom check. */
enum cp_hold {
    CP_HOLD_DEVICE = 0,     /* cuMemAlloc, cuMemAllocPitch */
    CP_HOLD_POOL = 1,       /* stream-ordered: cuMemAllocAsync, FromPool */
    CP_HOLD_VMM = 2,        /* cuMemCreate on a device */
    CP_HOLD_MANAGED = 3,    /* cuMemAllocManaged */
    CP_HOLD_N = 4,
};

/* enum cp_fw (frameworks with a caching allocator) is the known-library
 * table's, cp_libs.h. */

/* API calls the model and checks single out. */
enum cp_api_kind {
    CP_API_OTHER = 0, CP_API_INIT, CP_API_DEVICE_GET_COUNT, CP_API_DEVICE_GET,
    CP_API_MODULE_LOAD, CP_API_LAUNCH, CP_API_GET_PROC,
};

typedef struct cp_devinfo {
    int seen;
    const char *name;           /* interned (cp_sym_intern); "" when a summary named
                                 * none; NULL while not seen */
    uint8_t uuid[16];
    uint64_t pci_domain, pci_bus, pci_device, cc_major, cc_minor, total_mem;
    uint64_t pageable_access, host_page_tables, sm_count;
} cp_devinfo;

typedef struct cp_devmem {
    uint64_t held[CP_HOLD_N];
    uint64_t held_total, peak_total, peak_ts;
    uint64_t max_request;       /* largest single successful request */
    uint64_t n_alloc, alloc_bytes, n_free;
    uint64_t vmm_mapped;        /* bytes mapped into VA */
    uint64_t pinned_like;       /* (unused by device totals) */
    int has_ctx;                /* a context was created or retained here */
    uint64_t ctx_stack, ctx_ts; /* where the first one was */
    uint64_t first_alloc_stack;
    uint64_t launches;          /* kernel launches counted on it (XDEV ctx) */
} cp_devmem;

/* Allocations of one call site made past the live bound (cp_model_max_live):
 * counted, not kept one by one. */
typedef struct cp_over {
    uint64_t count, bytes;
} cp_over;

typedef struct cp_stream_info {
    uint64_t ctx;
    int dev;
} cp_stream_info;

typedef struct cp_lib {
    const char *name;           /* short name: "libcudart", "libcublas", ... */
    const char *path;           /* first path seen (interned) */
} cp_lib;

typedef struct cp_env_kv {
    char *name, *value;
} cp_env_kv;

/* A process's identity in a multi-process job (cp_run.c), from the launcher
 * variables in its trace header; -1 where not set. */
typedef struct cp_ident {
    long rank, local_rank, world_size, local_world_size, group_rank;
    const char *rank_var;       /* the variable rank came from ("RANK", "SLURM_PROCID"...) */
} cp_ident;

/* Host memory samples kept for the RSS trend of a killed process. */
#define CP_HM_RING 16

/* The last events of a trace, kept for a process that was killed. */
#define CP_LAST_EVENTS 6
typedef struct cp_last_event {
    uint64_t ts, api_id;
    const char *api;            /* interned by cp_model_last_names() */
    uint8_t type;
    int16_t dev;
    uint64_t bytes;
} cp_last_event;

typedef struct cp_proc {
    int index;                  /* position among the traces given */
    const char *file;           /* the path as given */
    /* header */
    uint64_t pid, ppid, t0, t_last, page_size;
    int root;                   /* the process `cuprobe run` started */
    int forked_image;           /* 1 a fork of its parent's image, no exec since;
                                 * 0 started by exec; -1 not recorded (older trace) */
    char *exe, *cmdline, *host;
    cp_env_kv *env;
    size_t n_env;
    /* how the trace ended */
    int complete;               /* END seen */
    uint64_t end_reason;
    int64_t end_status;
    char *error;                /* "FILE: offset N: reason" or NULL */
    int truncated;
    int killed;                 /* the trace decodes cleanly to a cut, with no END */
    /* how `cuprobe run` saw a process end that wrote no END (cp_discover.h):
     * reaped 1 when known, then reaped_signo > 0 the signal it died of, else
     * reaped_code its exit status (it exited without running exit handlers:
     * quick_exit, a raw exit_group) */
    int reaped, reaped_signo, reaped_code;
    /* NOSPACE: the file system filled up at nospace_ts (0: never) and the
     * shim stopped writing; what it lost then. */
    uint64_t nospace_ts, nospace_err, nospace_records, nospace_bytes;
    /* FD_LOST: the program closed (1) or replaced (2) the trace's
     * descriptor, found at fdlost_ts (0: never; the first time kept), and
     * the shim went on in the file opened again; how many times. */
    uint64_t fdlost_ts, fdlost_how, fdlost_n;
    cp_last_event last[CP_LAST_EVENTS];
    unsigned n_last;            /* events seen (ring index = n_last % CP_LAST_EVENTS) */
    uint64_t records, lost, dropped;
    uint64_t signo;             /* the signal it died of (END reason signal), 0 if none */
    /* driver and runtime */
    int driver_seen;
    int64_t driver_version;
    uint64_t driver_result;
    int64_t runtime_version;    /* 0 when unknown */
    int dlopen_seen, dlopen_ok;
    uint64_t lib_kind;
    char *lib_path, *lib_error;
    int init_ok;
    uint64_t init_ts, init_calls, init_fail_result;
    uint64_t device_count_zero; /* cuDeviceGetCount said 0 (no DEVICE records) */
    /* devices */
    /* [CP_MAX_DEV] each, by ordinal: one block from a pool whose untouched
     * pages cost nothing (cp_zpool.h), as a process uses a few of them */
    cp_devinfo *dev;
    int n_dev;                  /* highest ordinal seen + 1 */
    cp_devmem *mem;
    uint64_t held_all;          /* the sum of mem[].held_total, kept by the model */
    /* memory */
    cp_lives live_dev;          /* by device pointer (device, async, pool, managed) */
    cp_lives live_host;         /* by host pointer (pinned, registered) */
    cp_lives live_vmm;          /* by VMM handle */
    /* Past cp_model_max_live() live allocations, a new one is counted by
     * call site only: its memory is held as any other, but its address is
     * not kept, so its free cannot be told from a free of an unknown
     * address.  While some are live, such a free is taken for one of them
     * (its size from the FREE record). */
    cp_map live_over;           /* stack id -> cp_over */
    uint64_t over_n, over_bytes;            /* allocations counted so */
    uint64_t over_freed, over_freed_bytes;  /* frees taken for them */
    cp_map vmm_va;              /* reserved VA base -> size */
    uint64_t vmm_reserved;
    uint64_t host_pinned;       /* pinned + registered bytes held */
    /* host memory (HOSTINFO, HOSTMEM: cp_model_host.c); 0 where the trace
     * has none or the shim could not read it.  Limits: */
    uint64_t hm_mem_total, hm_swap_total, hm_cg_limit;
    char *hm_cg_path;           /* the cgroup whose limit binds, NULL when none found */
    /* the last sample, and the largest RSS of any */
    uint64_t hm_n, hm_ts, hm_rss, hm_rss_shared, hm_pinned, hm_avail, hm_cg_usage;
    uint64_t hm_peak_rss, hm_peak_ts;
    /* the last CP_HM_RING samples' time and RSS (ring index = hm_n % CP_HM_RING):
     * the growth just before a kill.  Not in summaries: only the killed
     * check reads it, before a summary is written. */
    uint64_t hm_ring_ts[CP_HM_RING], hm_ring_rss[CP_HM_RING];
    uint32_t mem_seq;           /* alloc/free events so far */
    uint64_t n_alloc_ok, n_launch, n_copy;
    /* contexts and streams */
    cp_map ctxs;                /* ctx -> int device */
    cp_map streams;             /* stream -> cp_stream_info */
    int primary_refs[CP_MAX_DEV];
    uint64_t primary_ctx[CP_MAX_DEV];
    uint8_t *api_kind;          /* CP_API_KIND_IDS: api id -> enum cp_api_kind + 1, 0 =
                                 * not looked up; made at the first lookup, dropped
                                 * with the live state (a process read back has none) */
    /* libraries and frameworks */
    cp_lib *libs;
    size_t n_libs, cap_libs;
    unsigned fw;                /* enum cp_fw bits */
    /* framework records: a split JSON payload being reassembled, and the
     * complete one of the current record (valid while checks see it) */
    char *fw_kind;
    char *fw_buf;
    size_t fw_len, fw_cap;
    int fw_next, fw_total;
    const char *fw_ready_kind, *fw_ready_json;
    size_t fw_ready_len;
    /* call sites */
    cp_stacks stacks;
    /* the checks running on this trace (owned by the registry, cp_checks.c) */
    struct cp_check_run *checks;
    /* fork bookkeeping (parent side) */
    uint64_t *forks;            /* child pids forked after CUDA init */
    size_t n_forks;
    uint64_t fork_before_init;
    uint64_t first_cuda_ts;     /* first call of any kind recorded (child side) */
    uint64_t first_cuda_stack;
    const char *first_cuda_api;
    /* the run (cp_run.c, after every trace was read) */
    cp_ident id;
    struct cp_proc *parent;     /* the traced image that forked or exec'd it, NULL if none */
    struct cp_proc *next_image; /* the image this one exec'd into (same pid) */
    int exec_only;              /* it only exec'd: next_image speaks for it */
    int used_gpu;               /* allocated, copied or launched after a successful cuInit */
    int main_dev;               /* the device it worked on (most memory, then launches), -1 */
    const cp_dec *dec;          /* while the trace is being read */
    /* the allocation the current FREE record releases, looked up once
     * for every check that reads it before the model drops it, and for
     * the model, which removes it from its slot without a second probe */
    const cp_record *freeing_rec;
    const cp_live *freeing;
    cp_lives *freeing_map;
    size_t freeing_i;
    /* for the record just applied, when an ALLOC: the live entry the model
     * made for it (NULL otherwise); valid until the next record */
    cp_live *made;
    /* the memory and copy timeline, NULL when none: the record loop feeds
     * it beside the model (cp_series.h), the model never looks inside */
    struct cp_series *series;
    /* PyTorch's backward passes (cp_backward.h), NULL until one is seen */
    struct cp_bw *bw;
    /* the lines that allocated what frameworks' pools hold (cp_attrib.h),
     * NULL until an attribution record is seen */
    struct cp_attrib *attrib;
    /* the tables of cp_ledger.h when asked for (NULL otherwise): fed
     * beside the model by the record loop, which also frees them; the
     * model never looks inside */
    struct cp_ledger *ledger;
    /* the window of the run looked at (cp_window.h): where it opened
     * (0: at the trace's start; an allocation before it is not the
     * window's), the device allocations made before it (out of mem[]'s
     * counts); the window ended before the trace did (win_cut: not read
     * further, its end not seen), or held none of its records (win_out) */
    uint64_t win_from, n_alloc_before;
    int win_cut, win_out;
} cp_proc;

/*! cp_proc_new() : an empty process for trace `file` (index among traces).
 *  @return : the process or NULL when out of memory. */
cp_proc *cp_proc_new(const char *file, int index);

/*! cp_proc_free() : free everything the process holds (NULL is fine). */
void cp_proc_free(cp_proc *p);

/* The live-allocation bound by default: about 1.3 GB of the model's
 * entries (cp_live.h: 56 to 64 bytes each). */
#define CP_MAX_LIVE_DEFAULT 20000000ull
/* The most it may be: entry numbers are 32 bits (cp_live.h). */
#define CP_MAX_LIVE_MOST 4000000000l

/*! cp_model_max_live() : from now on (process-wide, before any trace is
 *  read), a process holding n live allocations counts further ones by call
 *  site only (cp_proc.live_over); 0 restores the default. */
void cp_model_max_live(uint64_t n);

/*! cp_model_max_live_get() : the bound in force. */
uint64_t cp_model_max_live_get(void);

/*! cp_model_feed() : apply record r (from decoder d) to p's model, and
 *  set p->made.  Called between the checks that read r before the model
 *  and those that read it after.  @return : 0, or -ENOMEM. */
int cp_model_feed(cp_proc *p, const cp_dec *d, const cp_record *r);

/*! cp_model_api_kind() : enum cp_api_kind of the API of event r. */
int cp_model_api_kind(cp_proc *p, const cp_record *r);

/*! cp_model_ctx_ending() : whether record r (a CTX record, before the model
 *  applied it) ends a context: cuCtxDestroy, the last release of a primary
 *  context, or its reset.  @return : 1 with *ctx and *dev set, else 0. */
int cp_model_ctx_ending(const cp_proc *p, const cp_record *r, uint64_t *ctx, int *dev);

/*! cp__model_library() : (model internal) note a loaded module's path:
 *  known CUDA libraries and caching-allocator frameworks. */
void cp__model_library(cp_proc *p, const char *path);

/*! cp__model_dlopen() : (model internal) a DLOPEN record: how the driver
 *  library was loaded, or why not. */
void cp__model_dlopen(cp_proc *p, const cp_record *r);

/*! cp__model_framework() : (model internal) a CP_REC_FRAMEWORK record:
 *  sets p->fw_ready_* when a payload is complete.  @return : 0 or -ENOMEM. */
int cp__model_framework(cp_proc *p, const cp_record *r);

/*! cp__model_end() : (model internal) how the trace and the process ended:
 *  a NOSPACE, FD_LOST or END record. */
void cp__model_end(cp_proc *p, const cp_record *r);

/*! cp__model_host() : (model internal) a HOSTINFO or HOSTMEM record.
 *  @return : 0 or -ENOMEM. */
int cp__model_host(cp_proc *p, const cp_record *r);

/*! cp_model_host_trend() : how RSS moved over the host memory samples of
 *  the last window_ns before the last one (as far back as the samples kept
 *  reach).  @return : 1 with *d_rss (bytes, may be negative) and *d_ns
 *  (> 0), or 0 when fewer than two samples fall in it. */
int cp_model_host_trend(const cp_proc *p, uint64_t window_ns, int64_t *d_rss, uint64_t *d_ns);

/*! cp__model_freeing_find() : cp_model_freeing() when r was not asked
 *  about yet: the lookup.  @return : as cp_model_freeing(). */
const cp_live *cp__model_freeing_find(cp_proc *p, const cp_record *r);

/*! cp_model_freeing() : for a FREE record r not yet applied, the live
 *  allocation it releases (NULL when unknown or the free failed).  Valid
 *  until the model applies r.  Inline: four callers ask about each FREE
 *  (memory-growth and fragmentation before the model, the timeline and
 *  the model), and only the first looks it up. */
static inline const cp_live *cp_model_freeing(cp_proc *p, const cp_record *r)
{
    return p->freeing_rec == r ? p->freeing : cp__model_freeing_find(p, r);
}

/*! cp_model_last_names() : name the APIs of p's last events while its
 *  decoder d is still open (a killed process's report lists them). */
void cp_model_last_names(cp_proc *p, const cp_dec *d);

/*! cp_proc_env() : the value of environment variable name in the header,
 *  or NULL when the traced process did not have it. */
const char *cp_proc_env(const cp_proc *p, const char *name);

/*! cp_proc_hold_total() : device memory p holds on dev, all kinds. */
uint64_t cp_proc_hold_total(const cp_proc *p, int dev);

/*! cp_dev_name() : "GPU 1 (GPU-1a2b..., PCI 0000:3b:00.0)" into buf: the
 *  logical ordinal with its physical identity when the trace has it. */
const char *cp_dev_name(const cp_proc *p, int dev, char *buf, size_t cap);

/*! cp_dev_uuid() : "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" into buf ("" if
 *  unknown).  cp_dev_pci() : "dddd:bb:dd.0" into buf ("" if unknown). */
const char *cp_dev_uuid(const cp_proc *p, int dev, char *buf, size_t cap);
const char *cp_dev_pci(const cp_proc *p, int dev, char *buf, size_t cap);

/*! cp_hold_of_kind() : enum cp_hold of a device allocation kind, or -1 for
 *  host kinds.  Inline: the model, its timeline (cp_series.c) and the
 *  checks all ask, and the timeline must not call back into the model. */
static inline int cp_hold_of_kind(uint64_t kind)
{
    switch (kind) {
    case CP_MK_DEVICE: return CP_HOLD_DEVICE;
    case CP_MK_ASYNC:
    case CP_MK_POOL: return CP_HOLD_POOL;
    case CP_MK_VMM_PHYS: return CP_HOLD_VMM;
    case CP_MK_MANAGED: return CP_HOLD_MANAGED;
    default: return -1;
    }
}

/*! cp_model_drop_live() : free what only reading the trace needs (live
 *  allocations, VMM ranges, streams, contexts) once every check has
 *  finished; what stays is bounded by call sites. */
void cp_model_drop_live(cp_proc *p);

#endif /* CP_MODEL_H */
