/*
 * cp_curesult.h - the names of every CUresult of cuda.h 13.0 and what the
 * common ones mean, once, for both
 * sides (the analyzer's reports and `cuprobe doctor`).
 */
#ifndef CP_CURESULT_H
#define CP_CURESULT_H

#include <stddef.h>
#include <stdint.h>

/* X(code, NAME, meaning) for each CUresult: meaning is what the code says
 * where frameworks meet it, in a sentence (cuda-errors adds what the
 * failing API and the run say), NULL for codes programs do not meet in
 * practice; every code of docs/report.md's cuda-errors list has one
 * (tests/unit/test_result_meaning).  35 is also the runtime's
 * cudaErrorInsufficientDriver, which programs pass on. */
#define CP_CURESULTS(X) \
    X(0, CUDA_SUCCESS, NULL) \
    X(1, CUDA_ERROR_INVALID_VALUE, "an argument was invalid (a null pointer, a zero or too large size, a bad flag, or an attribute this driver does not know)") \
    X(2, CUDA_ERROR_OUT_OF_MEMORY, "the device had no room for the allocation (the oom check says what held the memory)") \
    X(3, CUDA_ERROR_NOT_INITIALIZED, "CUDA was used before a successful cuInit (or in a child forked after its parent initialised CUDA)") \
    X(4, CUDA_ERROR_DEINITIALIZED, "CUDA is shutting down: a call made during process exit") \
    X(5, CUDA_ERROR_PROFILER_DISABLED, NULL) \
    X(6, CUDA_ERROR_PROFILER_NOT_INITIALIZED, NULL) \
    X(7, CUDA_ERROR_PROFILER_ALREADY_STARTED, NULL) \
    X(8, CUDA_ERROR_PROFILER_ALREADY_STOPPED, NULL) \
    X(34, CUDA_ERROR_STUB_LIBRARY, "the CUDA toolkit's stub libcuda.so answered instead of the driver's library") \
    X(35, CUDA_ERROR_INSUFFICIENT_DRIVER, "the installed driver is older than the CUDA runtime needs (the runtime's cudaErrorInsufficientDriver)") \
    X(36, CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "the call needs a newer driver than the one installed") \
    X(46, CUDA_ERROR_DEVICE_UNAVAILABLE, "the device is unavailable: exclusive-process compute mode with another process on it, or the GPU is lost") \
    X(100, CUDA_ERROR_NO_DEVICE, "no CUDA device is visible to the process") \
    X(101, CUDA_ERROR_INVALID_DEVICE, "a device ordinal beyond the visible devices (check CUDA_VISIBLE_DEVICES and the device index used)") \
    X(102, CUDA_ERROR_DEVICE_NOT_LICENSED, NULL) \
    X(200, CUDA_ERROR_INVALID_IMAGE, "the kernel image is invalid: corrupt, or not loadable by this driver") \
    X(201, CUDA_ERROR_INVALID_CONTEXT, "no context is current on the calling thread (a new thread that never set the device), or the context was destroyed") \
    X(202, CUDA_ERROR_CONTEXT_ALREADY_CURRENT, NULL) \
    X(205, CUDA_ERROR_MAP_FAILED, NULL) \
    X(206, CUDA_ERROR_UNMAP_FAILED, NULL) \
    X(207, CUDA_ERROR_ARRAY_IS_MAPPED, NULL) \
    X(208, CUDA_ERROR_ALREADY_MAPPED, NULL) \
    X(209, CUDA_ERROR_NO_BINARY_FOR_GPU, "the program has no kernel image for this GPU's architecture") \
    X(210, CUDA_ERROR_ALREADY_ACQUIRED, NULL) \
    X(211, CUDA_ERROR_NOT_MAPPED, NULL) \
    X(212, CUDA_ERROR_NOT_MAPPED_AS_ARRAY, NULL) \
    X(213, CUDA_ERROR_NOT_MAPPED_AS_POINTER, NULL) \
    X(214, CUDA_ERROR_ECC_UNCORRECTABLE, NULL) \
    X(215, CUDA_ERROR_UNSUPPORTED_LIMIT, "a context limit (cuCtxSetLimit: stack size, printf FIFO, malloc heap) that this GPU does not support or cannot grant") \
    X(216, CUDA_ERROR_CONTEXT_ALREADY_IN_USE, NULL) \
    X(217, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "these two GPUs cannot reach each other's memory directly (no peer-to-peer over this PCIe/NVLink topology, or inside this VM); copies between them go through the host") \
    X(218, CUDA_ERROR_INVALID_PTX, "the PTX cannot be compiled by this driver: from a newer toolkit than the driver supports, or corrupt") \
    X(219, CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, "a graphics interop call (OpenGL/Direct3D) without a valid graphics context") \
    X(220, CUDA_ERROR_NVLINK_UNCORRECTABLE, NULL) \
    X(221, CUDA_ERROR_JIT_COMPILER_NOT_FOUND, NULL) \
    X(222, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the PTX was produced by a newer toolkit than this driver supports: upgrade the driver or build with an older toolkit") \
    X(223, CUDA_ERROR_JIT_COMPILATION_DISABLED, NULL) \
    X(224, CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, NULL) \
    X(225, CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, NULL) \
    X(226, CUDA_ERROR_CONTAINED, NULL) \
    X(300, CUDA_ERROR_INVALID_SOURCE, "the module source (cubin, fatbin or PTX) is malformed or failed to compile") \
    X(301, CUDA_ERROR_FILE_NOT_FOUND, NULL) \
    X(302, CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, NULL) \
    X(303, CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, NULL) \
    X(304, CUDA_ERROR_OPERATING_SYSTEM, NULL) \
    X(400, CUDA_ERROR_INVALID_HANDLE, "a stream, event, module or function handle that was destroyed or belongs to another context") \
    X(401, CUDA_ERROR_ILLEGAL_STATE, NULL) \
    X(402, CUDA_ERROR_LOSSY_QUERY, NULL) \
    X(500, CUDA_ERROR_NOT_FOUND, "a named kernel, global or symbol is not in the module") \
    X(600, CUDA_ERROR_NOT_READY, NULL) \
    X(700, CUDA_ERROR_ILLEGAL_ADDRESS, "a kernel accessed memory it does not own; the context is now unusable and later calls fail the same way") \
    X(701, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "the launch asked for more registers or shared memory than the GPU has for that block size") \
    X(702, CUDA_ERROR_LAUNCH_TIMEOUT, "a kernel ran longer than the display watchdog allows (a GPU that also drives a display) and was killed; the context is unusable") \
    X(703, CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, NULL) \
    X(704, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, NULL) \
    X(705, CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, NULL) \
    X(708, CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, NULL) \
    X(709, CUDA_ERROR_CONTEXT_IS_DESTROYED, "a call used a context that had already been destroyed") \
    X(710, CUDA_ERROR_ASSERT, "a device-side assert fired in a kernel (run with CUDA_LAUNCH_BLOCKING=1 to find which); the context is now unusable") \
    X(711, CUDA_ERROR_TOO_MANY_PEERS, NULL) \
    X(712, CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "the host memory was already registered (pinned): harmless when the program then uses it as it is") \
    X(713, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, NULL) \
    X(714, CUDA_ERROR_HARDWARE_STACK_ERROR, NULL) \
    X(715, CUDA_ERROR_ILLEGAL_INSTRUCTION, "a kernel faulted; the context is now unusable and later calls fail") \
    X(716, CUDA_ERROR_MISALIGNED_ADDRESS, "a kernel faulted; the context is now unusable and later calls fail") \
    X(717, CUDA_ERROR_INVALID_ADDRESS_SPACE, "a kernel faulted; the context is now unusable and later calls fail") \
    X(718, CUDA_ERROR_INVALID_PC, "a kernel faulted; the context is now unusable and later calls fail") \
    X(719, CUDA_ERROR_LAUNCH_FAILED, "a kernel faulted while it ran (an exception on the device); the context is now unusable and later calls fail") \
    X(720, CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, NULL) \
    X(721, CUDA_ERROR_TENSOR_MEMORY_LEAK, NULL) \
    X(800, CUDA_ERROR_NOT_PERMITTED, "the operation is not permitted in this process's environment (a container or driver setting forbids it)") \
    X(801, CUDA_ERROR_NOT_SUPPORTED, "the operation or attribute is not supported on this GPU, driver or platform") \
    X(802, CUDA_ERROR_SYSTEM_NOT_READY, "the system is not ready: on NVSwitch systems the fabric manager is not running") \
    X(803, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "the kernel driver and libcuda versions differ (driver upgraded without a reboot, or a container mounting another libcuda)") \
    X(804, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "a forward-compatibility libcuda is used on a GPU that does not support it") \
    X(805, CUDA_ERROR_MPS_CONNECTION_FAILED, NULL) \
    X(806, CUDA_ERROR_MPS_RPC_FAILURE, NULL) \
    X(807, CUDA_ERROR_MPS_SERVER_NOT_READY, NULL) \
    X(808, CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, NULL) \
    X(809, CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, NULL) \
    X(810, CUDA_ERROR_MPS_CLIENT_TERMINATED, NULL) \
    X(811, CUDA_ERROR_CDP_NOT_SUPPORTED, NULL) \
    X(812, CUDA_ERROR_CDP_VERSION_MISMATCH, NULL) \
    X(900, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, NULL) \
    X(901, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, NULL) \
    X(902, CUDA_ERROR_STREAM_CAPTURE_MERGE, NULL) \
    X(903, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, NULL) \
    X(904, CUDA_ERROR_STREAM_CAPTURE_UNJOINED, NULL) \
    X(905, CUDA_ERROR_STREAM_CAPTURE_ISOLATION, NULL) \
    X(906, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, NULL) \
    X(907, CUDA_ERROR_CAPTURED_EVENT, NULL) \
    X(908, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, NULL) \
    X(909, CUDA_ERROR_TIMEOUT, NULL) \
    X(910, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, NULL) \
    X(911, CUDA_ERROR_EXTERNAL_DEVICE, NULL) \
    X(912, CUDA_ERROR_INVALID_CLUSTER_SIZE, NULL) \
    X(913, CUDA_ERROR_FUNCTION_NOT_LOADED, NULL) \
    X(914, CUDA_ERROR_INVALID_RESOURCE_TYPE, NULL) \
    X(915, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, NULL) \
    X(916, CUDA_ERROR_KEY_ROTATION, NULL) \
    X(999, CUDA_ERROR_UNKNOWN, "the driver reported an unknown error: usually a GPU that fell off the bus or an Xid error (check dmesg | grep -i xid)")

/*! cp_curesult_name() : "CUDA_ERROR_OUT_OF_MEMORY" for 2.
 *  @return : the name, or NULL for a code cuda.h 13.0 does not have. */
static inline __attribute__((unused)) const char *cp_curesult_name(uint64_t code)
{
    switch (code) {
#define CP_CURESULT_CASE_(c, n, m) case c: return #n;
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
#define CP_CURESULT_CASE_(c, n, m) case c: return m;
    CP_CURESULTS(CP_CURESULT_CASE_)
#undef CP_CURESULT_CASE_
    default:
        return NULL;
    }
}

#endif /* CP_CURESULT_H */
