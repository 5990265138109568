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
#include <stdint.h>

#define CP_DR_LAYERS 4
#define CP_DR_MAX_PCI 64
#define CP_DR_HEAD 160
#define CP_DR_TEXT 1024
#define CP_DR_DATA 2048

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
    char uuid[48];       /* from NVML or the driver probe, "" when unknown */
    int cuda;            /* CUDA ordinal in this process, -1 when not visible or not probed */
    bool aer_sys;        /* sysfs has AER counters for it or a bridge above it */
};

/* ---- the kernel log (doctor_log.c, doctor_xid.c, doctor_aer.c) ---------- */

#define CP_DR_XID_MAX 64
#define CP_DR_AER_MAX 64
#define CP_DR_LOG_UUIDS 64
/* Correctable PCIe errors (AER, NVML's replay counter) from this many on
 * are a storm: a slot, riser or cable that loses data. */
#define CP_DR_AER_STORM 1000

/* One GPU's Xid events of one code. */
struct cp_dr_xid {
    unsigned dom, bus, dev, fn;
    int code;
    unsigned long count;
    int64_t first_us, last_us;     /* kernel log clock, -1 when not stamped */
    int64_t first_wall, last_wall; /* seconds since the epoch, -1 when unknown */
    char procs[192];               /* "python3 (pid 12), ..." */
    char first_msg[200], last_msg[200];
};

/* PCIe AER errors of one device: from sysfs (its aer_dev_* counters) and
 * from the kernel log, and where it sits on a GPU's path to the CPU. */
struct cp_dr_aer_name {
    char name[28];
    unsigned long long n;
};
struct cp_dr_aer {
    unsigned dom, bus, dev, fn;
    char bdf[16];
    unsigned long long rcv[3];  /* kernel log, "error received" at a port: corrected, non-fatal, fatal */
    unsigned long long log[3];  /* kernel log, "PCIe Bus Error" of the device itself, the same */
    unsigned long long sys[3];  /* sysfs totals since boot, the same */
    bool have_sys;
    struct cp_dr_aer_name lname[8], sname[8]; /* errors by name: kernel log, sysfs */
    int nl, ns;
    int gpu;                    /* index in ctx->pci of the GPU below it, -1 unknown */
    bool nvidia;                /* the nvidia driver logged its errors: it is a GPU */
    int role;                   /* enum cp_dr_aer_role */
    char above[16], below[16];  /* its neighbours on the GPU's path, "" none */
    char root[16];              /* the root port of that path (sysfs, or the port that logged
                                 * "error received" for it), "" unknown */
};

enum cp_dr_aer_role { CP_DR_AER_GPU, CP_DR_AER_BRIDGE, CP_DR_AER_ROOT, CP_DR_AER_OTHER };

struct cp_dr_klog {
    char source[320];          /* what was read ("/dev/kmsg", a path, "journalctl -k"), "" none */
    char tried[1024];          /* the sources not used, and why */
    bool readable;
    bool foreign;              /* --kernel-log: another machine's log (no local GPU names) */
    unsigned long long lines;  /* lines read */
    unsigned long long xid_lines, aer_lines;
    int64_t now_us;            /* the kernel log's clock now (cp_kmsg_clock_now or CLOCK_MONOTONIC) */
    int64_t now_wall;          /* CLOCK_REALTIME now, seconds */
    struct cp_dr_xid xid[CP_DR_XID_MAX];
    int nxid;
    unsigned long xid_dropped; /* events of groups beyond CP_DR_XID_MAX */
    struct cp_dr_aer aer[CP_DR_AER_MAX];
    int naer;
    struct {                   /* "NVRM: GPU at PCI:0000:18:00: GPU-..." lines */
        unsigned dom, bus, dev;
        char uuid[48];
    } uuid[CP_DR_LOG_UUIDS];
    int nuuid;
    int fail_layer;            /* the first layer the log's findings fail, 0 none */
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
    const char *kernel_log;  /* --kernel-log FILE: only that log is analyzed */
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
    bool cuda_probed;     /* layer 3 listed the visible devices (ctx->pci[].cuda) */
    struct cp_dr_klog log;
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

/*! cp_dr_send_gpu() :
 *  In the child: tell the parent which GPU sits at PCI bus id `pci`: its
 *  UUID and its CUDA ordinal in this process (-1 when not known).
 *  @return : 0, or -errno. */
int cp_dr_send_gpu(struct cp_dr_report *r, const char *pci, const char *uuid, int ordinal);

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

/*! cp_dr_gpu_name() :
 *  "physical GPU 1 (PCI 0000:28:00.0, GPU-..., CUDA device 0)" into buf
 *  for the GPU at dom:bus:dev.fn: its place in bus order (nvidia-smi's
 *  numbering), UUID, and CUDA ordinal in this process where known; "GPU at
 *  PCI ..." for one sysfs does not list (another machine's log, or a GPU
 *  of this one gone from the bus: "not on the PCI bus now").
 *  Without full: only "physical GPU 1 (PCI 0000:28:00.0)".
 *  @return : buf. */
const char *cp_dr_gpu_name(const struct cp_dr_ctx *ctx, unsigned dom, unsigned bus, unsigned dev, unsigned fn,
                           bool full, char *buf, size_t n);

/*! cp_dr_gpu_set() : note what the driver child said about the GPU at
 *  PCI bus id `pci` (cp_dr_send_gpu). */
void cp_dr_gpu_set(struct cp_dr_ctx *ctx, const char *pci, const char *uuid, int ordinal);

/*! cp_dr_pci_find_bdf() : @return : the index in ctx->pci of the GPU at
 *  dom:bus:dev.fn, or -1. */
int cp_dr_pci_find_bdf(const struct cp_dr_ctx *ctx, unsigned dom, unsigned bus, unsigned dev, unsigned fn);

/*! cp_dr_pci_find() :
 *  @return : the index in ctx->pci of the device at bus id text `busid`
 *            ("0000:18:00.0", any hex case, 4- or 8-digit domain), or -1. */
int cp_dr_pci_find(const struct cp_dr_ctx *ctx, const char *busid);

/* --- doctor_cmd.c: helper programs ---------------------------------------- */

/*! cp_dr_run_cmd() :
 *  Run argv[0] (searched in PATH) with argv for at most timeout_s seconds
 *  (then its process group is killed); each line of its stdout (and of its
 *  stderr when merge_err) goes to line(arg, text) as it comes; otherwise
 *  stderr is kept in err (size en, lines joined by "; ").
 *  @return : its exit status (signals as 128 + signo), -ETIMEDOUT, or
 *            -errno when it could not be started (err says why). */
int cp_dr_run_cmd(const char *const argv[], int timeout_s, bool merge_err, void (*line)(void *, char *), void *arg,
                  char *err, size_t en);

/* --- doctor_log.c, doctor_xid.c, doctor_aer.c: the kernel log -------------- */

/*! cp_dr_log_read() :
 *  Read the kernel log: --kernel-log FILE, else CUPROBE_KMSG, else
 *  /dev/kmsg (CUPROBE_DEV_ROOT; non-blocking, from the start of the ring
 *  buffer), else `journalctl -k -b`; note why each source before the one
 *  used (or every source) could not be read.  Its Xid and AER lines go to
 *  cp_dr_xid_line() and cp_dr_aer_line(). */
void cp_dr_log_read(struct cp_dr_ctx *ctx);

/*! cp_dr_log_hint() : where to look for the GPU's own errors, for a fix:
 *  the kernel log's checks when doctor read the log, else the command. */
const char *cp_dr_log_hint(const struct cp_dr_ctx *ctx);

/*! cp_dr_log_checks() :
 *  Add the kernel log's checks (which source was read, or that it holds
 *  nothing bad; then the Xid and AER findings).  Called once the driver
 *  child reported the GPUs' UUIDs and CUDA ordinals. */
void cp_dr_log_checks(struct cp_dr_ctx *ctx);

/*! cp_dr_xid_line() : account one line of the log to the Xid groups and
 *  the GPU UUIDs the driver logs.  @return : 1 when it was an Xid line. */
int cp_dr_xid_line(struct cp_dr_klog *log, const char *text, int64_t us, int64_t wall);

/*! cp_dr_xid_checks() : one check per GPU and Xid code (layer 1 hardware,
 *  layer 2 driver or application).  @return : the number added. */
int cp_dr_xid_checks(struct cp_dr_ctx *ctx);

/*! cp_dr_xid_fail_layer() : the layer the Xid events fail, 0 none. */
int cp_dr_xid_fail_layer(const struct cp_dr_klog *log);

/*! cp_dr_aer_line() : account one AER line of the log (state carries the
 *  device of the last "PCIe Bus Error" line to its detail lines).
 *  @return : 1 when it was an AER line. */
int cp_dr_aer_line(struct cp_dr_klog *log, const char *text, int *state);

/*! cp_dr_aer_sysfs() : read the AER counters of every GPU and every
 *  bridge above it up to its root port, and place the kernel log's AER
 *  devices on those paths. */
void cp_dr_aer_sysfs(struct cp_dr_ctx *ctx);

/*! cp_dr_aer_checks() : one check per device with PCIe errors, naming the
 *  GPU below it and the link.  @return : the number added. */
int cp_dr_aer_checks(struct cp_dr_ctx *ctx);

/*! cp_dr_aer_fail_layer() : 1 when an uncorrectable error was seen, else 0. */
int cp_dr_aer_fail_layer(const struct cp_dr_klog *log);

/* --- doctor_nvml.c: NVML, in the driver child ------------------------------ */

/*! cp_dr_nvml() :
 *  Load libnvidia-ml.so.1 (absent: a note, "not checked") and add, per GPU,
 *  what NVML says: ECC errors, row remapping or retired pages, clock
 *  throttling, persistence mode, PCIe replays (layer 1, persistence at
 *  layer 2); each GPU's UUID goes to the parent (cp_dr_send_gpu). */
void cp_dr_nvml(struct cp_dr_ctx *ctx);

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
