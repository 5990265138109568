/*
 * doctor_cuerr.c - CUresults as the doctor prints them: "3 CUDA_ERROR_NOT_INITIALIZED"
 * and what the common ones mean for a machine's setup (both from the shared
 * table, include/cp_curesult.h).
 */
#include <stdio.h>

#include "cp_curesult.h"
#include "doctor_int.h"

const char *cp_dr_cu_meaning(int res)
{
    const char *m = res >= 0 ? cp_curesult_setup((uint64_t)res) : NULL;
    return m ? m : "see cuGetErrorString";
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

