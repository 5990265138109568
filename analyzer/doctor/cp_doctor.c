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
#include "cp_opts.h"
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
          "                  (dmesg with any of -T, -r, -x; journalctl, syslog or /dev/kmsg format)\n"
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

/* --min-cuda X.Y: the CUDA version as the driver reports it (12.4: 12040). */
static int parse_min_cuda(void *to, const char *who, const char *a, const char *v)
{
    int maj = 0, min = 0, n = -1;
    char extra;
    if (v)
        n = sscanf(v, "%d.%d%c", &maj, &min, &extra);
    if (n < 1 || n > 2 || maj <= 0 || maj > 99 || min < 0 || min > 9) {
        fprintf(stderr, "%s: %s takes a CUDA version such as 12.4, not '%s'\n", who, a,
                v ? v : "");
        return -1;
    }
    *(int *)to = maj * 1000 + min * 10;
    return 0;
}

/* The machine's own checks, which --kernel-log replaces; the report. */
enum { DR_LIVE = 1, DR_OUT = 2 };

/* @return : 0 to run, 1 after --help, -1 on a usage error (message printed). */
static int parse_args(struct cp_dr_ctx *ctx, int argc, char **argv)
{
    int json = 0, timeout = ctx->timeout_s, bw_mib = (int)(ctx->bw_bytes >> 20);
    const char *py = NULL;
    const cp_opt opts[] = {
        { "--json", NULL, CP_ARG_NONE, &json, 1, 0, NULL, "prints JSON", 0, 0, 0, 0, NULL },
        { "--kernel-log", NULL, CP_ARG_STR, &ctx->kernel_log, 0, 0, NULL,
          "checks that log instead of this machine", 0, DR_LIVE, 0, CP_OPT_ONCE, NULL },
        { "--python", NULL, CP_ARG_MAYBE, &py, 0, 0, NULL,
          "checks the torch (or jax) build of an interpreter", 0, 0, DR_LIVE, 0, NULL },
        { "--min-cuda", NULL, CP_ARG_FN, &ctx->min_cuda, 0, 0, parse_min_cuda,
          "sets the CUDA version the driver must support", 0, 0, DR_LIVE, 0, NULL },
        { "--timeout", NULL, CP_ARG_INT, &timeout, 1, 3600, NULL,
          "limits each driver step and the interpreter", 0, 0, DR_LIVE, 0, NULL },
        { "--bw-mib", NULL, CP_ARG_INT, &bw_mib, 1, 4096, NULL,
          "sets the size of the bandwidth test's copies", 0, 0, DR_LIVE, 0, NULL },
    };
    const cp_optset set = { "cuprobe doctor", opts, sizeof opts / sizeof *opts, NULL, 0,
                            DR_LIVE | DR_OUT, usage };
    cp_optv v;
    int rc = cp_opts_read(&set, argc, argv, &v);
    if (rc == 0 && v.n_in) {
        fprintf(stderr, "cuprobe doctor: takes no argument ('%s')\n", v.in[0]);
        usage(stderr);
        rc = -1;
    }
    free(v.in);
    ctx->json = json;
    ctx->timeout_s = timeout;
    ctx->bw_bytes = (size_t)bw_mib << 20;
    if (py) {
        ctx->py.asked = true;
        snprintf(ctx->py.exe, sizeof(ctx->py.exe), "%s", *py ? py : "python3");
    }
    return rc;
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
