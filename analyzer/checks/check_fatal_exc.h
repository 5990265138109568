/*
 * check_fatal_exc.h - the companion's "exception" record (docs/framework.md)
 * read into a struct, and what its message says in the seed's terms:
 * which kind of fatal error it is, which devices a mismatch names, which
 * collective and rank an NCCL failure names.  Used by check_fatal.c.
 */
#ifndef CHECK_FATAL_EXC_H
#define CHECK_FATAL_EXC_H

#include <stddef.h>
#include <stdint.h>

enum cp_exc_kind {
    CP_EXC_OTHER = 0,
    CP_EXC_DEVICE_MISMATCH,     /* Expected all tensors to be on the same device */
    CP_EXC_OOM,                 /* CUDA out of memory / OutOfMemoryError */
    CP_EXC_NO_CUDA,             /* Torch not compiled with CUDA enabled */
    CP_EXC_INIT,                /* CUDA initialization failed / no driver / no device */
    CP_EXC_ASYNC,               /* illegal address, device-side assert, launch failure... */
    CP_EXC_NCCL,                /* NCCL error or watchdog timeout */
    CP_EXC_INTERRUPT,           /* KeyboardInterrupt */
    CP_EXC_SYNC,                /* a synchronous CUDA error: a device not visible */
    CP_EXC_WORKER,              /* re-raised from a worker process (DataLoader) */
};

typedef struct cp_exc_frame {
    char file[512];
    char func[160];
    int64_t line;
    int user;
} cp_exc_frame;

#define CP_EXC_FRAMES 6

typedef struct cp_exc {
    int have;
    uint64_t ts;
    char hook[32];          /* sys.excepthook, threading.excepthook, atexit */
    char thread[96];
    int main_thread;
    char type[160];
    char msg[4096];         /* unescaped */
    char cause[512];        /* "Type: message" of the first chained exception */
    int n_frames;           /* in the record */
    cp_exc_frame raise_at;      /* the innermost frame: where it was raised */
    cp_exc_frame user;          /* the innermost user frame (user = 0: none) */
    cp_exc_frame tail[CP_EXC_FRAMES];   /* the innermost frames, outermost first */
    int n_tail;
    int have_torch;
    char torch_version[64];
    char torch_cuda[32];    /* "" when torch.version.cuda is None (CPU-only build) */
    int kind;               /* enum cp_exc_kind */
    int kind_from_trace;    /* kind CP_EXC_ASYNC from the trace's sticky error: the
                             * message names none (check_fatal.c) */
    uint64_t cuda_code;     /* the CUresult the message names (\"CUDA error: ...\"), 0 */
} cp_exc;

/*! cp_exc_parse() : an "exception" record's JSON into *e (kind classified).
 *  @return : 0, or -1 when the text has no type. */
int cp_exc_parse(const char *json, size_t n, cp_exc *e);

/*! cp_exc_classify() : enum cp_exc_kind of an exception type and message. */
int cp_exc_classify(const char *type, const char *msg);

/*! cp_exc_cuda_code() : the CUresult a framework's "CUDA error: <text>" (or
 *  "CUDA driver error: <text>") message names, by the runtime's texts of
 *  cp_curesult.h, else the first driver name it holds ("CUDA_ERROR_...").
 *  @return : the code, or 0 when the message names none. */
uint64_t cp_exc_cuda_code(const char *msg);

/*! cp_exc_devices() : the distinct device names ("cuda:0", "cpu"...) a message
 *  mentions, in order, joined with " and " into buf.  @return : how many. */
int cp_exc_devices(const char *msg, char *buf, size_t cap);

/*! cp_exc_mismatch_arg() : the argument PyTorch names in a device-mismatch
 *  message ("target", "mat1"...), and the method, into the buffers ("" when
 *  absent). */
void cp_exc_mismatch_arg(const char *msg, char *arg, size_t acap, char *method, size_t mcap);

/*! cp_exc_nccl() : the collective (OpType=...), sequence number and rank an
 *  NCCL message names; -1 / "" when absent. */
void cp_exc_nccl(const char *msg, char *op, size_t ocap, int64_t *seq, int64_t *rank,
             int64_t *timeout_ms);

/*! cp_exc_first_line() : the first line of s (at most cap - 1 bytes) into buf. */
const char *cp_exc_first_line(const char *s, char *buf, size_t cap);

#endif /* CHECK_FATAL_EXC_H */
