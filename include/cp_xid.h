/*
 * cp_xid.h - NVIDIA Xid events: what each common code means, whose fault it
 * is and what to do first, once, for both sides of the analyzer (`cuprobe
 * doctor` reading the kernel log, the report joining a run's fatal error to
 * the log lines the shim recorded).
 *
 * Meanings and first actions follow NVIDIA's Xid catalogue
 * (https://docs.nvidia.com/deploy/xid-errors/, the "Xid Catalog" table and
 * its resolution buckets), in our words.  The cause class is what decides a
 * verdict: an application Xid is the program's own fault ("your code"), a
 * hardware or driver Xid is the machine's ("this GPU"), and an aftermath
 * Xid (45) only follows another error, whose verdict is the one that counts.
 */
#ifndef CP_XID_H
#define CP_XID_H

#include <stddef.h>

#define CP_XID_CATALOGUE "https://docs.nvidia.com/deploy/xid-errors/"

/* Whose fault an Xid is. */
enum cp_xid_class {
    CP_XID_APP = 0,     /* the program's own fault: your code */
    CP_XID_HW = 1,      /* the GPU, its memory or its link: this GPU */
    CP_XID_DRIVER = 2,  /* the driver or the GPU's firmware: this GPU's software */
    CP_XID_UNKNOWN = 3, /* a code not in the table */
    CP_XID_AFTER = 4,   /* the driver cleaning up after an earlier error: no verdict of its own */
};

/* X(code, class, severity, meaning, first action).  severity: 2 the GPU
 * (or the program) needs action now, 1 watch it or look at the program, 0
 * nothing on its own.  meaning completes "Xid N: ..." (its part before the
 * first ':' is the short form); the first action is the one thing to do
 * before anything else. */
#define CP_XIDS(X) \
    X(13, CP_XID_APP, 1, "graphics engine exception: a kernel went out of bounds or ran an illegal instruction", \
      "find the faulting kernel with `compute-sanitizer --tool memcheck` (or CUDA_LAUNCH_BLOCKING=1); run the GPU's diagnostics (`dcgmi diag -r 3`) only if correct code keeps getting it") \
    X(31, CP_XID_APP, 1, "GPU memory page fault: a kernel accessed memory it does not own (an illegal memory access, CUDA error 700)", \
      "find the bad access with `compute-sanitizer --tool memcheck`; a driver or hardware fault is rare here") \
    X(32, CP_XID_HW, 1, "invalid or corrupted push buffer stream: the DMA engine between the driver and the GPU saw bad data, mostly PCIe signal quality", \
      "check the PCIe link (AER counters, link width), reseat the card or riser; update the driver if it recurs") \
    X(43, CP_XID_APP, 1, "GPU stopped processing: a program's GPU work was stopped after a fault of its own; the GPU stays healthy", \
      "look for the program's own CUDA error and restart it") \
    X(45, CP_XID_AFTER, 0, "preemptive cleanup: the driver ended a program's GPU work because it exited, was killed, or failed earlier", \
      "nothing on its own: look at the Xid logged just before it") \
    X(48, CP_XID_HW, 2, "double-bit ECC error: an uncorrectable error in GPU memory", \
      "reset the GPU (`nvidia-smi -r`) or reboot so the row is remapped; if it recurs, run `dcgmi diag -r 3` and ask the vendor for a replacement") \
    X(61, CP_XID_DRIVER, 1, "internal micro-controller breakpoint or warning (GPU firmware)", \
      "reset the GPU; update the driver if it recurs") \
    X(62, CP_XID_DRIVER, 2, "internal micro-controller halt: the GPU's firmware stopped", \
      "reset the GPU or reboot; update the driver; ask the vendor if it recurs") \
    X(63, CP_XID_HW, 1, "ECC page retirement or row remapping recorded: a failing memory row was marked for replacement", \
      "reset the GPU (`nvidia-smi -r`) to activate the remapping, then watch whether it recurs") \
    X(64, CP_XID_HW, 2, "ECC page retirement or row remapping failed: a failing memory row could not be replaced", \
      "take the GPU out of service and ask the vendor for a replacement") \
    X(68, CP_XID_DRIVER, 1, "video decoder (NVDEC) exception", \
      "restart the program and update the driver; run the GPU's diagnostics if it recurs") \
    X(69, CP_XID_DRIVER, 1, "graphics engine class error: the engine rejected a command", \
      "restart the program and update the driver; run the GPU's diagnostics if it recurs") \
    X(74, CP_XID_HW, 2, "NVLink error: a link to another GPU or an NVSwitch failed", \
      "reset the GPUs on the link; check the peer GPU and nvidia-fabricmanager; ask the vendor if it recurs") \
    X(79, CP_XID_HW, 2, "the GPU has fallen off the bus: it no longer answers on PCIe (power, heat, the slot or riser, or a failed GPU)", \
      "reboot the node (or reset the GPU); check its power cables, cooling, slot and riser; ask the vendor if it recurs") \
    X(92, CP_XID_HW, 1, "high single-bit ECC error rate: corrected memory errors above the driver's threshold", \
      "watch the ECC counters (`nvidia-smi -q -d ECC`); reset the GPU when idle; ask the vendor if they keep rising") \
    X(94, CP_XID_HW, 2, "contained ECC error: an uncorrectable memory error, contained to the programs using that memory (they were stopped)", \
      "restart the program; reset the GPU when idle so the row is remapped") \
    X(95, CP_XID_HW, 2, "uncontained ECC error: an uncorrectable memory error that may have hit every program on the GPU", \
      "reset the GPU (`nvidia-smi -r`) or reboot; ask the vendor if it recurs") \
    X(119, CP_XID_DRIVER, 2, "GSP RPC timeout: the GPU's system processor (its firmware) did not answer the driver", \
      "reset the GPU or reboot; update the driver") \
    X(120, CP_XID_DRIVER, 2, "GSP error: the GPU's system processor (its firmware) reported an error", \
      "reset the GPU or reboot; update the driver") \
    X(154, CP_XID_DRIVER, 2, "GPU recovery action changed: the driver states what this GPU now needs (the message names it)", \
      "do what the message names: `nvidia-smi -r` for \"GPU Reset Required\", a reboot for \"Node Reboot Required\"")

struct cp_xid_info {
    int code;
    enum cp_xid_class cls;
    int sev;
    const char *meaning;
    const char *action;
};

#define CP_XID_ROW_(code, cls, sev, meaning, action) {code, cls, sev, meaning, action},
static const struct cp_xid_info cp_xid_table[] = {CP_XIDS(CP_XID_ROW_)};
#undef CP_XID_ROW_

/*! cp_xid_info() :
 *  @return : the table's row for Xid code, or a row of class CP_XID_UNKNOWN
 *            (meaning and action point at the catalogue) for other codes. */
static inline struct cp_xid_info cp_xid_info(int code)
{
    struct cp_xid_info u = {code, CP_XID_UNKNOWN, 1, "not in cuprobe's table (see NVIDIA's Xid catalogue)",
                            "look the code up in NVIDIA's Xid catalogue (" CP_XID_CATALOGUE ")"};

    for (size_t i = 0; i < sizeof(cp_xid_table) / sizeof(cp_xid_table[0]); i++)
        if (cp_xid_table[i].code == code)
            return cp_xid_table[i];
    return u;
}

/*! cp_xid_whose() :
 *  @return : the verdict of a class in a few words: "your code" for
 *            application Xids, "this GPU, not your code" for hardware
 *            ones, "follows an earlier error" for an aftermath Xid. */
static inline const char *cp_xid_whose(enum cp_xid_class cls)
{
    static const char *const w[] = {"your code", "this GPU, not your code",
                                    "this GPU's driver or firmware, not your code",
                                    "unknown: see the catalogue", "follows an earlier error"};

    return w[cls];
}

/*! cp_xid_class_name() : "application", "hardware", "driver", "unknown",
 *  "aftermath". */
static inline const char *cp_xid_class_name(enum cp_xid_class cls)
{
    static const char *const n[] = {"application", "hardware", "driver", "unknown", "aftermath"};

    return n[cls];
}

#endif /* CP_XID_H */
