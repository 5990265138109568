/*
 * cp_advice.h - advice for the framework actually in use: one table of
 * fixes per topic and framework (PyTorch, JAX/XLA, CuPy, plain CUDA), the
 * framework chosen from the process's module map.  Checks attach the fix
 * to their finding with cp_advice_fix() instead of naming one framework's
 * knob in their static text.
 */
#ifndef CP_ADVICE_H
#define CP_ADVICE_H

#include "cp_findings.h"

/* The framework whose knobs the advice names. */
enum cp_fwk { CP_FWK_CUDA = 0, CP_FWK_TORCH = 1, CP_FWK_JAX = 2, CP_FWK_CUPY = 3, CP_FWK_N };

/* What the advice is about. */
enum cp_adv {
    CP_ADV_DEVICE = 0,      /* a process uses or opens a GPU it should not (device choice) */
    CP_ADV_ALL_GPUS,        /* the framework opens every visible GPU by design */
    CP_ADV_FRAG,            /* allocator fragmentation, alloc/free churn */
    CP_ADV_GROWTH,          /* memory kept from step to step */
    CP_ADV_CAPACITY,        /* too much memory asked for, or held from the start */
    CP_ADV_PINNED,          /* async copies from pageable host memory */
    CP_ADV_SYNC,            /* copies and syncs that block the host in the loop */
    CP_ADV_N
};

/*! cp_advice_fw() : the framework in use in process p, from its module map
 *  (PyTorch before JAX before CuPy when several are loaded; a program that
 *  loaded none is plain CUDA).  @return : enum cp_fwk. */
int cp_advice_fw(const cp_proc *p);

/*! cp_advice_fw_name() : "PyTorch", "JAX/XLA", "CuPy", "CUDA". */
const char *cp_advice_fw_name(int fwk);

/*! cp_advice() : the fix for topic (enum cp_adv) in framework fwk.
 *  @return : a static string (never NULL for valid arguments). */
const char *cp_advice(int fwk, int topic);

/*! cp_advice_fix() : set finding f's fix to the advice on topic for the
 *  framework process p uses (p NULL: plain CUDA), and name the framework
 *  in its details ("framework"). */
void cp_advice_fix(cp_finding *f, const cp_proc *p, int topic);

#endif /* CP_ADVICE_H */
