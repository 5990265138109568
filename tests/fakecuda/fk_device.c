/*
 * fk_device.c - configuration, cuInit and the device queries of the fake
 * driver.
 *
 * Environment (read once, on the first call of any entry point):
 *   FAKECUDA_DEVICES  physical devices, default 1, at most 16
 *   FAKECUDA_MEM      capacity per device (K/M/G/T suffixes; one value or a
 *                     comma list per physical device), default 1G
 *   FAKECUDA_USED     bytes "used by other processes" (same syntax), default 0
 *   FAKECUDA_NAME     device name, default "Fake H200"
 *   FAKECUDA_CC       compute capability "major.minor", default 9.0
 *   FAKECUDA_DRIVER_VERSION  cuDriverGetVersion value, default 13000
 *   FAKECUDA_STUB=1   behave like NVIDIA's stub libcuda (every call -> 34)
 *   CUDA_VISIBLE_DEVICES, CUDA_API_PER_THREAD_DEFAULT_STREAM as the real one.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fk_ids.h"
#include "fk_internal.h"

pthread_mutex_t fk_lock = PTHREAD_MUTEX_INITIALIZER;
int fk_ndev;
struct fk_dev fk_devs[FK_MAX_DEVICES];
int fk_driver_version = 13000;
int fk_gpa_newer;
int fk_stub;
unsigned fk_alloc_us;
unsigned fk_forbid_handles;
int fk_ptds_default;

static pthread_once_t fk_env_once = PTHREAD_ONCE_INIT;
static int fk_nphys = 1;
static int fk_initialized;          /* 1 after a successful cuInit */
static CUresult fk_init_result = CUDA_ERROR_NOT_INITIALIZED;
static int fk_fork_poison;          /* FAKECUDA_FORK_POISON */
static int fk_poisoned;             /* a child forked after cuInit succeeded */

/* Like the real driver (FAKECUDA_FORK_POISON=1): a child forked after its
 * parent's cuInit succeeded cannot use CUDA; its cuInit, and every call
 * after it, return CUDA_ERROR_NOT_INITIALIZED. */
static void fk_atfork_child(void)
{
    if (fk_fork_poison && __atomic_load_n(&fk_initialized, __ATOMIC_ACQUIRE)) {
        fk_poisoned = 1;
        __atomic_store_n(&fk_initialized, 0, __ATOMIC_RELEASE);
    }
}

/* Parse "12", "4K", "1.5G" ... into bytes; 0 on garbage. */
static size_t fk_parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mul = 1024.0; break;
    case 'M': mul = 1024.0 * 1024; break;
    case 'G': mul = 1024.0 * 1024 * 1024; break;
    case 'T': mul = 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
    }
    return v > 0 ? (size_t)(v * mul) : 0;
}

/* Value i of a comma list; a short list repeats its last element. */
static size_t fk_list_size(const char *list, int i, size_t dflt)
{
    if (!list || !*list)
        return dflt;
    const char *p = list;
    size_t v = fk_parse_size(p);
    for (int k = 0; k < i; k++) {
        const char *c = strchr(p, ',');
        if (!c)
            break;
        p = c + 1;
        v = fk_parse_size(p);
    }
    return v;
}

static void fk_uuid(int phys, CUuuid *u)
{
    fk_uuid_bytes(phys, (unsigned char *)u->bytes);
}

static void fk_uuid_str(int phys, char *buf, size_t len)
{
    fk_uuid_text(phys, buf, len);
}

/* One CUDA_VISIBLE_DEVICES entry -> physical index, or -1 if invalid. */
static int fk_visible_entry(const char *tok, size_t len)
{
    while (len && isspace((unsigned char)*tok))
        tok++, len--;
    while (len && isspace((unsigned char)tok[len - 1]))
        len--;
    if (len == 0)
        return -1;
    if (len > 4 && strncmp(tok, "GPU-", 4) == 0) {
        /* A UUID prefix must name exactly one device. */
        int found = -1;
        for (int i = 0; i < fk_nphys; i++) {
            char s[64];
            fk_uuid_str(i, s, sizeof(s));
            if (len <= strlen(s) && strncasecmp(s, tok, len) == 0) {
                if (found >= 0)
                    return -1;
                found = i;
            }
        }
        return found;
    }
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)tok[i]) || v > 1000)
            return -1;
        v = v * 10 + (tok[i] - '0');
    }
    return v < fk_nphys ? v : -1;
}

/* Map logical ordinals to physical devices; an invalid entry ends the list. */
static int fk_visible_map(int *phys)
{
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (!cvd) {
        for (int i = 0; i < fk_nphys; i++)
            phys[i] = i;
        return fk_nphys;
    }
    int n = 0;
    const char *p = cvd;
    while (*p && n < FK_MAX_DEVICES) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        int d = fk_visible_entry(p, len);
        for (int k = 0; k < n && d >= 0; k++)
            if (phys[k] == d)
                d = -1;     /* a repeated device also ends the list */
        if (d < 0)
            break;
        phys[n++] = d;
        if (!c)
            break;
        p = c + 1;
    }
    return n;
}

static void fk_env_parse(void)
{
    const char *s;
    if ((s = getenv("FAKECUDA_STUB")) && atoi(s) != 0)
        fk_stub = 1;
    if ((s = getenv("FAKECUDA_FORBID_HANDLES")) && *s)
        fk_forbid_handles = (unsigned)strtoul(s, NULL, 0);
    if ((s = getenv("FAKECUDA_ALLOC_US")) && *s)
        fk_alloc_us = (unsigned)strtoul(s, NULL, 10);
    if ((s = getenv("FAKECUDA_DRIVER_VERSION")) && *s)
        fk_driver_version = atoi(s);
    if ((s = getenv("FAKECUDA_GPA_NEWER")) && atoi(s) != 0)
        fk_gpa_newer = 1;
    if ((s = getenv("FAKECUDA_FORK_POISON")) && atoi(s) != 0) {
        fk_fork_poison = 1;
        pthread_atfork(NULL, NULL, fk_atfork_child);
    }
    if ((s = getenv("CUDA_API_PER_THREAD_DEFAULT_STREAM")) && atoi(s) == 1)
        fk_ptds_default = 1;
    if ((s = getenv("FAKECUDA_DEVICES")) && *s) {
        fk_nphys = atoi(s);
        if (fk_nphys < 0)
            fk_nphys = 0;
        if (fk_nphys > FK_MAX_DEVICES)
            fk_nphys = FK_MAX_DEVICES;
    }
    const char *name = getenv("FAKECUDA_NAME");
    const char *cc = getenv("FAKECUDA_CC");
    int major = 9, minor = 0;
    if (cc && *cc && sscanf(cc, "%d.%d", &major, &minor) < 1)
        major = 9, minor = 0;
    int phys[FK_MAX_DEVICES];
    fk_ndev = fk_visible_map(phys);
    for (int i = 0; i < fk_ndev; i++) {
        struct fk_dev *d = &fk_devs[i];
        d->phys = phys[i];
        snprintf(d->name, sizeof(d->name), "%s", name && *name ? name : "Fake H200");
        d->cc_major = major;
        d->cc_minor = minor;
        d->capacity = fk_list_size(getenv("FAKECUDA_MEM"), d->phys, (size_t)1 << 30);
        if (d->capacity == 0)
            d->capacity = (size_t)1 << 30;
        d->used_other = fk_list_size(getenv("FAKECUDA_USED"), d->phys, 0);
        if (d->used_other > d->capacity)
            d->used_other = d->capacity;
    }
}

/*
 * Handle objects (contexts, streams, events, modules, libraries) are never
 * freed, so a stale handle is detected rather than used after free; this
 * list keeps them reachable so leak checkers do not report them.
 */
static void **fk_handles;
static size_t fk_nhandles, fk_cap_handles;

void *fk_handle_alloc(size_t size)
{
    void *p = calloc(1, size);
    if (!p)
        return NULL;
    pthread_mutex_lock(&fk_lock);
    if (fk_nhandles == fk_cap_handles) {
        size_t cap = fk_cap_handles ? fk_cap_handles * 2 : 64;
        void **n = realloc(fk_handles, cap * sizeof(*n));
        if (!n) {
            pthread_mutex_unlock(&fk_lock);
            free(p);
            return NULL;
        }
        fk_handles = n;
        fk_cap_handles = cap;
    }
    fk_handles[fk_nhandles++] = p;
    pthread_mutex_unlock(&fk_lock);
    return p;
}

void fk_env_load(void)
{
    pthread_once(&fk_env_once, fk_env_parse);
}

CUresult fk_guard(void)
{
    if (__atomic_load_n(&fk_initialized, __ATOMIC_ACQUIRE))
        return fk_fault_sticky_code();
    fk_env_load();
    return fk_stub ? CUDA_ERROR_STUB_LIBRARY : CUDA_ERROR_NOT_INITIALIZED;
}

size_t fk_dev_free_locked(const struct fk_dev *d)
{
    size_t taken = d->used_other + d->used;
    return taken >= d->capacity ? 0 : d->capacity - taken;
}

/* Map every visible device's arena; called once under fk_lock. */
static CUresult fk_devices_setup_locked(void)
{
    for (int i = 0; i < fk_ndev; i++) {
        struct fk_dev *d = &fk_devs[i];
        d->arena_size = fk_round(d->capacity, FK_GRANULARITY);
        /* NORESERVE: untouched device memory costs no host RAM. */
        void *a = mmap(NULL, d->arena_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (a == MAP_FAILED)
            return CUDA_ERROR_OUT_OF_MEMORY;
        d->arena = a;
        d->cap_free = 16;
        d->free_ext = calloc(d->cap_free, sizeof(*d->free_ext));
        if (!d->free_ext)
            return CUDA_ERROR_OUT_OF_MEMORY;
        d->free_ext[0].off = 0;
        d->free_ext[0].size = d->arena_size;
        d->n_free = 1;
        fk_pool_init_dev_locked(i);
    }
    return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int Flags)
{
    fk_env_load();
    if (fk_stub)
        return CUDA_ERROR_STUB_LIBRARY;
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_poisoned)
        return CUDA_ERROR_NOT_INITIALIZED;
    pthread_mutex_lock(&fk_lock);
    if (fk_init_result == CUDA_ERROR_NOT_INITIALIZED) {
        /* Like the real driver, the first outcome sticks. */
        fk_init_result = fk_ndev == 0 ? CUDA_ERROR_NO_DEVICE : fk_devices_setup_locked();
        if (fk_init_result == CUDA_SUCCESS)
            __atomic_store_n(&fk_initialized, 1, __ATOMIC_RELEASE);
    }
    CUresult rc = fk_init_result;
    pthread_mutex_unlock(&fk_lock);
    return rc;
}
FK_ALIAS(cuInit);

CUresult cuDriverGetVersion(int *driverVersion)
{
    fk_env_load();
    if (fk_stub)
        return CUDA_ERROR_STUB_LIBRARY;
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = fk_driver_version;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDriverGetVersion);

CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    (void)pExportTableId;
    fk_env_load();
    if (fk_stub)
        return CUDA_ERROR_STUB_LIBRARY;
    if (ppExportTable)
        *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED;
}
FK_ALIAS(cuGetExportTable);

static CUresult fk_dev_check(CUdevice dev)
{
    return dev >= 0 && dev < fk_ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetCount(int *count)
{
    FK_GUARD();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = fk_ndev;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDeviceGetCount);

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    FK_GUARD();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_check(ordinal) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDeviceGet);

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    FK_GUARD();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_check(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", fk_devs[dev].name);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDeviceGetName);

static CUresult fk_device_uuid(CUuuid *uuid, CUdevice dev)
{
    FK_GUARD();
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_check(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    fk_uuid(fk_devs[dev].phys, uuid);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
    return fk_device_uuid(uuid, dev);
}
FK_ALIAS(cuDeviceGetUuid);

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    /* _v2 differs only for MIG instances, which the fake has none of. */
    return fk_device_uuid(uuid, dev);
}
FK_ALIAS(cuDeviceGetUuid_v2);

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    FK_GUARD();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_check(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = fk_devs[dev].capacity;
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDeviceTotalMem_v2);

CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    FK_GUARD();
    if (!pciBusId || len < 13)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_check(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(pciBusId, (size_t)len, "%04X:%02X:%02X.0", 0, FK_PCI_BUS(fk_devs[dev].phys), 0);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDeviceGetPCIBusId);

/* Attribute values of an H200 (SXM); numbers are CUdevice_attribute values. */
static int fk_attr_value(const struct fk_dev *d, int a)
{
    switch (a) {
    case 1: case 2: case 3: return 1024;        /* MAX_THREADS_PER_BLOCK, MAX_BLOCK_DIM_X/Y */
    case 4: return 64;                          /* MAX_BLOCK_DIM_Z */
    case 5: return 2147483647;                  /* MAX_GRID_DIM_X */
    case 6: case 7: return 65535;               /* MAX_GRID_DIM_Y/Z */
    case 8: return 49152;                       /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 9: return 65536;                       /* TOTAL_CONSTANT_MEMORY */
    case 10: return 32;                         /* WARP_SIZE */
    case 11: return 2147483647;                 /* MAX_PITCH */
    case 12: return 65536;                      /* MAX_REGISTERS_PER_BLOCK */
    case 13: return 1980000;                    /* CLOCK_RATE (kHz) */
    case 14: return 512;                        /* TEXTURE_ALIGNMENT */
    case 15: return 1;                          /* GPU_OVERLAP */
    case 16: return 132;                        /* MULTIPROCESSOR_COUNT */
    case 19: return 1;                          /* CAN_MAP_HOST_MEMORY */
    case 30: return 512;                        /* SURFACE_ALIGNMENT */
    case 31: return 1;                          /* CONCURRENT_KERNELS */
    case 32: return 1;                          /* ECC_ENABLED */
    case 33: return FK_PCI_BUS(d->phys);      /* PCI_BUS_ID */
    case 36: return 2619000;                    /* MEMORY_CLOCK_RATE (kHz) */
    case 37: return 6144;                       /* GLOBAL_MEMORY_BUS_WIDTH */
    case 38: return 62914560;                   /* L2_CACHE_SIZE */
    case 39: return 2048;                       /* MAX_THREADS_PER_MULTIPROCESSOR */
    case 40: return 3;                          /* ASYNC_ENGINE_COUNT */
    case 41: return 1;                          /* UNIFIED_ADDRESSING */
    case 75: return d->cc_major;                /* COMPUTE_CAPABILITY_MAJOR */
    case 76: return d->cc_minor;                /* COMPUTE_CAPABILITY_MINOR */
    case 78: case 79: case 80: return 1;        /* STREAM_PRIORITIES, GLOBAL/LOCAL_L1_CACHE */
    case 81: return 233472;                     /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
    case 82: return 65536;                      /* MAX_REGISTERS_PER_MULTIPROCESSOR */
    case 83: return 1;                          /* MANAGED_MEMORY */
    case 86: return 0;                          /* HOST_NATIVE_ATOMIC_SUPPORTED */
    case 87: return 2;                          /* SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO */
    case 88: return 0;                          /* PAGEABLE_MEMORY_ACCESS */
    case 89: case 90: case 91: return 1;        /* CONCURRENT_MANAGED_ACCESS, PREEMPTION, HOST_PTR_REG */
    case 95: case 96: return 1;                 /* COOPERATIVE_LAUNCH (+MULTI_DEVICE) */
    case 97: return 232448;                     /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    case 99: return 1;                          /* HOST_REGISTER_SUPPORTED */
    case 102: case 103: return 1;               /* VIRTUAL_MEMORY_MANAGEMENT, POSIX_FD handles */
    case 106: return 32;                        /* MAX_BLOCKS_PER_MULTIPROCESSOR */
    case 113: case 115: return 1;               /* READ_ONLY_HOST_REGISTER, MEMORY_POOLS */
    case 119: return 1;                         /* MEMPOOL_SUPPORTED_HANDLE_TYPES: POSIX fd */
    case 120: return 1;                         /* CLUSTER_LAUNCH */
    case 122: case 123: return 1;               /* 64-bit stream mem ops, wait value NOR */
    case 126: return 4;                         /* MEM_SYNC_DOMAIN_COUNT */
    case 127: return 1;                         /* TENSOR_MAP_ACCESS_SUPPORTED */
    case 131: case 134: return -1;              /* NUMA_ID, HOST_NUMA_ID */
    default: return 0;
    }
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    FK_GUARD();
    /* 148 = CU_DEVICE_ATTRIBUTE_MAX in cuda.h 13.0 */
    if (!pi || (int)attrib < 1 || (int)attrib >= 148)
        return CUDA_ERROR_INVALID_VALUE;
    if (fk_dev_check(dev) != CUDA_SUCCESS)
        return CUDA_ERROR_INVALID_DEVICE;
    *pi = fk_attr_value(&fk_devs[dev], (int)attrib);
    return CUDA_SUCCESS;
}
FK_ALIAS(cuDeviceGetAttribute);
