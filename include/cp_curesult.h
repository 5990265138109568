/*
 * cp_curesult.h - the names of every CUresult of cuda.h 13.0 and what the
 * common ones mean, in a run and for a machine's setup, once, for both
 * sides (the analyzer's reports and `cuprobe doctor`).
 */
#ifndef CP_CURESULT_H
#define CP_CURESULT_H

#include <stddef.h>
#include <stdint.h>

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

#endif /* CP_CURESULT_H */
