/*
 * cp_doctor.c - `cuprobe doctor`: prove a machine can run CUDA work, layer
 * by layer, and stop at the first broken layer with the evidence and a fix.
 *
 *   1 hardware   sysfs/procfs: GPUs on the PCI bus, links, driver binding,
 *                kernel modules                               (doctor_hw.c)
 *   2 driver     which libcuda.so.1 loads, stub, version mismatch, the
 *                CUDA version the driver supports             (doctor_drv.c)
 *   3 runtime    cuInit explained, visible devices mapped to physical
 *                cards, --python build check        (doctor_drv.c, _py.c)
 *   4 memory     allocate, memset, copy both ways, free memory, other
 *                processes, pageable/pinned bandwidth         (doctor_mem.c)
 *
 * The machine's own error record joins layers 1 and 2: the kernel log's
 * Xid events and PCIe AER errors (doctor_log.c, _xid.c, _aer.c; the AER
 * counters in sysfs), and what NVML says of each GPU's ECC, row remapping,
 * throttling, persistence and PCIe replays (doctor_nvml.c, in the child).
 * `--kernel-log FILE` checks another machine's log alone.
 *
 * Layers 2-4 run in a forked child bounded by a per-step timeout
 * (doctor_child.c).  Output: a checklist (doctor_report.c) or --json.
 * Exit status: 0 all layers passed (warnings allowed), 1 a failure, 2 usage.
 *
 * Environment: CUPROBE_SYSFS_ROOT (default /sys), CUPROBE_PROCFS_ROOT
 * (default /proc), CUPROBE_DEV_ROOT (default /dev) let tests run on fake
 * trees, CUPROBE_KMSG names a file holding the kernel log; the driver
 * itself is found by the dynamic loader as usual
 * (LD_LIBRARY_PATH).  CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER are read
 * and reported, never changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_doctor.h"
#include "doctor_int.h"

static void usage(FILE *f)
{
    fputs("usage: cuprobe doctor [--json] [--python [PY]] [--min-cuda X.Y] [--timeout S] [--bw-mib N]\n"
          "                      [--kernel-log FILE]\n"
          "\n"
          "Check this machine's GPU stack layer by layer (hardware, driver, runtime,\n"
          "allocation and transfer); stop at the first broken layer and say how to fix it.\n"
          "The kernel log's Xid events and PCIe AER errors, and NVML's ECC, row remapping\n"
          "and throttling, say whether the GPU, its link or the program is at fault.\n"
          "\n"
          "  --json          machine-readable output (schema: docs/doctor.md)\n"
          "  --kernel-log FILE  check only this kernel log, copied off another machine\n"
          "                  (dmesg, dmesg -T, journalctl or /dev/kmsg format)\n"
          "  --python [PY]   also check the torch (or jax) build of interpreter PY (default python3)\n"
          "  --min-cuda X.Y  fail unless the driver supports CUDA X.Y\n"
          "  --timeout S     limit for each driver step and for the interpreter (default 20)\n"
          "  --bw-mib N      size of the bandwidth test copies in MiB (default 64)\n"
          "\n"
          "exit status: 0 all passed (warnings allowed), 1 a check failed, 2 usage error\n",
          f);
}

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);

    return v && v[0] ? v : def;
}

static int parse_positive(const char *s, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);

    if (!*s || *end || v <= 0 || v > max)
        return -1;
    *out = v;
    return 0;
}

/* @return : 0 to run, 1 after --help, -1 on a usage error (message printed). */
static int parse_args(struct cp_dr_ctx *ctx, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        long v;

        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(a, "--json") == 0) {
            ctx->json = true;
        } else if (strcmp(a, "--python") == 0 || strncmp(a, "--python=", 9) == 0) {
            ctx->py.asked = true;
            if (a[8] == '=')
                snprintf(ctx->py.exe, sizeof(ctx->py.exe), "%s", a + 9);
            else if (val && val[0] != '-' && ++i)
                snprintf(ctx->py.exe, sizeof(ctx->py.exe), "%s", val);
            if (!ctx->py.exe[0])
                snprintf(ctx->py.exe, sizeof(ctx->py.exe), "python3");
        } else if (strcmp(a, "--min-cuda") == 0 && val) {
            int maj = 0, min = 0;
            char extra;

            i++;
            if (sscanf(val, "%d.%d%c", &maj, &min, &extra) < 1 || sscanf(val, "%d.%d%c", &maj, &min, &extra) > 2 ||
                maj <= 0 || maj > 99 || min < 0 || min > 9)
                goto bad_value;
            ctx->min_cuda = maj * 1000 + min * 10;
        } else if (strcmp(a, "--kernel-log") == 0 && val) {
            ctx->kernel_log = argv[++i];
        } else if (strcmp(a, "--timeout") == 0 && val) {
            if (parse_positive(argv[++i], 3600, &v) < 0)
                goto bad_value;
            ctx->timeout_s = (int)v;
        } else if (strcmp(a, "--bw-mib") == 0 && val) {
            if (parse_positive(argv[++i], 4096, &v) < 0)
                goto bad_value;
            ctx->bw_bytes = (size_t)v << 20;
        } else {
            fprintf(stderr, "cuprobe doctor: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return -1;
        }
        continue;
bad_value:
        fprintf(stderr, "cuprobe doctor: bad value '%s' for %s\n", argv[i], a);
        return -1;
    }
    return 0;
}

/* Moves the checks from index `from` to the end to index `to`. */
static void move_tail(struct cp_dr_report *r, size_t from, size_t to)
{
    size_t n = r->n - from;
    struct cp_dr_check *tmp = malloc(n * sizeof(*tmp) + 1);

    if (!tmp)
        return; /* the order is cosmetic */
    memcpy(tmp, r->v + from, n * sizeof(*tmp));
    memmove(r->v + to + n, r->v + to, (from - to) * sizeof(*tmp));
    memcpy(r->v + to, tmp, n * sizeof(*tmp));
    free(tmp);
}

int cp_doctor_main(int argc, char **argv)
{
    static struct cp_dr_ctx ctx; /* large (the PCI table); one per process */
    size_t n_hw, n_child;
    int rc, aer, xid;
    bool hw_ok;

    memset(&ctx, 0, sizeof(ctx));
    ctx.rep.out_fd = -1;
    ctx.timeout_s = 20;
    ctx.bw_bytes = 64u << 20;
    ctx.bw_reps = 4;
    ctx.sysfs = env_or("CUPROBE_SYSFS_ROOT", "/sys");
    ctx.procfs = env_or("CUPROBE_PROCFS_ROOT", "/proc");
    ctx.devfs = env_or("CUPROBE_DEV_ROOT", "/dev");
    rc = parse_args(&ctx, argc, argv);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (ctx.kernel_log) {
        cp_dr_log_read(&ctx);
        cp_dr_log_checks(&ctx);
        rc = cp_dr_print(&ctx);
        free(ctx.rep.v);
        return rc;
    }
    cp_dr_hw(&ctx);
    n_hw = ctx.rep.n;
    hw_ok = !cp_dr_layer_failed(&ctx.rep, 1);
    cp_dr_log_read(&ctx);
    cp_dr_aer_sysfs(&ctx);
    aer = cp_dr_aer_fail_layer(&ctx.log);
    xid = cp_dr_xid_fail_layer(&ctx.log);
    /* the child stops after the first layer the log fails */
    ctx.log.fail_layer = aer && (!xid || aer < xid) ? aer : xid;
    if (hw_ok) {
        if (ctx.py.asked)
            cp_dr_py_probe(&ctx);
        cp_dr_run_child(&ctx);
    }
    /* The log's checks name GPUs by what the child found (UUIDs, CUDA
     * ordinals), so they come last, but belong after the sysfs checks. */
    n_child = ctx.rep.n;
    cp_dr_log_checks(&ctx);
    move_tail(&ctx.rep, n_child, n_hw);
    rc = cp_dr_print(&ctx);
    free(ctx.rep.v);
    return rc;
}
