/*
 * doctor_drv.c - layers 2 and 3 of `cuprobe doctor`, run in the driver child.
 *
 * Layer 2 (driver): which libcuda.so.1 the loader picks (or its exact error),
 * a toolkit stub loaded by mistake, the kernel module against the library
 * version, and the CUDA version the driver supports.  Layer 3 (runtime):
 * cuInit explained, the visible devices mapped from CUDA's logical ordinal
 * to the physical card (UUID, PCI bus id, position on the bus), and per
 * device name, compute capability, memory and pageable memory access; then
 * the --python build check.  Layer 4 is doctor_mem.c.
 *
 * Every driver call is preceded by a step marker (cp_dr_send) so the parent
 * can say which call hung when it kills the child.  NVML (doctor_nvml.c)
 * runs first, as the last part of layer 1.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor_int.h"

/* The newest driver branch introducing each CUDA version (for fixes). */
static int min_driver_for(int cuda)
{
    static const int tab[][2] = {
        {13000, 580}, {12090, 575}, {12080, 570}, {12060, 560}, {12050, 555}, {12040, 550}, {12030, 545},
        {12020, 535}, {12010, 530}, {12000, 525}, {11080, 520}, {11070, 515}, {11060, 510}, {11040, 470},
        {11020, 460}, {11000, 450},
    };

    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (cuda >= tab[i][0])
            return tab[i][1];
    return 0;
}

#define SYM(field, name) { (void **)&cu->field, name }
static int resolve(struct cp_dr_cuda *cu, char *missing, size_t n)
{
    const struct { void **slot; const char *name; } req[] = {
        SYM(init, "cuInit"), SYM(driver_get_version, "cuDriverGetVersion"),
        SYM(device_get_count, "cuDeviceGetCount"), SYM(device_get, "cuDeviceGet"),
        SYM(device_get_name, "cuDeviceGetName"), SYM(device_total_mem, "cuDeviceTotalMem_v2"),
        SYM(device_get_attribute, "cuDeviceGetAttribute"),
    }, opt[] = {
        SYM(get_error_name, "cuGetErrorName"), SYM(device_get_uuid, "cuDeviceGetUuid_v2"),
        SYM(device_get_pci_bus_id, "cuDeviceGetPCIBusId"), SYM(primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
        SYM(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2"), SYM(ctx_set_current, "cuCtxSetCurrent"),
        SYM(ctx_synchronize, "cuCtxSynchronize"), SYM(mem_alloc, "cuMemAlloc_v2"),
        SYM(mem_free, "cuMemFree_v2"), SYM(memset_d8, "cuMemsetD8_v2"),
        SYM(memcpy_htod, "cuMemcpyHtoD_v2"), SYM(memcpy_dtoh, "cuMemcpyDtoH_v2"),
        SYM(mem_host_alloc, "cuMemHostAlloc"), SYM(mem_free_host, "cuMemFreeHost"),
        SYM(mem_get_info, "cuMemGetInfo_v2"),
    };
    int bad = 0;

    for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++) {
        *req[i].slot = dlsym(cu->lib, req[i].name);
        if (!*req[i].slot && ++bad)
            snprintf(missing + strlen(missing), n - strlen(missing), "%s%s", bad > 1 ? ", " : "", req[i].name);
    }
    for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
        *opt[i].slot = dlsym(cu->lib, opt[i].name);
    if (!cu->device_get_uuid)
        cu->device_get_uuid = (CUresult(*)(CUuuid *, CUdevice))dlsym(cu->lib, "cuDeviceGetUuid");
    if (!cu->primary_ctx_release)
        cu->primary_ctx_release = (CUresult(*)(CUdevice))dlsym(cu->lib, "cuDevicePrimaryCtxRelease");
    return bad ? -1 : 0;
}
#undef SYM

static const char *stub_hint(void)
{
    static const char *const stubs[] = {"/usr/local/cuda/lib64/stubs/libcuda.so",
                                        "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"};

    for (size_t i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++)
        if (access(stubs[i], F_OK) == 0)
            return stubs[i];
    return NULL;
}

/* Loads libcuda.so.1 the way the CUDA runtime does.  @return : 0 or -1. */
static int load_library(struct cp_dr_ctx *ctx, struct cp_dr_cuda *cu, char *real, size_t n)
{
    const char *ldp = getenv("LD_LIBRARY_PATH");
    struct link_map *lm = NULL;
    struct cp_dr_check *c;
    const char *err;

    cp_dr_send(&ctx->rep, 2, "dlopen(\"libcuda.so.1\")");
    cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) {
        const char *stub = stub_hint();

        err = dlerror();
        c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "lib.load", "no NVIDIA driver library (libcuda.so.1 does not load)");
        cp_dr_ev(c, "dlopen: %s; LD_LIBRARY_PATH=%s", err ? err : "?", ldp ? ldp : "(unset)");
        cp_dr_fix(c, "install the NVIDIA driver's user-space part (libcuda.so.1, e.g. the libnvidia-compute "
                     "package matching kernel module %s) and run `sudo ldconfig`; in a container use the "
                     "NVIDIA container toolkit (`--gpus all`)", ctx->kmod_version[0] ? ctx->kmod_version : "?");
        if (stub)
            cp_dr_fix(c, "; the toolkit's %s is a link-time stub and cannot run CUDA", stub);
        cp_dr_kv_str(c, "dlerror", err ? err : "");
        return -1;
    }
    real[0] = '\0';
    if (dlinfo(cu->lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        if (!realpath(lm->l_name, real))
            snprintf(real, n, "%s", lm->l_name);
    c = cp_dr_add(&ctx->rep, 2, CP_DR_OK, "lib.load", "libcuda.so.1 loads");
    cp_dr_ev(c, "%s", lm && lm->l_name ? lm->l_name : "?");
    if (lm && lm->l_name && strcmp(real, lm->l_name) != 0)
        cp_dr_ev(c, " -> %s", real);
    if (strstr(real, "/compat/"))
        cp_dr_ev(c, " (forward-compatibility libcuda from the cuda-compat package)");
    cp_dr_kv_str(c, "path", lm && lm->l_name ? lm->l_name : "");
    cp_dr_kv_str(c, "realpath", real);
    return 0;
}

/* "libcuda.so.580.65.06" -> "580.65.06"; "" when the name carries none. */
static void lib_version(const char *real, char *out, size_t n)
{
    const char *base = strrchr(real, '/');
    const char *v;

    out[0] = '\0';
    base = base ? base + 1 : real;
    if (strncmp(base, "libcuda.so.", 11) != 0)
        return;
    v = base + 11;
    if (strspn(v, "0123456789.") == strlen(v) && strchr(v, '.'))
        cp_dr_fmt(out, n, "%s", v);
}

/* Layer 2.  @return : the cuInit result for layer 3, or -1 when layer 2 failed. */
static int driver_layer(struct cp_dr_ctx *ctx, struct cp_dr_cuda *cu)
{
    char real[PATH_MAX], missing[256] = "", libver[64];
    struct cp_dr_check *c;
    int ver = 0, vres, ires;

    if (load_library(ctx, cu, real, sizeof(real)) < 0)
        return -1;
    if (resolve(cu, missing, sizeof(missing)) < 0) {
        c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "lib.symbols", "libcuda.so.1 is not a usable CUDA driver");
        cp_dr_ev(c, "%s lacks %s", real, missing);
        cp_dr_fix(c, "remove this file from the library search path and reinstall the NVIDIA driver");
        return -1;
    }
    cp_dr_send(&ctx->rep, 2, "cuInit(0)");
    ires = cu->init(0);
    /* cuDriverGetVersion works without a successful cuInit on the real
     * driver; asking after cuInit suits stricter implementations too. */
    cp_dr_send(&ctx->rep, 2, "cuDriverGetVersion");
    vres = cu->driver_get_version(&ver);
    if (ires == CUDA_ERROR_STUB_LIBRARY || vres == CUDA_ERROR_STUB_LIBRARY || strstr(real, "/stubs/")) {
        c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "lib.stub", "the CUDA toolkit's stub libcuda was loaded, not the driver");
        cp_dr_ev(c, "%s; cuInit returned %s", real, cp_dr_cu_errstr(cu, ires));
        cp_dr_fix(c, "stubs/libcuda.so is for linking only: remove its directory from LD_LIBRARY_PATH "
                     "(or /etc/ld.so.conf.d) and install the NVIDIA driver so its libcuda.so.1 is found");
        return -1;
    }
    lib_version(real, libver, sizeof(libver));
    if (ires == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH ||
        (libver[0] && ctx->kmod_version[0] && strcmp(libver, ctx->kmod_version) != 0)) {
        c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "lib.mismatch", "driver/library version mismatch");
        cp_dr_ev(c, "kernel module %s, libcuda %s (%s); cuInit returned %s",
                 ctx->kmod_version[0] ? ctx->kmod_version : "?", libver[0] ? libver : "?", real,
                 cp_dr_cu_errstr(cu, ires));
        cp_dr_fix(c, "the driver was upgraded without reloading the kernel module: reboot, or unload and "
                     "reload it (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe "
                     "nvidia`); if libcuda comes from cuda-compat, remove it from LD_LIBRARY_PATH");
        cp_dr_kv_str(c, "kernel_module", ctx->kmod_version);
        cp_dr_kv_str(c, "library", libver);
        return -1;
    }
    c = cp_dr_add(&ctx->rep, 2, libver[0] ? CP_DR_OK : CP_DR_NOTE, "lib.version",
                  libver[0] ? "library version %s matches the kernel module" : "library version unknown%s",
                  libver[0] ? libver : "");
    cp_dr_ev(c, libver[0] ? "kernel module %s" : "the file name carries no version (kernel module %s)",
             ctx->kmod_version[0] ? ctx->kmod_version : "unknown");
    if (vres != CUDA_SUCCESS || ver <= 0) {
        c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "driver.version", "cuDriverGetVersion failed");
        cp_dr_ev(c, "returned %s", cp_dr_cu_errstr(cu, vres));
        cp_dr_fix(c, "reinstall the NVIDIA driver");
        return -1;
    }
    ctx->driver_version = ver;
    c = cp_dr_add(&ctx->rep, 2, CP_DR_OK, "driver.version", "driver supports CUDA %d.%d and older", ver / 1000,
                  ver % 1000 / 10);
    cp_dr_ev(c, "cuDriverGetVersion = %d", ver);
    cp_dr_kv_int(c, "cuda_version", ver);
    if (ctx->min_cuda && ver < ctx->min_cuda) {
        c = cp_dr_add(&ctx->rep, 2, CP_DR_FAIL, "driver.too_old", "driver too old: supports CUDA %d.%d, need %d.%d",
                      ver / 1000, ver % 1000 / 10, ctx->min_cuda / 1000, ctx->min_cuda % 1000 / 10);
        cp_dr_ev(c, "cuDriverGetVersion = %d < --min-cuda %d", ver, ctx->min_cuda);
        cp_dr_fix(c, "upgrade the NVIDIA driver to branch R%d or newer", min_driver_for(ctx->min_cuda));
        return -1;
    }
    return ires;
}

static void init_failed(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ires)
{
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    struct cp_dr_check *c;

    if (ires == CUDA_ERROR_NO_DEVICE && cvd)
        c = cp_dr_add(&ctx->rep, 3, CP_DR_FAIL, "cuda.init", "no CUDA device visible: CUDA_VISIBLE_DEVICES=\"%s\" "
                      "hides %s%d GPU%s", cvd, ctx->npci == 1 ? "the " : "all ", ctx->npci, ctx->npci == 1 ? "" : "s");
    else
        c = cp_dr_add(&ctx->rep, 3, CP_DR_FAIL, "cuda.init", "cuInit failed: %s", cp_dr_cu_meaning(ires));
    cp_dr_ev(c, "cuInit(0) returned %s", cp_dr_cu_errstr(cu, ires));
    if (ires == CUDA_ERROR_NO_DEVICE && cvd)
        cp_dr_fix(c, "unset CUDA_VISIBLE_DEVICES, or list valid GPUs (indices 0..%d or GPU-UUID prefixes)",
                  ctx->npci > 0 ? ctx->npci - 1 : 0);
    else if (ires == CUDA_ERROR_NO_DEVICE)
        cp_dr_fix(c, "check `nvidia-smi`; in a container pass the GPUs in (`--gpus all`)");
    else if (ires == 802)
        cp_dr_fix(c, "`sudo systemctl start nvidia-fabricmanager` (its version must match the driver)");
    else if (ires == 999)
        cp_dr_fix(c, "`sudo modprobe nvidia_uvm`, check /dev/nvidia-uvm permissions and %s", cp_dr_log_hint(ctx));
    else
        cp_dr_fix(c, "check `nvidia-smi` and %s", cp_dr_log_hint(ctx));
    cp_dr_kv_int(c, "result", ires);
}

static void fmt_uuid(const CUuuid *u, char *out, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;

    snprintf(out, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* One visible device: where it is and what it is.  @return : its compute
 * capability as major*10+minor, or -1 when it cannot be queried. */
static int device_check(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ord)
{
    char name[128] = "?", uuid[48] = "?", bus[32] = "?", step[64];
    int maj = 0, min = 0, pageable = 0, phys = -1, res;
    size_t total = 0;
    CUuuid u;
    CUdevice dev;
    struct cp_dr_check *c;

    snprintf(step, sizeof(step), "cuDeviceGet(%d) and attributes", ord);
    cp_dr_send(&ctx->rep, 3, step);
    res = cu->device_get(&dev, ord);
    if (res != CUDA_SUCCESS) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_FAIL, "device", "device %d cannot be opened", ord);
        cp_dr_ev(c, "cuDeviceGet returned %s", cp_dr_cu_errstr(cu, res));
        cp_dr_fix(c, "check `nvidia-smi -q -i %d` and %s", ord, cp_dr_log_hint(ctx));
        return -1;
    }
    cu->device_get_name(name, sizeof(name), dev);
    cu->device_total_mem(&total, dev);
    cu->device_get_attribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cu->device_get_attribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    cu->device_get_attribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev);
    if (cu->device_get_uuid && cu->device_get_uuid(&u, dev) == CUDA_SUCCESS)
        fmt_uuid(&u, uuid, sizeof(uuid));
    if (cu->device_get_pci_bus_id && cu->device_get_pci_bus_id(bus, sizeof(bus), dev) == CUDA_SUCCESS)
        phys = cp_dr_pci_find(ctx, bus);
    cp_dr_send_gpu(&ctx->rep, phys >= 0 ? ctx->pci[phys].bdf : bus, uuid, ord);
    if (phys >= 0)
        c = cp_dr_add(&ctx->rep, 3, CP_DR_OK, "device", "device %d = physical GPU %d (PCI %s)", ord, phys,
                      ctx->pci[phys].bdf);
    else
        c = cp_dr_add(&ctx->rep, 3, CP_DR_OK, "device", "device %d (PCI %s%s)", ord, bus,
                      ctx->sysfs_ok ? ", not found in sysfs" : "");
    cp_dr_ev(c, "%s, %s, compute capability %d.%d (sm_%d%d), %.1f GiB, pageable memory access %s", uuid, name,
             maj, min, maj, min, (double)total / (1 << 30), pageable ? "yes" : "no");
    cp_dr_kv_int(c, "ordinal", ord);
    cp_dr_kv_int(c, "physical", phys);
    cp_dr_kv_str(c, "uuid", uuid);
    cp_dr_kv_str(c, "pci", bus);
    cp_dr_kv_str(c, "name", name);
    snprintf(step, sizeof(step), "%d.%d", maj, min);
    cp_dr_kv_str(c, "compute_capability", step);
    cp_dr_kv_int(c, "total_bytes", (long long)total);
    cp_dr_kv_raw(c, "pageable_memory_access", pageable ? "true" : "false");
    return maj * 10 + min;
}

/* Layer 3.  @return : the visible device count, or -1 when it failed. */
static int runtime_layer(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int ires)
{
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES"), *order = getenv("CUDA_DEVICE_ORDER");
    int n = 0, res, ccs[64], bound = 0;
    struct cp_dr_check *c;

    if (ires != CUDA_SUCCESS) {
        init_failed(ctx, cu, ires);
        return -1;
    }
    c = cp_dr_add(&ctx->rep, 3, CP_DR_OK, "cuda.init", "cuInit succeeded");
    cp_dr_ev(c, "cuInit(0) = 0 CUDA_SUCCESS");
    cp_dr_send(&ctx->rep, 3, "cuDeviceGetCount");
    res = cu->device_get_count(&n);
    if (res != CUDA_SUCCESS || n <= 0) {
        init_failed(ctx, cu, res != CUDA_SUCCESS ? res : CUDA_ERROR_NO_DEVICE);
        return -1;
    }
    for (int i = 0; i < ctx->npci; i++)
        bound += strcmp(ctx->pci[i].driver, "nvidia") == 0;
    if (!cvd && n < bound)
        c = cp_dr_add(&ctx->rep, 3, CP_DR_WARN, "cuda.count", "CUDA sees %d of %d GPUs", n, bound);
    else
        c = cp_dr_add(&ctx->rep, 3, CP_DR_OK, "cuda.count", "%d CUDA device%s visible", n, n == 1 ? "" : "s");
    cp_dr_ev(c, "CUDA_VISIBLE_DEVICES=%s%s%s, CUDA_DEVICE_ORDER=%s", cvd ? "\"" : "", cvd ? cvd : "(unset)",
             cvd ? "\"" : "", order ? order : "(unset: FASTEST_FIRST)");
    if (!cvd && n < bound)
        cp_dr_fix(c, "a GPU may be in MIG mode, failed (see %s) or excluded by the container runtime",
                  cp_dr_log_hint(ctx));
    cp_dr_kv_int(c, "count", n);
    cp_dr_kv_str(c, "CUDA_VISIBLE_DEVICES", cvd ? cvd : "");
    cp_dr_kv_str(c, "CUDA_DEVICE_ORDER", order ? order : "");
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++) {
        ccs[i] = device_check(ctx, cu, i);
        if (ccs[i] < 0)
            return -1;
    }
    if (n > 1 && (!order || strcmp(order, "PCI_BUS_ID") != 0)) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_NOTE, "cuda.order", "CUDA_DEVICE_ORDER is not PCI_BUS_ID");
        cp_dr_ev(c, "CUDA numbers devices fastest first, nvidia-smi by PCI bus id; set "
                    "CUDA_DEVICE_ORDER=PCI_BUS_ID so both agree");
    }
    cp_dr_py_check(ctx, ccs, n);
    return cp_dr_layer_failed(&ctx->rep, 3) ? -1 : n;
}

void cp_dr_driver_layers(struct cp_dr_ctx *ctx)
{
    struct cp_dr_cuda cu;
    int ires, n;

    memset(&cu, 0, sizeof(cu));
    /* NVML is layer 1's last part; a layer the kernel log failed (the
     * parent's finding, copied in by fork) stops the probe as a check of
     * that layer would */
    cp_dr_nvml(ctx);
    if (ctx->log.fail_layer == 1 || cp_dr_layer_failed(&ctx->rep, 1))
        goto out_send;
    ires = driver_layer(ctx, &cu);
    if ((ires < 0 && cp_dr_layer_failed(&ctx->rep, 2)) || ctx->log.fail_layer == 2)
        goto out_send;
    n = runtime_layer(ctx, &cu, ires);
    if (n <= 0)
        goto out_send;
    cp_dr_mem_layer(ctx, &cu, n);
out_send:
    cp_dr_send(&ctx->rep, 0, NULL);
}
