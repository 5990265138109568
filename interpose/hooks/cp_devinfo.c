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
    CUresult (*name)(char *, int, CUdevice) = cp_real(&cp_slot_name, "cuDeviceGetName");
    CUresult (*uuid)(CUuuid *, CUdevice) = cp_real(&cp_slot_uuid, "cuDeviceGetUuid_v2");
    CUresult (*total)(size_t *, CUdevice) = cp_real(&cp_slot_total, "cuDeviceTotalMem_v2");
    CUuuid u;
    if (!uuid)
        uuid = cp_real(&cp_slot_uuid1, "cuDeviceGetUuid");
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
    CUresult (*ver)(int *) = cp_real(&cp_slot_ver, "cuDriverGetVersion");
    CUresult (*count)(int *) = cp_real(&cp_slot_count, "cuDeviceGetCount");
    CUresult (*get)(CUdevice *, int) = cp_real(&cp_slot_get, "cuDeviceGet");
    cp_attr_fn attr = cp_real(&cp_slot_attr, "cuDeviceGetAttribute");
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
    uint8_t *p = cp_rec_begin(CP_REC_DRIVER, 2 * CP_VARINT_MAX);
    if (p) {
        p = cp_put_s(p, cp_driver_version);
        p = cp_put_u(p, cp_driver_version ? 0 : 1);
        cp_rec_commit(p);
    }
    for (int i = 0; i < cp_ndevs; i++) {
        const cp_devrec *d = &cp_devs[i];
        size_t n = strnlen(d->name, sizeof(d->name));
        p = cp_rec_begin(CP_REC_DEVICE, n + 16 + 14 * CP_VARINT_MAX);
        if (!p)
            return;
        p = cp_put_u(p, (uint64_t)d->ordinal);
        p = cp_put_str(p, d->name, n);
        memcpy(p, d->uuid, 16);
        p += 16;
        p = cp_put_u(p, (uint64_t)d->pci_domain);
        p = cp_put_u(p, (uint64_t)d->pci_bus);
        p = cp_put_u(p, (uint64_t)d->pci_dev);
        p = cp_put_u(p, (uint64_t)d->cc_major);
        p = cp_put_u(p, (uint64_t)d->cc_minor);
        p = cp_put_u(p, d->total);
        p = cp_put_u(p, (uint64_t)d->pageable);
        p = cp_put_u(p, (uint64_t)d->host_pt);
        p = cp_put_u(p, (uint64_t)d->sm_count);
        cp_rec_commit(p);
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
void cp_devinfo_after_fork(void);
void cp_devinfo_after_fork(void)
{
    pthread_mutex_init(&cp_dev_lock, NULL);
}

void cp_devinfo_on_new_file(void);
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

static int cp_nvml_procs(int dev, unsigned *pids, uint64_t *used, unsigned max)
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
    CUresult (*busid)(char *, int, CUdevice) = cp_real(&cp_slot_busid, "cuDeviceGetPCIBusId");
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
        pids[k] = list[i].pid;
        used[k] = list[i].used;
    }
    return (int)k;
}

void cp_ev_oom(const cp_call *c, const cp_where *w, CUstream stream, int dev,
               uint64_t requested)
{
    size_t free_b = 0, total_b = 0;
    unsigned pids[32];
    uint64_t used[32];
    int np = 0;
    if (!cp_ev_capturing()) {
        CUresult (*meminfo)(size_t *, size_t *) = cp_real(&cp_slot_meminfo, "cuMemGetInfo_v2");
        if (meminfo)
            meminfo(&free_b, &total_b);
        if (dev >= 0)
            np = cp_nvml_procs(dev, pids, used, 32);
    }
    uint8_t *p = cp_ev_begin(CP_REC_OOM, c, w, stream, (4 + 2 * (size_t)np) * CP_VARINT_MAX);
    if (!p)
        return;
    p = cp_put_u(p, requested);
    p = cp_put_u(p, free_b);
    p = cp_put_u(p, total_b);
    p = cp_put_u(p, (uint64_t)np);
    for (int i = 0; i < np; i++) {
        p = cp_put_u(p, pids[i]);
        p = cp_put_u(p, used[i]);
    }
    cp_rec_commit(p);
    cp_rec_flush();
}
