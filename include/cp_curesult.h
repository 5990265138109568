/*
 * cp_curesult.h - the names of every CUresult of cuda.h 13.0 and what the
 * common ones mean, in a run and for a machine's setup, once, for both
 * sides (the analyzer's reports and `cuprobe doctor`).
 */
#ifndef CP_CURESULT_H
#define CP_CURESULT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* X(code, NAME, meaning, setup) for each CUresult: meaning is what the code
 * says where frameworks meet it, in a sentence (cuda-errors adds what the
 * failing API and the run say), NULL for codes programs do not meet in
 * practice; every code of docs/report.md's cuda-errors list has one
 * (tests/unit/test_result_meaning).  setup is what the code means for a
 * machine's setup when cuInit or a device query returns it (`cuprobe
 * doctor`), NULL where the doctor has nothing to add.  35 is also the
 * runtime's cudaErrorInsufficientDriver, which programs pass on. */
#define CP_CURESULTS(X) \
    X(0, CUDA_SUCCESS, NULL, "success") \
    X(1, CUDA_ERROR_INVALID_VALUE, "an argument was invalid (a null pointer, a zero or too large size, a bad flag, or an attribute this driver does not know)", NULL) \
    X(2, CUDA_ERROR_OUT_OF_MEMORY, "the device had no room for the allocation (the oom check says what held the memory)", NULL) \
    X(3, CUDA_ERROR_NOT_INITIALIZED, "CUDA was used before a successful cuInit (or in a child forked after its parent initialised CUDA)", "the driver is not initialized") \
    X(4, CUDA_ERROR_DEINITIALIZED, "CUDA is shutting down: a call made during process exit", NULL) \
    X(5, CUDA_ERROR_PROFILER_DISABLED, NULL, NULL) \
    X(6, CUDA_ERROR_PROFILER_NOT_INITIALIZED, NULL, NULL) \
    X(7, CUDA_ERROR_PROFILER_ALREADY_STARTED, NULL, NULL) \
    X(8, CUDA_ERROR_PROFILER_ALREADY_STOPPED, NULL, NULL) \
    X(34, CUDA_ERROR_STUB_LIBRARY, "the CUDA toolkit's stub libcuda.so answered instead of the driver's library", "this libcuda is the CUDA toolkit's link-time stub, not a driver") \
    X(35, CUDA_ERROR_INSUFFICIENT_DRIVER, "the installed driver is older than the CUDA runtime needs (the runtime's cudaErrorInsufficientDriver)", "the installed driver is older than this library needs") \
    X(36, CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "the call needs a newer driver than the one installed", NULL) \
    X(46, CUDA_ERROR_DEVICE_UNAVAILABLE, "the device is unavailable: exclusive-process compute mode with another process on it, or the GPU is lost", "the device is busy or unavailable (exclusive-process compute mode?)") \
    X(100, CUDA_ERROR_NO_DEVICE, "no CUDA device is visible to the process", "no CUDA-capable device is visible") \
    X(101, CUDA_ERROR_INVALID_DEVICE, "a device ordinal beyond the visible devices (check CUDA_VISIBLE_DEVICES and the device index used)", "invalid device ordinal") \
    X(102, CUDA_ERROR_DEVICE_NOT_LICENSED, NULL, NULL) \
    X(200, CUDA_ERROR_INVALID_IMAGE, "the kernel image is invalid: corrupt, or not loadable by this driver", NULL) \
    X(201, CUDA_ERROR_INVALID_CONTEXT, "no context is current on the calling thread (a new thread that never set the device), or the context was destroyed", NULL) \
    X(202, CUDA_ERROR_CONTEXT_ALREADY_CURRENT, NULL, NULL) \
    X(205, CUDA_ERROR_MAP_FAILED, NULL, NULL) \
    X(206, CUDA_ERROR_UNMAP_FAILED, NULL, NULL) \
    X(207, CUDA_ERROR_ARRAY_IS_MAPPED, NULL, NULL) \
    X(208, CUDA_ERROR_ALREADY_MAPPED, NULL, NULL) \
    X(209, CUDA_ERROR_NO_BINARY_FOR_GPU, "the program has no kernel image for this GPU's architecture", NULL) \
    X(210, CUDA_ERROR_ALREADY_ACQUIRED, NULL, NULL) \
    X(211, CUDA_ERROR_NOT_MAPPED, NULL, NULL) \
    X(212, CUDA_ERROR_NOT_MAPPED_AS_ARRAY, NULL, NULL) \
    X(213, CUDA_ERROR_NOT_MAPPED_AS_POINTER, NULL, NULL) \
    X(214, CUDA_ERROR_ECC_UNCORRECTABLE, NULL, NULL) \
    X(215, CUDA_ERROR_UNSUPPORTED_LIMIT, "a context limit (cuCtxSetLimit: stack size, printf FIFO, malloc heap) that this GPU does not support or cannot grant", NULL) \
    X(216, CUDA_ERROR_CONTEXT_ALREADY_IN_USE, NULL, NULL) \
    X(217, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "these two GPUs cannot reach each other's memory directly (no peer-to-peer over this PCIe/NVLink topology, or inside this VM); copies between them go through the host", NULL) \
    X(218, CUDA_ERROR_INVALID_PTX, "the PTX cannot be compiled by this driver: from a newer toolkit than the driver supports, or corrupt", NULL) \
    X(219, CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "a graphics interop call (OpenGL/Direct3D) without a valid graphics context", NULL) \
    X(220, CUDA_ERROR_NVLINK_UNCORRECTABLE, NULL, NULL) \
    X(221, CUDA_ERROR_JIT_COMPILER_NOT_FOUND, NULL, NULL) \
    X(222, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the PTX was produced by a newer toolkit than this driver supports: upgrade the driver or build with an older toolkit", NULL) \
    X(223, CUDA_ERROR_JIT_COMPILATION_DISABLED, NULL, NULL) \
    X(224, CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, NULL, NULL) \
    X(225, CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, NULL, NULL) \
    X(226, CUDA_ERROR_CONTAINED, NULL, NULL) \
    X(300, CUDA_ERROR_INVALID_SOURCE, "the module source (cubin, fatbin or PTX) is malformed or failed to compile", NULL) \
    X(301, CUDA_ERROR_FILE_NOT_FOUND, NULL, NULL) \
    X(302, CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, NULL, NULL) \
    X(303, CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, NULL, NULL) \
    X(304, CUDA_ERROR_OPERATING_SYSTEM, NULL, "an OS call failed (device nodes, permissions, cgroups)") \
    X(400, CUDA_ERROR_INVALID_HANDLE, "a stream, event, module or function handle that was destroyed or belongs to another context", NULL) \
    X(401, CUDA_ERROR_ILLEGAL_STATE, NULL, NULL) \
    X(402, CUDA_ERROR_LOSSY_QUERY, NULL, NULL) \
    X(500, CUDA_ERROR_NOT_FOUND, "a named kernel, global or symbol is not in the module", NULL) \
    X(600, CUDA_ERROR_NOT_READY, NULL, NULL) \
    X(700, CUDA_ERROR_ILLEGAL_ADDRESS, "a kernel accessed memory it does not own; the context is now unusable and later calls fail the same way", NULL) \
    X(701, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "the launch asked for more registers or shared memory than the GPU has for that block size", NULL) \
    X(702, CUDA_ERROR_LAUNCH_TIMEOUT, "a kernel ran longer than the display watchdog allows (a GPU that also drives a display) and was killed; the context is unusable", NULL) \
    X(703, CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, NULL, NULL) \
    X(704, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, NULL, NULL) \
    X(705, CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, NULL, NULL) \
    X(708, CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, NULL, NULL) \
    X(709, CUDA_ERROR_CONTEXT_IS_DESTROYED, "a call used a context that had already been destroyed", NULL) \
    X(710, CUDA_ERROR_ASSERT, "a device-side assert fired in a kernel (run with CUDA_LAUNCH_BLOCKING=1 to find which); the context is now unusable", NULL) \
    X(711, CUDA_ERROR_TOO_MANY_PEERS, NULL, NULL) \
    X(712, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "the host memory was already registered (pinned): harmless when the program then uses it as it is", NULL) \
    X(713, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, NULL, NULL) \
    X(714, CUDA_ERROR_HARDWARE_STACK_ERROR, NULL, NULL) \
    X(715, CUDA_ERROR_ILLEGAL_INSTRUCTION, "a kernel faulted; the context is now unusable and later calls fail", NULL) \
    X(716, CUDA_ERROR_MISALIGNED_ADDRESS, "a kernel faulted; the context is now unusable and later calls fail", NULL) \
    X(717, CUDA_ERROR_INVALID_ADDRESS_SPACE, "a kernel faulted; the context is now unusable and later calls fail", NULL) \
    X(718, CUDA_ERROR_INVALID_PC, "a kernel faulted; the context is now unusable and later calls fail", NULL) \
    X(719, CUDA_ERROR_LAUNCH_FAILED, "a kernel faulted while it ran (an exception on the device); the context is now unusable and later calls fail", NULL) \
    X(720, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, NULL, NULL) \
    X(721, CUDA_ERROR_TENSOR_MEMORY_LEAK, NULL, NULL) \
    X(800, CUDA_ERROR_NOT_PERMITTED, "the operation is not permitted in this process's environment (a container or driver setting forbids it)", NULL) \
    X(801, CUDA_ERROR_NOT_SUPPORTED, "the operation or attribute is not supported on this GPU, driver or platform", NULL) \
    X(802, CUDA_ERROR_SYSTEM_NOT_READY, "the system is not ready: on NVSwitch systems the fabric manager is not running", "the system is not ready: on NVSwitch (HGX) machines nvidia-fabricmanager is not running") \
    X(803, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "the kernel driver and libcuda versions differ (driver upgraded without a reboot, or a container mounting another libcuda)", "the user-space driver (libcuda) does not match the kernel driver version") \
    X(804, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "a forward-compatibility libcuda is used on a GPU that does not support it", "the forward-compatibility libcuda does not support this GPU") \
    X(805, CUDA_ERROR_MPS_CONNECTION_FAILED, NULL, NULL) \
    X(806, CUDA_ERROR_MPS_RPC_FAILURE, NULL, NULL) \
    X(807, CUDA_ERROR_MPS_SERVER_NOT_READY, NULL, NULL) \
    X(808, CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, NULL, NULL) \
    X(809, CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, NULL, NULL) \
    X(810, CUDA_ERROR_MPS_CLIENT_TERMINATED, NULL, NULL) \
    X(811, CUDA_ERROR_CDP_NOT_SUPPORTED, NULL, NULL) \
    X(812, CUDA_ERROR_CDP_VERSION_MISMATCH, NULL, NULL) \
    X(900, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, NULL, NULL) \
    X(901, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, NULL, NULL) \
    X(902, CUDA_ERROR_STREAM_CAPTURE_MERGE, NULL, NULL) \
    X(903, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, NULL, NULL) \
    X(904, CUDA_ERROR_STREAM_CAPTURE_UNJOINED, NULL, NULL) \
    X(905, CUDA_ERROR_STREAM_CAPTURE_ISOLATION, NULL, NULL) \
    X(906, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, NULL, NULL) \
    X(907, CUDA_ERROR_CAPTURED_EVENT, NULL, NULL) \
    X(908, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, NULL, NULL) \
    X(909, CUDA_ERROR_TIMEOUT, NULL, NULL) \
    X(910, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, NULL, NULL) \
    X(911, CUDA_ERROR_EXTERNAL_DEVICE, NULL, NULL) \
    X(912, CUDA_ERROR_INVALID_CLUSTER_SIZE, NULL, NULL) \
    X(913, CUDA_ERROR_FUNCTION_NOT_LOADED, NULL, NULL) \
    X(914, CUDA_ERROR_INVALID_RESOURCE_TYPE, NULL, NULL) \
    X(915, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, NULL, NULL) \
    X(916, CUDA_ERROR_KEY_ROTATION, NULL, NULL) \
    X(999, CUDA_ERROR_UNKNOWN, "the driver reported an unknown error: usually a GPU that fell off the bus or an Xid error (check dmesg | grep -i xid)", "unknown error: often nvidia_uvm not loaded, /dev/nvidia-uvm not accessible, or the GPU in a bad state (Xid errors in dmesg)")

/*! cp_curesult_name() : "CUDA_ERROR_OUT_OF_MEMORY" for 2.
 *  @return : the name, or NULL for a code cuda.h 13.0 does not have. */
static inline __attribute__((unused)) const char *cp_curesult_name(uint64_t code)
{
    switch (code) {
#define CP_CURESULT_CASE_(c, n, m, s) case c: return #n;
    CP_CURESULTS(CP_CURESULT_CASE_)
#undef CP_CURESULT_CASE_
    default:
        return NULL;
    }
}

/*! cp_curesult_meaning() : what code means in a sentence.
 *  @return : the meaning, or NULL (no explanation held for it). */
static inline __attribute__((unused)) const char *cp_curesult_meaning(uint64_t code)
{
    switch (code) {
#define CP_CURESULT_CASE_(c, n, m, s) case c: return m;
    CP_CURESULTS(CP_CURESULT_CASE_)
#undef CP_CURESULT_CASE_
    default:
        return NULL;
    }
}

/*! cp_curesult_setup() : what code, returned by cuInit or a device query,
 *  means for the machine's setup.
 *  @return : the text, or NULL (nothing held for it). */
static inline __attribute__((unused)) const char *cp_curesult_setup(uint64_t code)
{
    switch (code) {
#define CP_CURESULT_CASE_(c, n, m, s) case c: return s;
    CP_CURESULTS(CP_CURESULT_CASE_)
#undef CP_CURESULT_CASE_
    default:
        return NULL;
    }
}

/* A code and a text of it (a name, the runtime's message). */
typedef struct cp_cu_text {
    uint64_t code;
    const char *text;
} cp_cu_text;

/*! cp_cu_longest() : the code of the row of tab[n] (code 0 rows skipped)
 *  whose text is the longest one s starts with.  @return : it, or 0. */
static inline __attribute__((unused)) uint64_t cp_cu_longest(const cp_cu_text *tab, size_t n,
                                                             const char *s)
{
    uint64_t best = 0;
    size_t best_n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(tab[i].text);
        if (tab[i].code && len > best_n && strncmp(s, tab[i].text, len) == 0) {
            best = tab[i].code;
            best_n = len;
        }
    }
    return best;
}

/*! cp_curesult_of_name() : the code whose name starts s
 *  ("CUDA_ERROR_INVALID_DEVICE: invalid device ordinal" gives 101).
 *  @return : the code, or 0. */
static inline __attribute__((unused)) uint64_t cp_curesult_of_name(const char *s)
{
    static const cp_cu_text tab[] = {
#define CP_CURESULT_ROW_(c, n, m, st) { c, #n },
        CP_CURESULTS(CP_CURESULT_ROW_)
#undef CP_CURESULT_ROW_
    };
    return cp_cu_longest(tab, sizeof tab / sizeof *tab, s);
}

/* How a failure reaches the program, for the CUresults that end runs:
 *   CP_CUERR_SYNC_DEVICE  returned by the call that asked for a device that
 *                         is not visible: the call is the culprit, and the
 *                         visible devices explain it;
 *   CP_CUERR_SYNC_DRIVER  returned by the call that needs a driver, or the
 *                         real one (not initialised, stub, kernel/user
 *                         driver mismatch);
 *   CP_CUERR_SYNC_OLD     returned by the call that needs a newer driver
 *                         (the runtime's, a function's or a PTX's version);
 *   CP_CUERR_SYNC_OOM     returned by the allocation that did not fit;
 *   CP_CUERR_ASYNC        a kernel (or the device) failed earlier: the call
 *                         that returned it only reported it, the context is
 *                         unusable and every later call returns it too.
 * X(code, class, text, detail): text is the runtime's cudaGetErrorString()
 * for the code (frameworks raise "CUDA error: <text>", so a message names
 * its code through it); detail is what an asynchronous code says happened
 * on the device, NULL for the synchronous ones. */
enum cp_cuerr_class {
    CP_CUERR_NONE = 0,
    CP_CUERR_SYNC_DEVICE,
    CP_CUERR_SYNC_DRIVER,
    CP_CUERR_SYNC_OLD,
    CP_CUERR_SYNC_OOM,
    CP_CUERR_ASYNC,
};

#define CP_CUERR_CLASSES(X) \
    X(2, CP_CUERR_SYNC_OOM, "out of memory", NULL) \
    X(3, CP_CUERR_SYNC_DRIVER, "initialization error", NULL) \
    X(34, CP_CUERR_SYNC_DRIVER, "CUDA driver is a stub library", NULL) \
    X(35, CP_CUERR_SYNC_OLD, "CUDA driver version is insufficient for CUDA runtime version", NULL) \
    X(36, CP_CUERR_SYNC_OLD, "API call is not supported in the installed CUDA driver", NULL) \
    X(46, CP_CUERR_SYNC_DEVICE, "CUDA-capable device(s) is/are busy or unavailable", NULL) \
    X(100, CP_CUERR_SYNC_DEVICE, "no CUDA-capable device is detected", NULL) \
    X(101, CP_CUERR_SYNC_DEVICE, "invalid device ordinal", NULL) \
    X(214, CP_CUERR_ASYNC, "uncorrectable ECC error encountered", "the GPU's memory reported an uncorrectable ECC error (a hardware fault: check nvidia-smi -q -d ECC and dmesg for Xid 48/63/64)") \
    X(220, CP_CUERR_ASYNC, "uncorrectable NVLink error detected during the execution", "an NVLink link reported an uncorrectable error (a hardware fault: check dmesg for Xid 74)") \
    X(218, CP_CUERR_SYNC_OLD, "a PTX JIT compilation failed", NULL) \
    X(222, CP_CUERR_SYNC_OLD, "the provided PTX was compiled with an unsupported toolchain.", NULL) \
    X(700, CP_CUERR_ASYNC, "an illegal memory access was encountered", "a kernel read or wrote an address outside any allocation (an out-of-bounds index, a freed or another device's buffer)") \
    X(702, CP_CUERR_ASYNC, "the launch timed out and was terminated", "a kernel ran longer than the display watchdog allows and was killed") \
    X(710, CP_CUERR_ASYNC, "device-side assert triggered", "a device-side assert fired (in PyTorch usually an index out of range: embedding, gather, index_select, a class label >= num_classes in a loss)") \
    X(714, CP_CUERR_ASYNC, "hardware stack error", "a kernel overflowed its call stack") \
    X(715, CP_CUERR_ASYNC, "an illegal instruction was encountered", "a kernel executed an illegal instruction") \
    X(716, CP_CUERR_ASYNC, "misaligned address", "a kernel accessed memory at a misaligned address") \
    X(717, CP_CUERR_ASYNC, "operation not supported on global/shared address space", "a kernel used an address in the wrong address space") \
    X(718, CP_CUERR_ASYNC, "invalid program counter", "a kernel's program counter went out of its code") \
    X(719, CP_CUERR_ASYNC, "unspecified launch failure", "a kernel failed (an illegal instruction or address the driver could not classify)") \
    X(803, CP_CUERR_SYNC_DRIVER, "system has unsupported display driver / cuda driver combination", NULL) \
    X(804, CP_CUERR_SYNC_DRIVER, "forward compatibility was attempted on non supported HW", NULL) \
    X(999, CP_CUERR_ASYNC, "unknown error", "the device reported an unknown error (often a crashed kernel or a hardware fault: check dmesg for Xid messages)")

/* A function of a code that returns one column of CP_CUERR_CLASSES. */
#define CP_CUERR_FN_(fn, type, case_, dflt) \
    static inline __attribute__((unused)) type fn(uint64_t code) \
    { \
        switch (code) { CP_CUERR_CLASSES(case_) default: return dflt; } \
    }
#define CP_CUERR_CLASS_(c, k, t, d) case c: return k;
#define CP_CUERR_DETAIL_(c, k, t, d) case c: return d;

/*! cp_cuerr_class() : enum cp_cuerr_class of code (CP_CUERR_NONE for a
 *  code that does not end runs by itself). */
CP_CUERR_FN_(cp_cuerr_class, int, CP_CUERR_CLASS_, CP_CUERR_NONE)

/*! cp_cuerr_detail() : what an asynchronous code says happened on the
 *  device.  @return : the text, or NULL (a synchronous or unknown code). */
CP_CUERR_FN_(cp_cuerr_detail, const char *, CP_CUERR_DETAIL_, NULL)

/*! cp_cuerr_of_text() : the code whose runtime text starts text ("CUDA
 *  error: invalid device ordinal\n..." gives 101 for text pointing after
 *  "CUDA error: "); the longest text wins.  @return : the code, or 0. */
static inline __attribute__((unused)) uint64_t cp_cuerr_of_text(const char *text)
{
    static const cp_cu_text tab[] = {
#define CP_CUERR_ROW_(c, k, t, d) { c, t },
        CP_CUERR_CLASSES(CP_CUERR_ROW_)
#undef CP_CUERR_ROW_
    };
    return cp_cu_longest(tab, sizeof tab / sizeof *tab, text);
}

#endif /* CP_CURESULT_H */
