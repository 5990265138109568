/*
 * doctor_cuerr.c - CUresults as the doctor prints them: "3 CUDA_ERROR_NOT_INITIALIZED"
 * and what the common ones mean for a machine's setup.
 */
#include <stdio.h>

#include "cp_curesult.h"
#include "doctor_int.h"

/* What the errors cuInit and device queries return mean for a machine's
 * setup (names come from the shared table, include/cp_curesult.h). */
static const struct {
    int code;
    const char *meaning;
} cu_errors[] = {
    {0, "success"},
    {3, "the driver is not initialized"},
    {34, "this libcuda is the CUDA toolkit's link-time stub, not a driver"},
    {35, "the installed driver is older than this library needs"},
    {46, "the device is busy or unavailable (exclusive-process compute mode?)"},
    {100, "no CUDA-capable device is visible"},
    {101, "invalid device ordinal"},
    {304, "an OS call failed (device nodes, permissions, cgroups)"},
    {802, "the system is not ready: on NVSwitch (HGX) machines "
     "nvidia-fabricmanager is not running"},
    {803, "the user-space driver (libcuda) does not match the kernel "
     "driver version"},
    {804, "the forward-compatibility libcuda does not support "
     "this GPU"},
    {999, "unknown error: often nvidia_uvm not loaded, /dev/nvidia-uvm not accessible, "
     "or the GPU in a bad state (Xid errors in dmesg)"},
};

const char *cp_dr_cu_meaning(int res)
{
    for (size_t i = 0; i < sizeof(cu_errors) / sizeof(cu_errors[0]); i++)
        if (cu_errors[i].code == res)
            return cu_errors[i].meaning;
    return "see cuGetErrorString";
}

const char *cp_dr_cu_errstr(const struct cp_dr_cuda *cu, int res)
{
    static char buf[2][128];
    static int which;
    const char *name = cp_curesult_name((uint64_t)res);

    which ^= 1;
    if (!name && cu && cu->get_error_name && cu->get_error_name((CUresult)res, &name) != CUDA_SUCCESS)
        name = NULL;
    snprintf(buf[which], sizeof(buf[which]), "%d %s", res, name ? name : "(unknown CUresult)");
    return buf[which];
}

