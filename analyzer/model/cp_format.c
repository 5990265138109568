/*
 * cp_format.c - formatting shared by the report: sizes, durations, device
 * identities and CUresult names (declared in cp_model.h).
 */
#include <stdio.h>
#include <string.h>

#include "cp_model.h"

const char *cp_fmt_bytes(uint64_t b, char *buf, size_t cap)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
    if (b < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)b);
        return buf;
    }
    double v = (double)b / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, "%.2f %s", v, unit[u]);
    return buf;
}

const char *cp_fmt_ns(uint64_t ns, char *buf, size_t cap)
{
    if (ns < 1000)
        snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(buf, cap, "%.1f us", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, cap, "%.1f ms", ns / 1e6);
    else
        snprintf(buf, cap, "%.2f s", ns / 1e9);
    return buf;
}

const char *cp_dev_uuid(const cp_proc *p, int dev, char *buf, size_t cap)
{
    buf[0] = 0;
    if (dev < 0 || dev >= CP_MAX_DEV || !p->dev[dev].seen)
        return buf;
    const uint8_t *u = p->dev[dev].uuid;
    snprintf(buf, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
    return buf;
}

const char *cp_dev_pci(const cp_proc *p, int dev, char *buf, size_t cap)
{
    buf[0] = 0;
    if (dev < 0 || dev >= CP_MAX_DEV || !p->dev[dev].seen)
        return buf;
    const cp_devinfo *d = &p->dev[dev];
    snprintf(buf, cap, "%04llx:%02llx:%02llx.0", (unsigned long long)d->pci_domain,
             (unsigned long long)d->pci_bus, (unsigned long long)d->pci_device);
    return buf;
}

const char *cp_dev_name(const cp_proc *p, int dev, char *buf, size_t cap)
{
    char u[64], pci[32];
    if (dev < 0) {
        snprintf(buf, cap, "an unknown GPU");
        return buf;
    }
    cp_dev_uuid(p, dev, u, sizeof u);
    cp_dev_pci(p, dev, pci, sizeof pci);
    if (u[0])
        snprintf(buf, cap, "GPU %d (%s, PCI %s)", dev, u, pci);
    else
        snprintf(buf, cap, "GPU %d", dev);
    return buf;
}

/* Every CUresult of cuda.h 13.0. */
static const struct {
    unsigned code;
    const char *name;
} cp_results[] = {
    { 0, "CUDA_SUCCESS" }, { 1, "CUDA_ERROR_INVALID_VALUE" },
    { 2, "CUDA_ERROR_OUT_OF_MEMORY" }, { 3, "CUDA_ERROR_NOT_INITIALIZED" },
    { 4, "CUDA_ERROR_DEINITIALIZED" }, { 5, "CUDA_ERROR_PROFILER_DISABLED" },
    { 6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED" }, { 7, "CUDA_ERROR_PROFILER_ALREADY_STARTED" },
    { 8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED" }, { 34, "CUDA_ERROR_STUB_LIBRARY" },
    { 36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER" }, { 46, "CUDA_ERROR_DEVICE_UNAVAILABLE" },
    { 100, "CUDA_ERROR_NO_DEVICE" }, { 101, "CUDA_ERROR_INVALID_DEVICE" },
    { 102, "CUDA_ERROR_DEVICE_NOT_LICENSED" }, { 200, "CUDA_ERROR_INVALID_IMAGE" },
    { 201, "CUDA_ERROR_INVALID_CONTEXT" }, { 202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT" },
    { 205, "CUDA_ERROR_MAP_FAILED" }, { 206, "CUDA_ERROR_UNMAP_FAILED" },
    { 207, "CUDA_ERROR_ARRAY_IS_MAPPED" }, { 208, "CUDA_ERROR_ALREADY_MAPPED" },
    { 209, "CUDA_ERROR_NO_BINARY_FOR_GPU" }, { 210, "CUDA_ERROR_ALREADY_ACQUIRED" },
    { 211, "CUDA_ERROR_NOT_MAPPED" }, { 212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY" },
    { 213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER" }, { 214, "CUDA_ERROR_ECC_UNCORRECTABLE" },
    { 215, "CUDA_ERROR_UNSUPPORTED_LIMIT" }, { 216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE" },
    { 217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED" }, { 218, "CUDA_ERROR_INVALID_PTX" },
    { 219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT" }, { 220, "CUDA_ERROR_NVLINK_UNCORRECTABLE" },
    { 221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND" }, { 222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" },
    { 223, "CUDA_ERROR_JIT_COMPILATION_DISABLED" },
    { 224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY" },
    { 225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC" }, { 226, "CUDA_ERROR_CONTAINED" },
    { 300, "CUDA_ERROR_INVALID_SOURCE" }, { 301, "CUDA_ERROR_FILE_NOT_FOUND" },
    { 302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND" },
    { 303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED" }, { 304, "CUDA_ERROR_OPERATING_SYSTEM" },
    { 400, "CUDA_ERROR_INVALID_HANDLE" }, { 401, "CUDA_ERROR_ILLEGAL_STATE" },
    { 402, "CUDA_ERROR_LOSSY_QUERY" }, { 500, "CUDA_ERROR_NOT_FOUND" },
    { 600, "CUDA_ERROR_NOT_READY" }, { 700, "CUDA_ERROR_ILLEGAL_ADDRESS" },
    { 701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" }, { 702, "CUDA_ERROR_LAUNCH_TIMEOUT" },
    { 703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING" },
    { 704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED" },
    { 705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED" }, { 708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE" },
    { 709, "CUDA_ERROR_CONTEXT_IS_DESTROYED" }, { 710, "CUDA_ERROR_ASSERT" },
    { 711, "CUDA_ERROR_TOO_MANY_PEERS" }, { 712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED" },
    { 713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED" }, { 714, "CUDA_ERROR_HARDWARE_STACK_ERROR" },
    { 715, "CUDA_ERROR_ILLEGAL_INSTRUCTION" }, { 716, "CUDA_ERROR_MISALIGNED_ADDRESS" },
    { 717, "CUDA_ERROR_INVALID_ADDRESS_SPACE" }, { 718, "CUDA_ERROR_INVALID_PC" },
    { 719, "CUDA_ERROR_LAUNCH_FAILED" }, { 720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE" },
    { 721, "CUDA_ERROR_TENSOR_MEMORY_LEAK" }, { 800, "CUDA_ERROR_NOT_PERMITTED" },
    { 801, "CUDA_ERROR_NOT_SUPPORTED" }, { 802, "CUDA_ERROR_SYSTEM_NOT_READY" },
    { 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" },
    { 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" },
    { 805, "CUDA_ERROR_MPS_CONNECTION_FAILED" }, { 806, "CUDA_ERROR_MPS_RPC_FAILURE" },
    { 807, "CUDA_ERROR_MPS_SERVER_NOT_READY" }, { 808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED" },
    { 809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED" },
    { 810, "CUDA_ERROR_MPS_CLIENT_TERMINATED" }, { 811, "CUDA_ERROR_CDP_NOT_SUPPORTED" },
    { 812, "CUDA_ERROR_CDP_VERSION_MISMATCH" }, { 900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" },
    { 901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED" }, { 902, "CUDA_ERROR_STREAM_CAPTURE_MERGE" },
    { 903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED" }, { 904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED" },
    { 905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION" }, { 906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT" },
    { 907, "CUDA_ERROR_CAPTURED_EVENT" }, { 908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD" },
    { 909, "CUDA_ERROR_TIMEOUT" }, { 910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE" },
    { 911, "CUDA_ERROR_EXTERNAL_DEVICE" }, { 912, "CUDA_ERROR_INVALID_CLUSTER_SIZE" },
    { 913, "CUDA_ERROR_FUNCTION_NOT_LOADED" }, { 914, "CUDA_ERROR_INVALID_RESOURCE_TYPE" },
    { 915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION" }, { 916, "CUDA_ERROR_KEY_ROTATION" },
    { 999, "CUDA_ERROR_UNKNOWN" },
};

const char *cp_result_name(uint64_t code)
{
    for (size_t i = 0; i < sizeof cp_results / sizeof *cp_results; i++)
        if (cp_results[i].code == code)
            return cp_results[i].name;
    return NULL;
}
