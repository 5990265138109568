/*
 * cp_header.c - what a new trace file starts with: the CP_REC_HEADER record
 * (process, host, command line, the environment that matters).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_env.h"
#include "cp_rec.h"
#include "cp_writer.h"

#define CP_SHIM_VERSION CP_VERSION      /* the Makefile's VERSION */
#define CP_CMDLINE_MAX (1u << 20)

extern char **environ;

/* Environment variables worth keeping with the trace (besides CUPROBE_*):
 * they decide device numbering, allocator behaviour and ranks. */
static const char *const cp_env_keep[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING", "RANK", "LOCAL_RANK", "WORLD_SIZE",
    "LOCAL_WORLD_SIZE", "GROUP_RANK", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",
    "SLURM_NODEID", "SLURM_JOB_ID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
    "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING", "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR",
    "CUPY_GPU_MEMORY_LIMIT", "NCCL_DEBUG", "LD_LIBRARY_PATH", "LD_PRELOAD",
};

/* Set by the fork hook's child side: this image is a copy of its parent's,
 * not one started by exec (the HEADER says so, for fork-after-init). */
int cp__image_forked;

/* /proc/self/cmdline into a malloc'd buffer (NUL-separated args). */
static char *cp_read_cmdline(size_t *len)
{
    *len = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096;
    char *buf = malloc(cap);
    while (buf) {
        ssize_t r = read(fd, buf + *len, cap - *len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        *len += (size_t)r;
        if (*len == cap) {
            if (cap >= CP_CMDLINE_MAX)
                break;
            char *n = realloc(buf, cap * 2);
            if (!n)
                break;
            buf = n;
            cap *= 2;
        }
    }
    close(fd);
    return buf;
}

static int cp_env_wanted(const char *kv)
{
    const char *eq = strchr(kv, '=');
    if (!eq)
        return 0;
    if (strncmp(kv, "CUPROBE_", 8) == 0)
        return 1;
    size_t n = (size_t)(eq - kv);
    for (size_t i = 0; i < sizeof cp_env_keep / sizeof *cp_env_keep; i++)
        if (strlen(cp_env_keep[i]) == n && memcmp(cp_env_keep[i], kv, n) == 0)
            return 1;
    return 0;
}

#define CP_ENV_MAX 256

struct cp_env_kv {
    const char *k, *v;
    size_t kl, vl;
};

/* One pass over environ: the sizes reserved and the bytes written must come
 * from the same snapshot even if another thread calls setenv meanwhile. */
static size_t cp_hdr_env_snap(struct cp_env_kv *kv, size_t *size)
{
    size_t n = 0;
    *size += CP_VARINT_MAX;
    for (char **e = environ; e && *e && n < CP_ENV_MAX; e++) {
        if (!cp_env_wanted(*e))
            continue;
        const char *eq = strchr(*e, '=');
        kv[n] = (struct cp_env_kv){*e, eq + 1, (size_t)(eq - *e), strlen(eq + 1)};
        *size += 2 * CP_VARINT_MAX + kv[n].kl + kv[n].vl;
        n++;
    }
    return n;
}

static uint8_t *cp_hdr_env(uint8_t *p, const struct cp_env_kv *kv, size_t n)
{
    p = cp_put_u(p, n);
    for (size_t i = 0; i < n; i++) {
        p = cp_put_str(p, kv[i].k, kv[i].kl);
        p = cp_put_str(p, kv[i].v, kv[i].vl);
    }
    return p;
}

/* Sizing pass when p == NULL, writing pass otherwise. */
static uint8_t *cp_hdr_argv(uint8_t *p, size_t *size, const char *cmd, size_t len)
{
    uint64_t argc = 0;
    for (size_t i = 0; i < len; i++)
        argc += cmd[i] == 0;
    if (len && cmd[len - 1] != 0)
        argc++;   /* cut off at CP_CMDLINE_MAX */
    if (p)
        p = cp_put_u(p, argc);
    *size += CP_VARINT_MAX + argc * CP_VARINT_MAX + len;
    for (size_t i = 0; p && i < len;) {
        size_t n = strnlen(cmd + i, len - i);
        p = cp_put_str(p, cmd + i, n);
        i += n + 1;
    }
    return p;
}

uint8_t *cp__header_encode(size_t *len)
{
    char host[256] = "", exe[PATH_MAX] = "";
    if (gethostname(host, sizeof host) < 0)
        host[0] = 0;
    host[sizeof host - 1] = 0;
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[el > 0 ? el : 0] = 0;
    size_t cmd_len;
    char *cmd = cp_read_cmdline(&cmd_len);
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    long root_pid = cp_config()->root_pid;

    /* argv and env are the table's hand-encoded kinds (STRARR, KVARR):
     * encode them first, then the record around them. */
    size_t tail_max = 0;
    cp_hdr_argv(NULL, &tail_max, cmd, cmd ? cmd_len : 0);
    struct cp_env_kv *kv = malloc(CP_ENV_MAX * sizeof *kv);
    size_t nkv = kv ? cp_hdr_env_snap(kv, &tail_max) : 0;
    uint8_t *argv_enc = malloc(tail_max);
    uint8_t *out = NULL;
    if (!argv_enc)
        goto free_kv;
    size_t ignored = 0;
    size_t argv_enc_len = (size_t)(cp_hdr_argv(argv_enc, &ignored, cmd, cmd ? cmd_len : 0) -
                                   argv_enc);
    uint8_t *env_enc = argv_enc + argv_enc_len;
    size_t env_enc_len = (size_t)(cp_hdr_env(env_enc, kv, nkv) - env_enc);
    size_t host_len = strlen(host), exe_len = strlen(exe);
    size_t shim_version_len = strlen(CP_SHIM_VERSION);

    out = malloc(CP_REC_BOUND(HEADER));
    if (!out)
        goto free_enc;
    *len = (size_t)(cp_enc_header(out, (uint64_t)getpid(), (uint64_t)getppid(),
                                (uint64_t)wall.tv_sec * 1000000000u + (uint64_t)wall.tv_nsec,
                                root_pid > 0 && root_pid == (long)getpid(), host, host_len, exe,
                                exe_len, CP_SHIM_VERSION, shim_version_len, argv_enc,
                                argv_enc_len, env_enc, env_enc_len,
                                (uint64_t)sysconf(_SC_PAGESIZE),
                                (uint64_t)(cp__image_forked != 0), cp_config()->run_id) -
                     out);
free_enc:
    free(argv_enc);
free_kv:
    free(kv);
    free(cmd);
    return out;
}
