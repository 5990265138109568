/*
 * doctor_int.h - internals shared by the files of `cuprobe doctor`.
 *
 * Doctor checks a machine's GPU stack in four layers (hardware, driver,
 * runtime, allocation/transfer) and stops at the first broken one.  Every
 * finding is a check: a mark (ok, warning, failure, note), a short head, the
 * evidence, for failures the fix, and JSON members for machine readers.
 *
 * Layer 1 runs in the doctor process (it only reads files).  Layers 2-4 touch
 * the driver, which can hang or crash, so they run in a forked child that
 * streams its checks and step markers through a pipe (doctor_child.c); the
 * parent enforces the per-step timeout.  Only the doctor files include this.
 */
#ifndef CP_DOCTOR_INT_H
#define CP_DOCTOR_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define CP_DR_LAYERS 4
#define CP_DR_MAX_PCI 64
#define CP_DR_HEAD 160
#define CP_DR_TEXT 768
#define CP_DR_DATA 1024

enum cp_dr_mark { CP_DR_OK, CP_DR_WARN, CP_DR_FAIL, CP_DR_NOTE };

struct cp_dr_check {
    int layer;                 /* 1..4 */
    enum cp_dr_mark mark;
    char id[48];               /* stable name, e.g. "pci.devices" */
    char head[CP_DR_HEAD];     /* short statement, used in the verdict */
    char evidence[CP_DR_TEXT]; /* what was seen, with paths and numbers */
    char fix[CP_DR_TEXT];      /* how to fix it ("" when none) */
    char data[CP_DR_DATA];     /* JSON object members, without braces */
};

/* The checks so far.  In the driver child, out_fd >= 0: each check is
 * written to the pipe once the next one starts (or on flush). */
struct cp_dr_report {
    struct cp_dr_check *v;
    size_t n, cap;
    int out_fd;
    size_t sent; /* checks already written to out_fd */
};

/* One NVIDIA display/3D controller found in sysfs. */
struct cp_dr_pci {
    unsigned dom, bus, dev, fn;
    char bdf[16];        /* "0000:18:00.0" */
    unsigned device_id;  /* PCI device id */
    unsigned pci_class;  /* 24-bit class code */
    char driver[48];     /* bound kernel driver, "" when unbound */
    int cur_width, max_width;       /* 0 when unknown */
    double cur_speed, max_speed;    /* GT/s, 0 when unknown */
};

/* What `--python` found out (doctor_py.c). */
struct cp_dr_py {
    bool asked;          /* --python given */
    bool ran;            /* interpreter ran and answered */
    char exe[256];
    char fail[CP_DR_TEXT]; /* why it did not run, "" when it did */
    char python[64];     /* interpreter version */
    char torch[64];      /* torch.__version__, "" when absent */
    char torch_err[256]; /* import error when torch is missing */
    char torch_cuda[32]; /* torch.version.cuda, "none" for CPU builds */
    char torch_arch[512];/* space-separated, e.g. "sm_80 sm_90 compute_90" */
    char jax[64];        /* jax.__version__ when torch is absent */
    char jax_cuda[16];   /* CUDA major of the jax plugin */
};

struct cp_dr_ctx {
    /* options */
    bool json;
    int timeout_s;        /* per driver step and for python */
    int min_cuda;         /* e.g. 12040 for --min-cuda 12.4, 0 = none */
    size_t bw_bytes;      /* bandwidth test size */
    int bw_reps;
    /* injectable roots */
    const char *sysfs, *procfs, *devfs;
    /* layer 1 findings */
    struct cp_dr_pci pci[CP_DR_MAX_PCI];
    int npci;
    bool sysfs_ok;
    char kmod_version[64]; /* from /proc/driver/nvidia/version */
    bool mod_nvidia, mod_uvm;
    struct cp_dr_py py;
    /* layer 2 findings the later layers use */
    int driver_version;   /* cuDriverGetVersion, 0 when unknown */
    struct cp_dr_report rep;
};

/* --- doctor_report.c ---------------------------------------------------- */

/*! cp_dr_add() :
 *  Appends a check to ctx->rep with a printf-formatted head; evidence, fix
 *  and data start empty.  In the driver child the previous check is sent.
 *  @return : the new check (never NULL: exits on out-of-memory). */
struct cp_dr_check *cp_dr_add(struct cp_dr_report *r, int layer, enum cp_dr_mark mark,
                              const char *id, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/*! cp_dr_ev() / cp_dr_fix() :
 *  Append printf-formatted text to a check's evidence / fix (truncates). */
void cp_dr_ev(struct cp_dr_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cp_dr_fix(struct cp_dr_check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*! cp_dr_kv_str() / cp_dr_kv_int() / cp_dr_kv_num() / cp_dr_kv_raw() :
 *  Add one JSON member to a check's data (string escaped; raw verbatim). */
void cp_dr_kv_str(struct cp_dr_check *c, const char *key, const char *val);
void cp_dr_kv_int(struct cp_dr_check *c, const char *key, long long val);
void cp_dr_kv_num(struct cp_dr_check *c, const char *key, double val);
void cp_dr_kv_raw(struct cp_dr_check *c, const char *key, const char *json);

/*! cp_dr_layer_failed() : @return : true when layer has a failed check. */
bool cp_dr_layer_failed(const struct cp_dr_report *r, int layer);

/*! cp_dr_send() :
 *  In the child: write all checks not yet sent, then, when step is not NULL,
 *  a step marker "layer step" so the parent can name a hung call.
 *  @return : 0, or -errno when the pipe broke. */
int cp_dr_send(struct cp_dr_report *r, int layer, const char *step);

/*! cp_dr_recv_line() :
 *  In the parent: parse one line from the child.  A check line is appended
 *  to r; a step line fills *layer and step (size n).
 *  @return : 1 for a check, 2 for a step, -EINVAL for a malformed line. */
int cp_dr_recv_line(struct cp_dr_report *r, char *line, int *layer, char *step, size_t n);

/*! cp_dr_print() :
 *  Print the checklist (text or JSON per ctx->json) to stdout.
 *  @return : the exit status: 0 all passed (warnings allowed), 1 a failure. */
int cp_dr_print(const struct cp_dr_ctx *ctx);

/*! cp_dr_fmt() :
 *  snprintf for paths and names that may be truncated (no warning noise).
 *  @return : 0, or -ENAMETOOLONG when the text did not fit. */
int cp_dr_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*! cp_dr_json_str() :
 *  Append s to buf (size n, NUL-terminated) as a quoted JSON string. */
void cp_dr_json_str(char *buf, size_t n, const char *s);

/* --- doctor_hw.c: layer 1 ----------------------------------------------- */

/*! cp_dr_hw() : scan sysfs/procfs/dev into ctx and add the layer 1 checks. */
void cp_dr_hw(struct cp_dr_ctx *ctx);

/*! cp_dr_pci_find() :
 *  @return : the index in ctx->pci of the device at bus id text `busid`
 *            ("0000:18:00.0", any hex case, 4- or 8-digit domain), or -1. */
int cp_dr_pci_find(const struct cp_dr_ctx *ctx, const char *busid);

/* --- doctor_py.c: the framework build ------------------------------------- */

/*! cp_dr_py_probe() :
 *  Run the interpreter ctx->py.exe with a timeout and fill ctx->py. */
void cp_dr_py_probe(struct cp_dr_ctx *ctx);

/*! cp_dr_py_check() :
 *  Add layer 3 checks comparing ctx->py with the driver version and the
 *  compute capabilities ccs[0..n) (e.g. 90 for 9.0). */
void cp_dr_py_check(struct cp_dr_ctx *ctx, const int *ccs, int n);

/* --- doctor_drv.c / doctor_mem.c: layers 2-4, in the child ----------------- */

/*! cp_dr_driver_layers() :
 *  Run layers 2-4 (stops after a failed layer).  Called in the child with
 *  ctx->rep.out_fd set; sends everything before returning. */
void cp_dr_driver_layers(struct cp_dr_ctx *ctx);

#include "cp_cuda.h"

/* Driver entry points doctor resolves with dlsym (NULL when absent). */
struct cp_dr_cuda {
    void *lib;
    CUresult (*init)(unsigned int);
    CUresult (*driver_get_version)(int *);
    CUresult (*get_error_name)(CUresult, const char **);
    CUresult (*device_get_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*device_get_name)(char *, int, CUdevice);
    CUresult (*device_get_uuid)(CUuuid *, CUdevice);
    CUresult (*device_total_mem)(size_t *, CUdevice);
    CUresult (*device_get_attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*device_get_pci_bus_id)(char *, int, CUdevice);
    CUresult (*primary_ctx_retain)(CUcontext *, CUdevice);
    CUresult (*primary_ctx_release)(CUdevice);
    CUresult (*ctx_set_current)(CUcontext);
    CUresult (*ctx_synchronize)(void);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*memcpy_htod)(CUdeviceptr, const void *, size_t);
    CUresult (*memcpy_dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*mem_host_alloc)(void **, size_t, unsigned int);
    CUresult (*mem_free_host)(void *);
    CUresult (*mem_get_info)(size_t *, size_t *);
};

/*! cp_dr_mem_layer() :
 *  Layer 4 on each of the n visible devices. */
void cp_dr_mem_layer(struct cp_dr_ctx *ctx, const struct cp_dr_cuda *cu, int n);

/* --- doctor_cuerr.c ------------------------------------------------------- */

/*! cp_dr_cu_errstr() :
 *  @return : "code NAME" text for a CUresult: the shared table
 *            (include/cp_curesult.h), else cuGetErrorName when available;
 *            static storage (two alternating buffers). */
const char *cp_dr_cu_errstr(const struct cp_dr_cuda *cu, int res);

/*! cp_dr_cu_meaning() :
 *  @return : what a CUresult from cuInit or a device query means for the
 *            machine's setup, or "see cuGetErrorString". */
const char *cp_dr_cu_meaning(int res);

/* --- doctor_child.c ------------------------------------------------------- */

/*! cp_dr_run_child() :
 *  Fork, run cp_dr_driver_layers() in the child, collect its checks into
 *  ctx->rep with a per-step timeout of ctx->timeout_s; on a timeout or crash
 *  the child is killed and a failed check naming the step is added. */
void cp_dr_run_child(struct cp_dr_ctx *ctx);

/*! cp_dr_read_file() :
 *  Read up to n-1 bytes of path into buf, NUL-terminated, trailing newline
 *  stripped.  @return : 0, or -errno. */
int cp_dr_read_file(const char *path, char *buf, size_t n);

#endif /* CP_DOCTOR_INT_H */
