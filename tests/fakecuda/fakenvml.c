/*
 * fakenvml.c - a fake NVML (libnvidia-ml.so.1) for the tests, built into
 * build/fakenvml/ (a directory of its own, so that only the tests that put
 * it on LD_LIBRARY_PATH see an NVML).  Its GPUs are the fake driver's
 * (fk_ids.h): the same UUIDs and PCI bus ids.
 *
 * Environment (per-GPU values are a comma list, one entry per GPU in
 * physical order; a missing entry takes the default):
 *   FAKENVML_INIT      nvmlInit_v2's result, default 0 (e.g. 9: driver not loaded)
 *   FAKENVML_DEVICES   GPUs, default FAKECUDA_DEVICES or 1
 *   FAKENVML_DRIVER    driver version, default 580.65.06
 *   FAKENVML_ECC       "vol_unc:vol_cor:agg_unc:agg_cor" or "off", default 0:0:0:0
 *   FAKENVML_REMAP     "corr:unc:pending:failed", or "none" (an older card
 *                      without row remapping: retired pages instead), default 0:0:0:0
 *   FAKENVML_RETIRED   "sbe_pages:dbe_pages:pending", default 0:0:0
 *   FAKENVML_THROTTLE  current clock-throttle reason bits (0x...), default 0
 *   FAKENVML_PERSIST   persistence mode 0/1, default 1
 *   FAKENVML_REPLAY    PCIe replay counter, default 0
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_nvml.h"
#include "fk_ids.h"

#define FN_MAX_GPUS 16

/* The entry (','-separated) of GPU gpu in variable name, into buf (size
 * n; "" when absent).  @return : buf. */
static const char *fn_entry(const char *name, int gpu, char *buf, size_t n)
{
    const char *s = getenv(name);

    for (int i = 0; s && i < gpu; i++) {
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    snprintf(buf, n, "%.*s", s ? (int)strcspn(s, ",") : 0, s ? s : "");
    return buf;
}

/* Field k (':'-separated) of GPU gpu's entry of variable name, a number
 * (0x.. allowed); def when absent. */
static unsigned long long fn_field(const char *name, int gpu, int k, unsigned long long def)
{
    char entry[128];
    const char *s = fn_entry(name, gpu, entry, sizeof(entry));

    for (int i = 0; i < k && s; i++) {
        s = strchr(s, ':');
        s = s ? s + 1 : NULL;
    }
    return s && *s && *s != ':' ? strtoull(s, NULL, 0) : def;
}

/* @return : non-zero when GPU gpu's entry of variable name is word. */
static int fn_word_is(const char *name, int gpu, const char *word)
{
    char entry[128];

    return strcmp(fn_entry(name, gpu, entry, sizeof(entry)), word) == 0;
}

static int fn_count(void)
{
    const char *s = getenv("FAKENVML_DEVICES");

    if (!s || !*s)
        s = getenv("FAKECUDA_DEVICES");
    int n = s && *s ? atoi(s) : 1;
    return n < 0 ? 0 : n > FN_MAX_GPUS ? FN_MAX_GPUS : n;
}

/* A handle is its GPU's index + 1.  @return : the index, or -1. */
static int fn_index(nvmlDevice_t d)
{
    uintptr_t v = (uintptr_t)d;

    return v >= 1 && v <= (uintptr_t)fn_count() ? (int)v - 1 : -1;
}

/* The GPU index i of handle d, or the call fails as NVML's does. */
#define FN_GPU(i, d)           \
    int i = fn_index(d);       \
    if (i < 0)                 \
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */

static nvmlDevice_t fn_handle(int i)
{
    return (nvmlDevice_t)(uintptr_t)(i + 1);
}

nvmlReturn_t nvmlInit_v2(void)
{
    const char *s = getenv("FAKENVML_INIT");

    return s && *s ? atoi(s) : NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    const char *s = getenv("FAKENVML_DRIVER");

    snprintf(version, length, "%s", s && *s ? s : "580.65.06");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
    *deviceCount = (unsigned)fn_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    if (index >= (unsigned)fn_count())
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *device = fn_handle((int)index);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    for (int i = 0; i < fn_count(); i++) {
        char u[64];

        fk_uuid_text(i, u, sizeof(u));
        if (strcmp(u, uuid) == 0) {
            *device = fn_handle(i);
            return NVML_SUCCESS;
        }
    }
    return 6; /* NVML_ERROR_NOT_FOUND */
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    unsigned dom, bus, dev;

    if (sscanf(pciBusId, "%x:%x:%x", &dom, &bus, &dev) != 3)
        return 2;
    for (int i = 0; i < fn_count(); i++) {
        if (dom == 0 && bus == (unsigned)FK_PCI_BUS(i) && dev == 0) {
            *device = fn_handle(i);
            return NVML_SUCCESS;
        }
    }
    return 6;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    FN_GPU(i, device)
    memset(pci, 0, sizeof(*pci));
    pci->bus = (unsigned)FK_PCI_BUS(i);
    pci->pciDeviceId = 0x233510de;
    snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    FN_GPU(i, device)
    fk_uuid_text(i, uuid, length);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    FN_GPU(i, device)
    (void)i;
    snprintf(name, length, "Fake H200");
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
    FN_GPU(i, device)
    *current = *pending = fn_word_is("FAKENVML_ECC", i, "off") ? NVML_FEATURE_DISABLED : NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
                                         nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
    FN_GPU(i, device)
    if (fn_word_is("FAKENVML_ECC", i, "off"))
        return NVML_ERROR_NOT_SUPPORTED;
    /* fields: vol_unc, vol_cor, agg_unc, agg_cor */
    *eccCounts = fn_field("FAKENVML_ECC", i,
                          (counterType == NVML_AGGREGATE_ECC ? 2 : 0) +
                              (errorType == NVML_MEMORY_ERROR_TYPE_CORRECTED ? 1 : 0),
                          0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
                                       unsigned int *isPending, unsigned int *failureOccurred)
{
    FN_GPU(i, device)
    if (fn_word_is("FAKENVML_REMAP", i, "none"))
        return NVML_ERROR_NOT_SUPPORTED;
    *corrRows = (unsigned)fn_field("FAKENVML_REMAP", i, 0, 0);
    *uncRows = (unsigned)fn_field("FAKENVML_REMAP", i, 1, 0);
    *isPending = (unsigned)fn_field("FAKENVML_REMAP", i, 2, 0);
    *failureOccurred = (unsigned)fn_field("FAKENVML_REMAP", i, 3, 0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, nvmlPageRetirementCause_t cause, unsigned int *pageCount,
                                       unsigned long long *addresses)
{
    FN_GPU(i, device)
    unsigned n;
    n = (unsigned)fn_field("FAKENVML_RETIRED", i, cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? 1 : 0,
                           0);
    if (*pageCount < n) {
        *pageCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned k = 0; k < n; k++)
        addresses[k] = 0x1000ull * (k + 1);
    *pageCount = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t device, nvmlEnableState_t *isPending)
{
    FN_GPU(i, device)
    *isPending = fn_field("FAKENVML_RETIRED", i, 2, 0) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *clocksThrottleReasons)
{
    FN_GPU(i, device)
    *clocksThrottleReasons = fn_field("FAKENVML_THROTTLE", i, 0, 0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *clocksEventReasons)
{
    return nvmlDeviceGetCurrentClocksThrottleReasons(device, clocksEventReasons);
}

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode)
{
    FN_GPU(i, device)
    *mode = fn_field("FAKENVML_PERSIST", i, 0, 1) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device, unsigned int *value)
{
    FN_GPU(i, device)
    *value = (unsigned)fn_field("FAKENVML_REPLAY", i, 0, 0);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos)
{
    (void)infos;
    FN_GPU(i, device)
    (void)i;
    *infoCount = 0;
    return NVML_SUCCESS;
}
