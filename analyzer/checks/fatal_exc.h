/*
 * fatal_exc.h - the companion's "exception" record (docs/framework.md)
 * read into a struct, and what its message says in the seed's terms:
 * which kind of fatal error it is, which devices a mismatch names, which
 * collective and rank an NCCL failure names.  Used by check_fatal.c.
 */
#ifndef FATAL_EXC_H
#define FATAL_EXC_H

#include <stddef.h>
#include <stdint.h>

enum fe_kind {
    FE_OTHER = 0,
    FE_DEVICE_MISMATCH,     /* Expected all tensors to be on the same device */
    FE_OOM,                 /* CUDA out of memory / OutOfMemoryError */
    FE_NO_CUDA,             /* Torch not compiled with CUDA enabled */
    FE_INIT,                /* CUDA initialization failed / no driver / no device */
    FE_ASYNC,               /* illegal address, device-side assert, launch failure... */
    FE_NCCL,                /* NCCL error or watchdog timeout */
    FE_INTERRUPT,           /* KeyboardInterrupt */
    FE_SYNC,                /* a synchronous CUDA error: a device not visible */
    FE_WORKER,              /* re-raised from a worker process (DataLoader) */
};

typedef struct fe_frame {
    char file[512];
    char func[160];
    int64_t line;
    int user;
} fe_frame;

#define FE_FRAMES 6

typedef struct fe_exc {
    int have;
    uint64_t ts;
    char hook[32];          /* sys.excepthook, threading.excepthook, atexit */
    char thread[96];
    int main_thread;
    char type[160];
    char msg[4096];         /* unescaped */
    char cause[512];        /* "Type: message" of the first chained exception */
    int n_frames;           /* in the record */
    fe_frame raise_at;      /* the innermost frame: where it was raised */
    fe_frame user;          /* the innermost user frame (user = 0: none) */
    fe_frame tail[FE_FRAMES];   /* the innermost frames, outermost first */
    int n_tail;
    int have_torch;
    char torch_version[64];
    char torch_cuda[32];    /* "" when torch.version.cuda is None (CPU-only build) */
    int kind;               /* enum fe_kind */
    uint64_t cuda_code;     /* the CUresult the message names ("CUDA error: ..."), 0 */
} fe_exc;

/*! fe_exc_parse() : an "exception" record's JSON into *e (kind classified).
 *  @return : 0, or -1 when the text has no type. */
int fe_exc_parse(const char *json, size_t n, fe_exc *e);

/*! fe_classify() : enum fe_kind of an exception type and message. */
int fe_classify(const char *type, const char *msg);

/*! fe_cuda_code() : the CUresult a framework's "CUDA error: <text>" (or
 *  "CUDA driver error: <text>") message names, by the runtime's texts of
 *  cp_curesult.h, else the first driver name it holds ("CUDA_ERROR_...").
 *  @return : the code, or 0 when the message names none. */
uint64_t fe_cuda_code(const char *msg);

/*! fe_devices() : the distinct device names ("cuda:0", "cpu"...) a message
 *  mentions, in order, joined with " and " into buf.  @return : how many. */
int fe_devices(const char *msg, char *buf, size_t cap);

/*! fe_mismatch_arg() : the argument PyTorch names in a device-mismatch
 *  message ("target", "mat1"...), and the method, into the buffers ("" when
 *  absent). */
void fe_mismatch_arg(const char *msg, char *arg, size_t acap, char *method, size_t mcap);

/*! fe_nccl() : the collective (OpType=...), sequence number and rank an
 *  NCCL message names; -1 / "" when absent. */
void fe_nccl(const char *msg, char *op, size_t ocap, int64_t *seq, int64_t *rank,
             int64_t *timeout_ms);

/*! fe_first_line() : the first line of s (at most cap - 1 bytes) into buf. */
const char *fe_first_line(const char *s, char *buf, size_t cap);

#endif /* FATAL_EXC_H */
