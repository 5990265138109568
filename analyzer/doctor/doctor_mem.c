/*
 * doctor_mem.c - layer 4 of `cuprobe doctor`: allocation and transfer on
 * each visible device, run in the driver child.
 *
 * Per device: retain the primary context; cuMemGetInfo (warn when less than
 * 5% is free, naming the bytes in use and, through NVML when it loads, the
 * processes holding them); allocate, memset and copy both ways, verifying
 * every byte; then time host-to-device copies from pageable and from pinned
 * memory and print both rates and their ratio.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cp_nvml.h"
#include "doctor_int.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)

/* NVML, loaded optionally: just the calls that list compute processes. */
static struct {
    bool tried, ok;
    typeof(&nvmlDeviceGetHandleByUUID) get_by_uuid;
    typeof(&nvmlDeviceGetComputeRunningProcesses_v3) get_procs;
} nvml;

static void nvml_load(void)
{
    typeof(&nvmlInit_v2) init;
    void *h;

    if (nvml.tried)
        return;
    nvml.tried = true;
    h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return; /* optional: silently skipped */
    init = (typeof(&nvmlInit_v2))dlsym(h, "nvmlInit_v2");
    nvml.get_by_uuid = (typeof(&nvmlDeviceGetHandleByUUID))dlsym(h, "nvmlDeviceGetHandleByUUID");
    nvml.get_procs = (typeof(&nvmlDeviceGetComputeRunningProcesses_v3))dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3");
    if (!nvml.get_procs) /* same record layout in v2 */
        nvml.get_procs = (typeof(&nvmlDeviceGetComputeRunningProcesses_v3))dlsym(
            h, "nvmlDeviceGetComputeRunningProcesses_v2");
    nvml.ok = init && nvml.get_by_uuid && nvml.get_procs && init() == 0;
}

/* Appends "pid N (comm, X GiB)" for every other process on the device to
 * out.  @return : the number listed, or -1 when NVML is not available. */
static int other_procs(struct cp_dr_ctx *ctx, const char *uuid, char *out, size_t n)
{
    nvmlProcessInfo_t procs[64];
    unsigned int count = 64;
    nvmlDevice_t dev = NULL;
    int listed = 0;

    nvml_load();
    if (!nvml.ok || nvml.get_by_uuid(uuid, &dev) != 0 || nvml.get_procs(dev, &count, procs) != 0)
        return -1;
    for (unsigned int i = 0; i < count && i < 64; i++) {
        char path[64], comm[64];
        size_t len = strlen(out);

        if (procs[i].pid == (unsigned int)getpid())
            continue;
        snprintf(path, sizeof(path), "%s/%u/comm", ctx->procfs, procs[i].pid);
        if (cp_dr_read_file(path, comm, sizeof(comm)) < 0)
            snprintf(comm, sizeof(comm), "not in this pid namespace");
        if (procs[i].usedGpuMemory == ~0ULL)
            snprintf(out + len, n - len, "%spid %u (%s)", listed ? ", " : "", procs[i].pid, comm);
        else
            snprintf(out + len, n - len, "%spid %u (%s, %.1f GiB)", listed ? ", " : "", procs[i].pid, comm,
                     (double)procs[i].usedGpuMemory / GIB);
        listed++;
    }
    return listed;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct cp_dr_check *fail_call(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ord, const char *call,
                                     int res)
{
    struct cp_dr_check *c = cp_dr_add(&ctx->rep, 4, CP_DR_FAIL, "mem.io", "device %d: %s failed", ord, call);

    cp_dr_ev(c, "returned %s", cp_dr_cu_errstr(cu, res));
    if (res == CUDA_ERROR_OUT_OF_MEMORY)
        cp_dr_fix(c, "free memory on the card (see the processes using it: `nvidia-smi`)");
    else
        cp_dr_fix(c, "check `nvidia-smi -q` and %s; reset the GPU or reboot if it persists", cp_dr_log_hint(ctx));
    return c;
}

static int verify(const unsigned char *buf, size_t n, unsigned char seed, bool pattern)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (pattern ? (unsigned char)(i * 131u + seed) : seed))
            return (int)(i & 0x7fffffff) + 1;
    return 0;
}

/* Allocate, memset, copy both ways, check every byte.  @return : 0 or -1. */
static int alloc_copy(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ord, size_t size)
{
    unsigned char *host = malloc(size);
    CUdeviceptr d = 0;
    int res, bad, rc = -1;
    struct cp_dr_check *c;

    if (!host)
        return 0;
    res = cu->mem_alloc(&d, size);
    if (res != CUDA_SUCCESS) {
        fail_call(ctx, cu, ord, "cuMemAlloc", res);
        goto out_free_host;
    }
    if ((res = cu->memset_d8(d, 0xa5, size)) != CUDA_SUCCESS) {
        fail_call(ctx, cu, ord, "cuMemsetD8", res);
        goto out_free_dev;
    }
    memset(host, 0, size);
    if ((res = cu->memcpy_dtoh(host, d, size)) != CUDA_SUCCESS) {
        fail_call(ctx, cu, ord, "cuMemcpyDtoH", res);
        goto out_free_dev;
    }
    if ((bad = verify(host, size, 0xa5, false)) == 0) {
        for (size_t i = 0; i < size; i++)
            host[i] = (unsigned char)(i * 131u + 7);
        if ((res = cu->memcpy_htod(d, host, size)) != CUDA_SUCCESS) {
            fail_call(ctx, cu, ord, "cuMemcpyHtoD", res);
            goto out_free_dev;
        }
        memset(host, 0, size);
        if ((res = cu->memcpy_dtoh(host, d, size)) != CUDA_SUCCESS) {
            fail_call(ctx, cu, ord, "cuMemcpyDtoH", res);
            goto out_free_dev;
        }
        bad = verify(host, size, 7, true);
    }
    if (bad) {
        c = cp_dr_add(&ctx->rep, 4, CP_DR_FAIL, "mem.io", "device %d: data read back is wrong", ord);
        cp_dr_ev(c, "first bad byte at offset %d of %zu", bad - 1, size);
        cp_dr_fix(c, "memory or transfer errors: check `nvidia-smi -q -d ECC,ROW_REMAPPER` and %s", cp_dr_log_hint(ctx));
        goto out_free_dev;
    }
    c = cp_dr_add(&ctx->rep, 4, CP_DR_OK, "mem.io", "device %d: allocate, memset, copy both ways verified", ord);
    cp_dr_ev(c, "%.0f MiB, every byte checked", (double)size / MIB);
    rc = 0;
out_free_dev:
    cu->mem_free(d);
out_free_host:
    free(host);
    return rc;
}

/* Seconds per copy of size bytes from src, best of reps after a warm-up. */
static double time_htod(const struct cp_dr_cuda *cu, CUdeviceptr d, const void *src, size_t size, int reps)
{
    double best = 1e30;

    if (cu->memcpy_htod(d, src, size) != CUDA_SUCCESS)
        return -1;
    for (int i = 0; i < reps; i++) {
        double t0 = now_s(), dt;

        if (cu->memcpy_htod(d, src, size) != CUDA_SUCCESS)
            return -1;
        /* A pageable copy may return before its last DMA finished. */
        if (cu->ctx_synchronize)
            cu->ctx_synchronize();
        dt = now_s() - t0;
        if (dt < best)
            best = dt;
    }
    return best > 0 ? best : 1e-9;
}

static void bandwidth(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ord, size_t size)
{
    void *pageable = malloc(size), *pinned = NULL;
    double tpage = -1, tpin = -1, gpage, gpin;
    CUdeviceptr d = 0;
    struct cp_dr_check *c;

    if (!pageable || cu->mem_alloc(&d, size) != CUDA_SUCCESS)
        goto out_free_pageable;
    memset(pageable, 1, size); /* fault the pages in before timing */
    tpage = time_htod(cu, d, pageable, size, ctx->bw_reps);
    if (cu->mem_host_alloc && cu->mem_host_alloc(&pinned, size, 0) == CUDA_SUCCESS) {
        memset(pinned, 1, size);
        tpin = time_htod(cu, d, pinned, size, ctx->bw_reps);
        cu->mem_free_host(pinned);
    }
    cu->mem_free(d);
    if (tpage <= 0) {
        c = cp_dr_add(&ctx->rep, 4, CP_DR_WARN, "mem.bandwidth", "device %d: bandwidth not measured", ord);
        cp_dr_ev(c, "a %.0f MiB host-to-device copy failed", (double)size / MIB);
        goto out_free_pageable;
    }
    gpage = (double)size / tpage / 1e9;
    if (tpin <= 0) {
        c = cp_dr_add(&ctx->rep, 4, CP_DR_WARN, "mem.bandwidth", "device %d: pinned memory unavailable", ord);
        cp_dr_ev(c, "cuMemHostAlloc(%.0f MiB) failed; pageable host-to-device %.2f GB/s", (double)size / MIB, gpage);
        cp_dr_kv_num(c, "pageable_gbs", gpage);
        goto out_free_pageable;
    }
    gpin = (double)size / tpin / 1e9;
    c = cp_dr_add(&ctx->rep, 4, CP_DR_OK, "mem.bandwidth",
                  "device %d host-to-device: pageable %.2f GB/s, pinned %.2f GB/s (pinned/pageable %.2fx)", ord,
                  gpage, gpin, gpin / gpage);
    cp_dr_ev(c, "%.0f MiB copies, best of %d", (double)size / MIB, ctx->bw_reps);
    cp_dr_kv_num(c, "pageable_gbs", gpage);
    cp_dr_kv_num(c, "pinned_gbs", gpin);
    cp_dr_kv_num(c, "ratio", gpin / gpage);
    cp_dr_kv_int(c, "bytes", (long long)size);
out_free_pageable:
    free(pageable);
}

/* cuMemGetInfo with the other users of the card.  @return : free bytes. */
static size_t mem_info(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ord, const char *uuid)
{
    size_t fr = 0, total = 0;
    char procs[512] = "";
    int nproc, res;
    struct cp_dr_check *c;

    if (!cu->mem_get_info || (res = cu->mem_get_info(&fr, &total)) != CUDA_SUCCESS || !total) {
        c = cp_dr_add(&ctx->rep, 4, CP_DR_NOTE, "mem.info", "device %d: cuMemGetInfo unavailable", ord);
        return (size_t)-1;
    }
    nproc = other_procs(ctx, uuid, procs, sizeof(procs));
    if (fr * 20 < total) {
        c = cp_dr_add(&ctx->rep, 4, CP_DR_WARN, "mem.info", "device %d nearly full: %.1f GiB of %.1f GiB in use",
                      ord, (double)(total - fr) / GIB, (double)total / GIB);
        cp_dr_ev(c, "cuMemGetInfo: %zu bytes free of %zu (%.1f%%), %zu bytes used", fr, total,
                 100.0 * (double)fr / (double)total, total - fr);
        cp_dr_fix(c, "stop the processes holding the memory (`nvidia-smi`) or pick another GPU");
    } else {
        c = cp_dr_add(&ctx->rep, 4, CP_DR_OK, "mem.info", "device %d: %.1f GiB free of %.1f GiB", ord,
                      (double)fr / GIB, (double)total / GIB);
        cp_dr_ev(c, "cuMemGetInfo: %zu bytes free, %zu used", fr, total - fr);
    }
    if (nproc >= 0)
        cp_dr_ev(c, "; other processes (NVML): %s", nproc ? procs : "none");
    cp_dr_kv_int(c, "free_bytes", (long long)fr);
    cp_dr_kv_int(c, "total_bytes", (long long)total);
    cp_dr_kv_int(c, "used_bytes", (long long)(total - fr));
    if (nproc >= 0)
        cp_dr_kv_str(c, "other_processes", procs);
    return fr;
}

static int device_layer(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ord)
{
    char uuid[48] = "", step[96];
    CUcontext cx = NULL;
    CUdevice dev;
    CUuuid u;
    size_t fr, size;
    int res;

    snprintf(step, sizeof(step), "cuDevicePrimaryCtxRetain(device %d)", ord);
    cp_dr_send(&ctx->rep, 4, step);
    if ((res = cu->device_get(&dev, ord)) != CUDA_SUCCESS) {
        fail_call(ctx, cu, ord, "cuDeviceGet", res);
        return -1;
    }
    if ((res = cu->primary_ctx_retain(&cx, dev)) != CUDA_SUCCESS) {
        fail_call(ctx, cu, ord, "cuDevicePrimaryCtxRetain (context creation)", res);
        return -1;
    }
    if ((res = cu->ctx_set_current(cx)) != CUDA_SUCCESS) {
        fail_call(ctx, cu, ord, "cuCtxSetCurrent", res);
        goto out_release;
    }
    if (cu->device_get_uuid && cu->device_get_uuid(&u, dev) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)u.bytes;

        snprintf(uuid, sizeof(uuid), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                 b[15]);
    }
    snprintf(step, sizeof(step), "cuMemGetInfo(device %d)", ord);
    cp_dr_send(&ctx->rep, 4, step);
    fr = mem_info(ctx, cu, ord, uuid);
    size = ctx->bw_bytes;
    /* Keep the test small enough for a nearly full card. */
    if (fr != (size_t)-1 && size > fr / 4)
        size = fr / 4 & ~(size_t)4095;
    if (size < 4096) {
        struct cp_dr_check *c = cp_dr_add(&ctx->rep, 4, CP_DR_FAIL, "mem.io", "device %d has no free memory", ord);

        cp_dr_ev(c, "cuMemGetInfo: %zu bytes free", fr);
        cp_dr_fix(c, "stop the processes holding the memory (`nvidia-smi`) or pick another GPU");
        goto out_release;
    }
    snprintf(step, sizeof(step), "allocate/memset/copy (device %d)", ord);
    cp_dr_send(&ctx->rep, 4, step);
    if (alloc_copy(ctx, cu, ord, size) < 0)
        goto out_release;
    snprintf(step, sizeof(step), "host-to-device bandwidth (device %d)", ord);
    cp_dr_send(&ctx->rep, 4, step);
    bandwidth(ctx, cu, ord, size);
out_release:
    cu->ctx_set_current(NULL);
    if (cu->primary_ctx_release)
        cu->primary_ctx_release(dev);
    return cp_dr_layer_failed(&ctx->rep, 4) ? -1 : 0;
}

void cp_dr_mem_layer(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int n)
{
    static const char *const need[] = {"cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemAlloc_v2",
                                       "cuMemFree_v2", "cuMemsetD8_v2", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2"};
    const void *have[] = {cu->primary_ctx_retain, cu->ctx_set_current, cu->mem_alloc, cu->mem_free,
                          cu->memset_d8, cu->memcpy_htod, cu->memcpy_dtoh};

    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        if (!have[i]) {
            struct cp_dr_check *c = cp_dr_add(&ctx->rep, 4, CP_DR_FAIL, "mem.symbols",
                                              "libcuda.so.1 lacks %s", need[i]);

            cp_dr_fix(c, "reinstall the NVIDIA driver");
            return;
        }
    }
    for (int i = 0; i < n; i++)
        if (device_layer(ctx, cu, i) < 0)
            return;
}
