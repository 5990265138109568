/*
 * cp_devinfo.c - the environment section of a trace (driver version and
 * devices) and the OOM snapshot (free/total memory, other processes via
 * NVML).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cp_evt.h"

#define CP_MAX_DEVS 64

typedef struct cp_devrec {
    int ordinal;
    char name[256];
    char uuid[16];
    int pci_domain, pci_bus, pci_dev;
    int cc_major, cc_minor;
    size_t total;
    int pageable, host_pt, sm_count;
} cp_devrec;

static pthread_mutex_t cp_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static cp_devrec cp_devs[CP_MAX_DEVS];
static int cp_ndevs = -1;           /* -1: not collected yet */
static int cp_driver_version;
static void *cp_slot_ver, *cp_slot_count, *cp_slot_get, *cp_slot_name, *cp_slot_uuid,
    *cp_slot_uuid1, *cp_slot_total, *cp_slot_attr, *cp_slot_meminfo, *cp_slot_busid;

typedef CUresult (*cp_attr_fn)(int *, CUdevice_attribute, CUdevice);

static void cp_collect_one(cp_devrec *d, CUdevice dev, cp_attr_fn attr)
{
    CUresult (*name)(char *, int, CUdevice) = cp_real(&cp_slot_name, "cuDeviceGetName", CP_REAL_DRIVER);
    CUresult (*uuid)(CUuuid *, CUdevice) = cp_real(&cp_slot_uuid, "cuDeviceGetUuid_v2", CP_REAL_DRIVER);
    CUresult (*total)(size_t *, CUdevice) = cp_real(&cp_slot_total, "cuDeviceTotalMem_v2", CP_REAL_DRIVER);
    CUuuid u;
    if (!uuid)
        uuid = cp_real(&cp_slot_uuid1, "cuDeviceGetUuid", CP_REAL_DRIVER);
    if (name)
        name(d->name, sizeof(d->name), dev);
    if (uuid && uuid(&u, dev) == CUDA_SUCCESS)
        memcpy(d->uuid, u.bytes, 16);
    if (total)
        total(&d->total, dev);
    attr(&d->pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, dev);
    attr(&d->pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev);
    attr(&d->pci_dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, dev);
    attr(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    attr(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    attr(&d->pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev);
    attr(&d->host_pt, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES, dev);
    attr(&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
}

/* Ask the driver once, after cuInit succeeded; later files reuse the copy
 * (a forked child must not call a driver its parent initialised). */
static void cp_collect(void)
{
    CUresult (*ver)(int *) = cp_real(&cp_slot_ver, "cuDriverGetVersion", CP_REAL_DRIVER);
    CUresult (*count)(int *) = cp_real(&cp_slot_count, "cuDeviceGetCount", CP_REAL_DRIVER);
    CUresult (*get)(CUdevice *, int) = cp_real(&cp_slot_get, "cuDeviceGet", CP_REAL_DRIVER);
    cp_attr_fn attr = cp_real(&cp_slot_attr, "cuDeviceGetAttribute", CP_REAL_DRIVER);
    int n = 0;
    if (ver)
        ver(&cp_driver_version);
    if (!count || !get || !attr || count(&n) != CUDA_SUCCESS)
        n = 0;
    if (n > CP_MAX_DEVS)
        n = CP_MAX_DEVS;
    for (int i = 0; i < n; i++) {
        CUdevice dev;
        memset(&cp_devs[i], 0, sizeof(cp_devs[i]));
        cp_devs[i].ordinal = i;
        if (get(&dev, i) == CUDA_SUCCESS)
            cp_collect_one(&cp_devs[i], dev, attr);
    }
    cp_ndevs = n;
}

static void cp_emit(void)
{
    (void)cp_rec_put_driver(cp_driver_version, cp_driver_version ? 0 : 1);
    for (int i = 0; i < cp_ndevs; i++) {
        const cp_devrec *d = &cp_devs[i];
        if (cp_rec_put_device((uint64_t)d->ordinal, d->name, strnlen(d->name, sizeof(d->name)),
                              (const uint8_t *)d->uuid, (uint64_t)d->pci_domain,
                              (uint64_t)d->pci_bus, (uint64_t)d->pci_dev, (uint64_t)d->cc_major,
                              (uint64_t)d->cc_minor, d->total, (uint64_t)d->pageable,
                              (uint64_t)d->host_pt, (uint64_t)d->sm_count))
            return;
    }
}

static void cp_emit_cached(void)
{
    pthread_mutex_lock(&cp_dev_lock);
    if (cp_ndevs >= 0)
        cp_emit();
    pthread_mutex_unlock(&cp_dev_lock);
}

void cp_ev_devices(void)
{
    int first = 0;
    pthread_mutex_lock(&cp_dev_lock);
    if (cp_ndevs < 0) {
        cp_collect();
        first = 1;
    }
    pthread_mutex_unlock(&cp_dev_lock);
    if (first)
        cp_emit_cached();
}

/* Registered once from the constructor (cp_hooks_ctx.c): every new file
 * (a forked child's) repeats what is known, without driver calls. */
void cp_devinfo_after_fork(void)
{
    pthread_mutex_init(&cp_dev_lock, NULL);
}

void cp_devinfo_on_new_file(void)
{
    cp_emit_cached();
}

/* --- NVML, loaded only at an OOM ---------------------------------------------- */

typedef struct cp_nvml_proc {
    unsigned pid;
    unsigned long long used;
    unsigned gi, ci;
} cp_nvml_proc;

static int cp_nvml_procs(int dev, cp_oom_proc *out, unsigned max)
{
    static void *lib;
    static int failed;
    if (failed)
        return 0;
    if (!lib) {
        lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "nvmlInit_v2") : NULL;
        if (!init || init() != 0) {
            failed = 1;
            return 0;
        }
    }
    char bus[64];
    CUresult (*busid)(char *, int, CUdevice) = cp_real(&cp_slot_busid, "cuDeviceGetPCIBusId", CP_REAL_DRIVER);
    int (*by_bus)(const char *, void **) =
        (int (*)(const char *, void **))dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    int (*procs)(void *, unsigned *, cp_nvml_proc *) =
        (int (*)(void *, unsigned *, cp_nvml_proc *))dlsym(lib,
                                                           "nvmlDeviceGetComputeRunningProcesses_v3");
    void *h;
    if (!busid || !by_bus || !procs || busid(bus, sizeof(bus), dev) != CUDA_SUCCESS ||
        by_bus(bus, &h) != 0)
        return 0;
    cp_nvml_proc list[64];
    unsigned n = 64;
    if (procs(h, &n, list) != 0)
        return 0;
    unsigned k = 0;
    for (unsigned i = 0; i < n && k < max; i++, k++) {
        out[k].pid = list[i].pid;
        out[k].used_bytes = list[i].used;
    }
    return (int)k;
}

void cp_ev_oom(const cp_call *c, const cp_where *w, CUstream stream, int dev,
               uint64_t requested)
{
    size_t free_b = 0, total_b = 0;
    cp_oom_proc procs[32];
    int np = 0;
    if (!cp_ev_capturing()) {
        CUresult (*meminfo)(size_t *, size_t *) = cp_real(&cp_slot_meminfo, "cuMemGetInfo_v2", CP_REAL_DRIVER);
        if (meminfo)
            meminfo(&free_b, &total_b);
        if (dev >= 0)
            np = cp_nvml_procs(dev, procs, 32);
    }
    cp_ev_put_oom(c, w, stream, requested, free_b, total_b, procs, (uint64_t)np);
    cp_rec_flush();
}
