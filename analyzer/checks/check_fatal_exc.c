/*
 * check_fatal_exc.c - the companion's "exception" record and its message (see
 * check_fatal_exc.h).  The message patterns are PyTorch's own texts (2.0-2.11:
 * c10/core/TensorImpl, ATen's TensorIterator and checkSameDevice,
 * c10/cuda/CUDAException, ProcessGroupNCCL's watchdog), matched as
 * substrings so that a framework wrapping them (Lightning, DeepSpeed) still
 * matches.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_curesult.h"
#include "cp_fw.h"
#include "check_fatal_exc.h"

/* A JSON string member, unescaped (\uXXXX to UTF-8; surrogates as '?'). */
static int fe_jstr(cp_jv v, const char *key, char *buf, size_t cap)
{
    cp_jv m;
    if (!cap || cp_json_member(v, key, &m) || m.n < 2 || m.p[0] != '"')
        return -1;
    size_t o = 0;
    for (size_t i = 1; i + 1 < m.n && o + 4 < cap; i++) {
        char c = m.p[i];
        if (c != '\\' || i + 2 >= m.n) {
            buf[o++] = c;
            continue;
        }
        c = m.p[++i];
        switch (c) {
        case 'n': buf[o++] = '\n'; break;
        case 't': buf[o++] = '\t'; break;
        case 'r': buf[o++] = '\r'; break;
        case 'b': case 'f': buf[o++] = ' '; break;
        case 'u': {
            unsigned cp = 0;
            int ok = i + 4 < m.n;
            for (int k = 1; ok && k <= 4; k++) {
                int h = m.p[i + k];
                cp = cp * 16 + (unsigned)(isdigit(h) ? h - '0' : (tolower(h) - 'a' + 10));
                ok = isxdigit(h);
            }
            if (!ok)
                break;
            i += 4;
            if (cp >= 0xd800 && cp < 0xe000)
                buf[o++] = '?';
            else if (cp < 0x80)
                buf[o++] = (char)cp;
            else if (cp < 0x800) {
                buf[o++] = (char)(0xc0 | (cp >> 6));
                buf[o++] = (char)(0x80 | (cp & 0x3f));
            } else {
                buf[o++] = (char)(0xe0 | (cp >> 12));
                buf[o++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                buf[o++] = (char)(0x80 | (cp & 0x3f));
            }
            break;
        }
        default: buf[o++] = c; break;
        }
    }
    buf[o] = 0;
    return 0;
}

static void fe_frame_parse(cp_jv f, cp_exc_frame *out)
{
    memset(out, 0, sizeof *out);
    fe_jstr(f, "file", out->file, sizeof out->file);
    fe_jstr(f, "func", out->func, sizeof out->func);
    cp_json_i64(f, "line", &out->line);
    cp_json_bool(f, "user", &out->user);
}

int cp_exc_parse(const char *json, size_t n, cp_exc *e)
{
    cp_jv v = { json, n }, frames, f, chain, t;
    memset(e, 0, sizeof *e);
    if (fe_jstr(v, "type", e->type, sizeof e->type) != 0)
        return -1;
    fe_jstr(v, "message", e->msg, sizeof e->msg);
    fe_jstr(v, "hook", e->hook, sizeof e->hook);
    fe_jstr(v, "thread", e->thread, sizeof e->thread);
    cp_json_bool(v, "main_thread", &e->main_thread);
    int64_t user = -1;
    cp_json_i64(v, "user_frame", &user);
    if (cp_json_member(v, "frames", &frames) == 0) {
        cp_exc_frame all[CP_EXC_FRAMES];
        size_t it = 0;
        int k = 0;
        while (cp_json_next(frames, &it, &f) == 1) {
            fe_frame_parse(f, &all[k % CP_EXC_FRAMES]);
            if (k == user)
                e->user = all[k % CP_EXC_FRAMES];
            e->raise_at = all[k % CP_EXC_FRAMES];
            k++;
        }
        e->n_frames = k;
        e->n_tail = k < CP_EXC_FRAMES ? k : CP_EXC_FRAMES;
        for (int i = 0; i < e->n_tail; i++)
            e->tail[i] = all[(k - e->n_tail + i) % CP_EXC_FRAMES];
    }
    size_t it = 0;
    if (cp_json_member(v, "chain", &chain) == 0 && cp_json_next(chain, &it, &f) == 1) {
        char ty[128], msg[360];
        if (fe_jstr(f, "type", ty, sizeof ty) == 0) {
            msg[0] = 0;
            fe_jstr(f, "message", msg, sizeof msg);
            snprintf(e->cause, sizeof e->cause, "%s: %s", ty, msg);
        }
    }
    if (cp_json_member(v, "torch", &t) == 0 && t.n && t.p[0] == '{') {
        e->have_torch = 1;
        fe_jstr(t, "version", e->torch_version, sizeof e->torch_version);
        fe_jstr(t, "cuda", e->torch_cuda, sizeof e->torch_cuda);
    }
    e->kind = cp_exc_classify(e->type, e->msg);
    e->cuda_code = cp_exc_cuda_code(e->msg);
    if (e->kind == CP_EXC_OTHER && e->cause[0]) {
        e->kind = cp_exc_classify("", e->cause);
        e->cuda_code = cp_exc_cuda_code(e->cause);
    }
    e->have = 1;
    return 0;
}

static int fe_has(const char *s, const char *needle)
{
    return strstr(s, needle) != NULL;
}

uint64_t cp_exc_cuda_code(const char *msg)
{
    static const char *const prefixes[] = { "CUDA error: ", "CUDA driver error: " };
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        const char *s = strstr(msg, prefixes[i]);
        uint64_t code = s ? cp_cuerr_of_text(s + strlen(prefixes[i])) : 0;
        if (code)
            return code;
    }
    /* The driver's own names, as XLA and CuPy raise them
     * ("CUDA_ERROR_INVALID_DEVICE: invalid device ordinal"). */
    const char *s = strstr(msg, "CUDA_ERROR_");
    return s ? cp_curesult_of_name(s) : 0;
}

int cp_exc_classify(const char *type, const char *msg)
{
    if (strcmp(type, "KeyboardInterrupt") == 0)
        return CP_EXC_INTERRUPT;
    /* PyTorch's DataLoader re-raises a worker's exception in the parent
     * with the worker's traceback in the text (ExceptionWrapper.reraise):
     * what it names is the worker's, not this process's. */
    if (fe_has(msg, " in DataLoader worker process ") &&
        fe_has(msg, "Original Traceback (most recent call last):"))
        return CP_EXC_WORKER;
    if (fe_has(msg, "Expected all tensors to be on the same device") ||
        fe_has(msg, "to be on the same device") || fe_has(msg, "are on different devices"))
        return CP_EXC_DEVICE_MISMATCH;
    /* A message that names its CUresult is classified by the code: every
     * CUDA error text of PyTorch ends in advice about asynchronous errors
     * and device-side assertions, whatever the error was. */
    switch (cp_cuerr_class(cp_exc_cuda_code(msg))) {
    case CP_CUERR_SYNC_DEVICE: return CP_EXC_SYNC;
    case CP_CUERR_SYNC_OOM: return CP_EXC_OOM;
    case CP_CUERR_SYNC_DRIVER:
    case CP_CUERR_SYNC_OLD: return CP_EXC_INIT;
    case CP_CUERR_ASYNC: return CP_EXC_ASYNC;
    default: break;
    }
    if (fe_has(type, "OutOfMemoryError") || fe_has(msg, "CUDA out of memory") ||
        fe_has(msg, "CUDA error: out of memory") || fe_has(msg, "RESOURCE_EXHAUSTED: Out of memory") ||
        fe_has(msg, "cudaErrorMemoryAllocation"))
        return CP_EXC_OOM;
    if (fe_has(msg, "Torch not compiled with CUDA enabled"))
        return CP_EXC_NO_CUDA;
    if (fe_has(msg, "NCCL") || fe_has(type, "DistBackendError") ||
        fe_has(msg, "Watchdog caught collective operation timeout"))
        return CP_EXC_NCCL;
    if (fe_has(msg, "illegal memory access") || fe_has(msg, "device-side assert") ||
        fe_has(msg, "misaligned address") || fe_has(msg, "unspecified launch failure") ||
        fe_has(msg, "illegal instruction") || fe_has(msg, "hardware stack error") ||
        fe_has(msg, "CUDA error: unknown error") || fe_has(msg, "an illegal") ||
        fe_has(msg, "cudaErrorIllegalAddress") || fe_has(msg, "cudaErrorAssert") ||
        fe_has(msg, "cudaErrorLaunchFailure"))
        return CP_EXC_ASYNC;
    if (fe_has(msg, "CUDA initialization") || fe_has(msg, "Found no NVIDIA driver") ||
        fe_has(msg, "no CUDA-capable device") || fe_has(msg, "NVIDIA driver on your system is too old") ||
        fe_has(msg, "CUDA driver initialization failed") || fe_has(msg, "CUDA unknown error") ||
        fe_has(msg, "No CUDA GPUs are available") || fe_has(msg, "invalid device ordinal") ||
        fe_has(msg, "CUDA driver version is insufficient") || fe_has(msg, "cudaGetDeviceCount"))
        return CP_EXC_INIT;
    return CP_EXC_OTHER;
}

/* Length of a device name at s ("cuda:0", "cuda", "cpu", "mps", "meta",
 * "xla:1"), or 0. */
static size_t fe_dev_at(const char *s, const char *start)
{
    static const char *const kinds[] = { "cuda", "cpu", "mps", "meta", "xla", "xpu", "hpu" };
    if (s > start && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
        return 0;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t n = strlen(kinds[k]);
        if (strncmp(s, kinds[k], n) != 0)
            continue;
        if (s[n] == ':' && isdigit((unsigned char)s[n + 1])) {
            n++;
            while (isdigit((unsigned char)s[n]))
                n++;
        }
        if (isalnum((unsigned char)s[n]) || s[n] == '_')
            return 0;
        return n;
    }
    return 0;
}

int cp_exc_devices(const char *msg, char *buf, size_t cap)
{
    char seen[8][16];
    int n = 0;
    size_t o = 0;
    buf[0] = 0;
    for (const char *s = msg; *s && n < 8; s++) {
        size_t len = fe_dev_at(s, msg);
        if (!len || len >= sizeof seen[0])
            continue;
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= strlen(seen[i]) == len && strncmp(seen[i], s, len) == 0;
        if (!dup) {
            memcpy(seen[n], s, len);
            seen[n][len] = 0;
            int w = snprintf(buf + o, cap - o, "%s%s", n ? " and " : "", seen[n]);
            if (w > 0 && (size_t)w < cap - o)
                o += (size_t)w;
            n++;
        }
        s += len - 1;
    }
    return n;
}

/* Copy the identifier after the pattern pat in msg into out. */
static void fe_word_after(const char *msg, const char *pat, char *out, size_t cap)
{
    const char *s = strstr(msg, pat);
    size_t n = 0;
    out[0] = 0;
    if (!s || !cap)
        return;
    s += strlen(pat);
    while (s[n] && (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.') && n + 1 < cap)
        n++;
    memcpy(out, s, n);
    out[n] = 0;
}

void cp_exc_mismatch_arg(const char *msg, char *arg, size_t acap, char *method, size_t mcap)
{
    /* 2.1+: "... but got target is on cpu, different from other tensors on
     * cuda:0 (when checking argument in method wrapper_CUDA_nll_loss_forward)"
     * 1.x-2.0: "(when checking argument for argument mat1 in method
     * wrapper_addmm)" */
    fe_word_after(msg, "but got ", arg, acap);
    if (!arg[0] || !strstr(msg, "is on"))
        fe_word_after(msg, "for argument ", arg, acap);
    fe_word_after(msg, "in method ", method, mcap);
}

static int64_t fe_num_after(const char *msg, const char *pat)
{
    const char *s = strstr(msg, pat);
    if (!s)
        return -1;
    s += strlen(pat);
    return isdigit((unsigned char)*s) ? strtoll(s, NULL, 10) : -1;
}

void cp_exc_nccl(const char *msg, char *op, size_t ocap, int64_t *seq, int64_t *rank,
             int64_t *timeout_ms)
{
    fe_word_after(msg, "OpType=", op, ocap);
    *seq = fe_num_after(msg, "SeqNum=");
    *rank = fe_num_after(msg, "[Rank ");
    if (*rank < 0)
        *rank = fe_num_after(msg, " Rank ");
    *timeout_ms = fe_num_after(msg, "Timeout(ms)=");
}

const char *cp_exc_first_line(const char *s, char *buf, size_t cap)
{
    size_t n = strcspn(s, "\n");
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return buf;
}
