/*
 * cp_fw_jax.h - the framework companion's JAX records (jax.periodic,
 * jax.exit, jax.oom; docs/framework.md): XLA's allocator on each device as
 * Device.memory_stats() reports it, and the out-of-memory error XLA raised.
 */
#ifndef CP_FW_JAX_H
#define CP_FW_JAX_H

#include <stdint.h>

#include "cp_fw.h"

#define CP_JAX_DEVS 8

/* One device's allocator (a devices[] entry). */
typedef struct cp_jax_dev {
    int64_t id;                 /* JAX's device id */
    int64_t hw;                 /* local_hardware_id: the CUDA ordinal, -1 unknown */
    uint64_t in_use, peak, limit, largest_free, pool_bytes, num_allocs, largest_alloc;
    int have_limit;             /* bytes_limit reported */
    int have_free;              /* largest_free_block_bytes reported */
    int have_pool;              /* pool_bytes reported */
} cp_jax_dev;

/* A jax.oom record. */
typedef struct cp_jax_oom {
    uint64_t request;           /* from the message; 0: it names none */
    int64_t ordinal;            /* the device the message names, -1 none */
    cp_jax_dev dev[CP_JAX_DEVS];
    int n_dev;
    char hook[48];              /* "sys.monitoring" (as raised) or "exit" (uncaught) */
    char type[96];
    char line[256];             /* the message's first line */
    char version[48];
    char user_file[256], user_func[96];
    int64_t user_line;          /* 0: no frame of the program's own */
    /* XLA's settings as the process had them ("" unset); fraction_var is
     * the variable that set the fraction */
    char preallocate[16], fraction[32], fraction_var[32], allocator[24];
} cp_jax_oom;

/*! cp_jax_devs_parse() : the devices[] of a jax.* record (the JSON object
 *  rec) into out, at most cap.  @return : how many. */
int cp_jax_devs_parse(cp_jv rec, cp_jax_dev *out, int cap);

#define CP_JAX_AT_FRAMES 8

/* Where the program was when a jax.periodic sample was taken (its "at"):
 * the innermost frame of the program's own code first, then its callers. */
typedef struct cp_jax_at {
    int n;
    char file[CP_JAX_AT_FRAMES][512];
    char func[CP_JAX_AT_FRAMES][128];
    int64_t line[CP_JAX_AT_FRAMES];
} cp_jax_at;

/*! cp_jax_at_parse() : the "at" of a jax.periodic record (the JSON object
 *  rec) into *at, at most CP_JAX_AT_FRAMES frames; frames without a file
 *  or a line are left out.  @return : the frames read, 0 when it names
 *  none. */
int cp_jax_at_parse(cp_jv rec, cp_jax_at *at);

/*! cp_jax_request() : the bytes an XLA out-of-memory message says were
 *  asked for: "Out of memory while trying to allocate N bytes", "... to
 *  allocate 26.21GiB with allocator GPU_0_bfc on device D" (rounded as XLA
 *  printed it), or "Failed to allocate request for 2.99GiB (3206250496B) on
 *  device ordinal D" (with a device, *ordinal = D, else -1).
 *  @return : the bytes, 0 when none. */
uint64_t cp_jax_request(const char *msg, int64_t *ordinal);

/*! cp_jax_oom_parse() : a jax.oom record.  @return : 0, or -1 when it is
 *  not one (no message). */
int cp_jax_oom_parse(const char *json, size_t n, cp_jax_oom *o);

/*! cp_jax_oom_device() : the index in o->dev of the device whose pool
 *  failed: the one the message names, else the only one, else the one
 *  with the least room under its limit.  @return : the index, -1 none. */
int cp_jax_oom_device(const cp_jax_oom *o);

#endif /* CP_FW_JAX_H */
