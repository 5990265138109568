/*
 * cp_env.c - CUPROBE_* configuration.
 *
 * Parsing happens once, lazily, because other constructors in the shim may
 * ask for the configuration before ours ran (constructor order inside one
 * shared object follows link order, which nobody should rely on).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_env.h"
#include "cp_io.h"
#include "cp_rec.h"

static struct cp_config g_cfg;
static pthread_once_t g_cfg_once = PTHREAD_ONCE_INIT;

/* Warnings during parsing go straight to stderr: the log level itself may
 * be what is being parsed, and tracing is not running yet. */
static void cp_env_warn(const char *name, const char *val, const char *why,
                        long long def)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf,
                     "[cuprobe %d] warning: %s=\"%s\" ignored (%s); using %lld\n",
                     (int)getpid(), name, val, why, def);
    if (n > 0)
        cp__write_all(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* Read an integer variable in [lo, hi]; anything else warns and gives def. */
static long long cp_env_int(const char *name, long long lo, long long hi,
                            long long def)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return def;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end) {
        cp_env_warn(name, s, "not a number", def);
        return def;
    }
    if (v < lo || v > hi) {
        char why[96];
        snprintf(why, sizeof why, "out of range %lld..%lld", lo, hi);
        cp_env_warn(name, s, why, def);
        return def;
    }
    return v;
}

/* A 64-bit hex variable (the run id `cuprobe run` makes); 0 when unset or
 * odd (one warning). */
static uint64_t cp_env_hex(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 16);
    if (errno || end == s || *end || *s == '-' || *s == '+') {
        cp_env_warn(name, s, "not a hexadecimal number", 0);
        return 0;
    }
    return (uint64_t)v;
}

static void cp_env_parse(void)
{
    const char *out = getenv("CUPROBE_OUTPUT");
    g_cfg.output = (out && *out) ? out : "cuprobe-%p.trace";
    g_cfg.flush_ms = (unsigned)cp_env_int("CUPROBE_FLUSH_MS", 1, 10000, 100);
    g_cfg.zstd_level = (int)cp_env_int("CUPROBE_ZSTD_LEVEL", 1, 19, 3);
    g_cfg.log_level = (int)cp_env_int("CUPROBE_LOG", 0, 3, 1);
    g_cfg.stack_depth = (unsigned)cp_env_int("CUPROBE_STACK_DEPTH", 0, 128, 24);
    g_cfg.python = (int)cp_env_int("CUPROBE_PYTHON", 0, 1, 1);
    g_cfg.python_depth = (unsigned)cp_env_int("CUPROBE_PYTHON_DEPTH", 0, 128, 64);
    g_cfg.stack_cache = (int)cp_env_int("CUPROBE_STACK_CACHE", 0, 1, 1);
    g_cfg.tsc = (int)cp_env_int("CUPROBE_TSC", 0, 1, 1);
    g_cfg.root_pid = (long)cp_env_int("CUPROBE_ROOT_PID", 0, INT_MAX, 0);
    g_cfg.run_id = cp_env_hex("CUPROBE_RUN_ID");
    g_cfg.disable = (int)cp_env_int("CUPROBE_DISABLE", 0, 1, 0);
    g_cfg.signals = (int)cp_env_int("CUPROBE_SIGNALS", 0, 1, 1);
    g_cfg.backlog_bytes =
        (uint64_t)cp_env_int("CUPROBE_BACKLOG_MB", 1, 65536, 256) << 20;
    /* The doctor's variables: tests point both at fake trees to give the
     * host-memory samples a cgroup limit (statm stays the real one). */
    const char *proc = getenv("CUPROBE_PROCFS_ROOT"), *sys = getenv("CUPROBE_SYSFS_ROOT");
    g_cfg.procfs_root = (proc && *proc) ? proc : "/proc";
    g_cfg.sysfs_root = (sys && *sys) ? sys : "/sys";
    const char *kmsg = getenv("CUPROBE_KMSG");
    g_cfg.kmsg = (kmsg && *kmsg) ? kmsg : NULL;
}

const struct cp_config *cp_config(void)
{
    pthread_once(&g_cfg_once, cp_env_parse);
    return &g_cfg;
}

void cp_config_reload(void)
{
    pthread_once(&g_cfg_once, cp_env_parse);
    cp_env_parse();
}
