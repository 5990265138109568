/*
 * cp_env.h - the shim's configuration: every CUPROBE_* environment variable,
 * parsed once per process image.
 */
#ifndef CP_ENV_H
#define CP_ENV_H

#include <stdint.h>

struct cp_config {
    const char *output;        /* CUPROBE_OUTPUT pattern, never NULL */
    unsigned flush_ms;         /* CUPROBE_FLUSH_MS, 1..10000, default 100 */
    int zstd_level;            /* CUPROBE_ZSTD_LEVEL, 1..19, default 3 */
    int log_level;             /* CUPROBE_LOG, 0..3, default 1 */
    unsigned stack_depth;      /* CUPROBE_STACK_DEPTH, 0..128, default 24 */
    int python;                /* CUPROBE_PYTHON, 0/1, default 1 */
    unsigned python_depth;     /* CUPROBE_PYTHON_DEPTH, 0..128, default 64 */
    int stack_cache;           /* CUPROBE_STACK_CACHE, 0/1, default 1 (x86-64 only) */
    int tsc;                   /* CUPROBE_TSC, 0/1, default 1: times from the CPU counter */
    long root_pid;             /* CUPROBE_ROOT_PID, 0 when unset */
    uint64_t run_id;           /* CUPROBE_RUN_ID (hex), 0 when unset */
    int disable;               /* CUPROBE_DISABLE, 0/1, default 0 */
    int signals;               /* CUPROBE_SIGNALS, 0/1, default 1 */
    uint64_t backlog_bytes;    /* CUPROBE_BACKLOG_MB (default 256) in bytes */
    const char *procfs_root;   /* CUPROBE_PROCFS_ROOT, default "/proc": meminfo and
                                * self/cgroup of the host-memory samples (tests) */
    const char *sysfs_root;    /* CUPROBE_SYSFS_ROOT, default "/sys": the cgroup files */
    const char *kmsg;          /* CUPROBE_KMSG: a file read instead of /dev/kmsg after a
                                * fatal error (tests), NULL when unset */
};

/*! cp_config() : the parsed configuration.  Parses the environment on the
 *  first call (any thread, any constructor order); odd values get one
 *  warning on stderr naming the variable and the value, and the default.
 *  @return : a pointer valid for the life of the process image; never NULL. */
const struct cp_config *cp_config(void);

/*! cp_config_reload() : parse the environment again (tests only). */
void cp_config_reload(void);

#endif /* CP_ENV_H */
