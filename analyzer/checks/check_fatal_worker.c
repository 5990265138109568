/*
 * check_fatal_worker.c - a worker process's exception re-raised in its
 * parent, read back from the message (see check_fatal_worker.h).  The text
 * is Python's traceback format (traceback.format_exception, which PyTorch's
 * ExceptionWrapper keeps), matched line by line:
 *   Caught <Type> in <what>.
 *   Original Traceback (most recent call last):
 *     File "<file>", line <n>, in <func>
 *       <source>            (and, 3.11+, a line of ^~~ markers)
 *   <Type>: <message>
 * A chained exception (raised while handling another, or "from" it) is
 * formatted cause first: each cause's traceback and "<Type>: <message>",
 * a line of prose, then "Traceback (most recent call last):" and the next.
 * The last exception is the one the worker raised; its line is the last
 * frame, and the first cause is kept to be named beside it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fatal_worker.h"

#define FW_TB "Original Traceback (most recent call last):"
#define FW_TB_NEXT "Traceback (most recent call last):"

/* The line at s (up to '\n') into buf. */
static const char *fw_line(const char *s, char *buf, size_t cap)
{
    size_t n = strcspn(s, "\n");
    snprintf(buf, cap, "%.*s", (int)n, s);
    return buf;
}

/* "  File "x", line 3, in f" into *f.  @return : 0, or -1 for another line. */
static int fw_frame(const char *l, cp_exc_frame *f)
{
    const char *q, *ln;
    if (strncmp(l, "  File \"", 8) != 0 || !(q = strstr(l + 8, "\", line ")))
        return -1;
    memset(f, 0, sizeof *f);
    snprintf(f->file, sizeof f->file, "%.*s", (int)(q - (l + 8)), l + 8);
    f->line = strtoll(q + 8, NULL, 10);
    ln = strstr(q, ", in ");
    if (ln)
        snprintf(f->func, sizeof f->func, "%s", ln + 5);
    f->user = cp_py_user(f->file);
    return 0;
}

/* CUDA's refusals of a child forked after its parent initialised it:
 * PyTorch's own check, the runtime's and the driver's errors. */
static int fw_fork_cuda(const char *type, const char *msg)
{
    return strstr(msg, "Cannot re-initialize CUDA in forked subprocess") != NULL ||
           (strstr(type, "Error") && (strstr(msg, "CUDA error: initialization error") ||
                                      strstr(msg, "CUDA_ERROR_NOT_INITIALIZED")));
}

int cp_worker_parse(const char *msg, cp_worker *w)
{
    char l[1024];
    const char *c = strstr(msg, "Caught "), *tb = strstr(msg, FW_TB), *in;
    memset(w, 0, sizeof *w);
    if (!c || !tb)
        return -1;
    /* "Caught RuntimeError in DataLoader worker process 0." */
    fw_line(c + 7, l, sizeof l);
    in = strstr(l, " in ");
    if (in) {
        size_t n = strlen(in + 4);
        while (n && in[4 + n - 1] == '.')
            n--;
        snprintf(w->what, sizeof w->what, "%.*s", (int)n, in + 4);
    }
    for (const char *s = tb + strlen(FW_TB); *s;) {
        s += *s == '\n';
        fw_line(s, l, sizeof l);
        cp_exc_frame f;
        if (strncmp(l, FW_TB_NEXT, sizeof FW_TB_NEXT - 1) == 0) {
            /* The next exception of a chain: the one before is its cause. */
            if (w->type[0] && !w->cause[0])
                snprintf(w->cause, sizeof w->cause, "%s: %s", w->type, w->msg);
            w->type[0] = w->msg[0] = 0;
        } else if (fw_frame(l, &f) == 0) {
            w->raise_at = f;
            if (f.user)
                w->user = f;
            w->n_frames++;
        } else if (w->n_frames && l[0] && l[0] != ' ' && strchr(l, ':') && !w->type[0]) {
            /* The exception line after the frames: "Type: message". */
            const char *colon = strchr(l, ':');
            snprintf(w->type, sizeof w->type, "%.*s", (int)(colon - l), l);
            snprintf(w->msg, sizeof w->msg, "%s", colon + 1 + (colon[1] == ' '));
            /* CUDA refusing the fork may be any exception of the chain. */
            w->fork_cuda |= fw_fork_cuda(w->type, w->msg);
        }
        s += strcspn(s, "\n");
    }
    return w->n_frames ? 0 : -1;
}

void cp_worker_explain(cp_proc *p, const cp_worker *w, cp_finding *f)
{
    const cp_exc_frame *b = w->user.file[0] ? &w->user : &w->raise_at;
    cp_finding_line(f, "In %s, at the line above: %s: %s%s%s%s", w->what[0] ? w->what : "the worker",
                    w->type[0] ? w->type : "an exception", w->msg,
                    w->cause[0] ? " (raised while handling " : "", w->cause,
                    w->cause[0] ? ")" : "");
    if (w->fork_cuda) {
        const char *at = p->first_cuda_stack ? cp_site_label(&p->stacks, p->first_cuda_stack)
                                             : NULL;
        char forks[64] = "forked its workers";
        if (p->n_forks)
            snprintf(forks, sizeof forks, "forked %llu process%s", (unsigned long long)p->n_forks,
                     p->n_forks == 1 ? "" : "es");
        cp_finding_line(f, "Cause: this process initialised CUDA%s%s, then %s (the DataLoader's "
                        "workers, start method \"fork\"): a child forked after CUDA was "
                        "initialised cannot use CUDA, and PyTorch refuses it.", at ? " at " : "",
                        at ? at : "", forks);
    }
    f->why = w->fork_cuda
                 ? "A DataLoader worker process raised an exception and PyTorch re-raised it "
                   "in the parent, with the worker's traceback: the worker was forked after the "
                   "parent initialised CUDA, and a forked child cannot use CUDA."
                 : "A DataLoader worker process raised an exception and PyTorch re-raised it "
                   "in the parent, with the worker's traceback: the worker's line is the one "
                   "that failed.";
    f->fix = w->fork_cuda
                 ? "DataLoader(..., multiprocessing_context=\"spawn\") (workers start afresh "
                   "and may use CUDA), or keep CUDA out of __getitem__: return CPU tensors and "
                   "move each batch to the GPU in the training loop (pin_memory=True keeps that "
                   "copy fast)."
                 : "Fix the worker's line above (the dataset's __getitem__ or the collate "
                   "function); num_workers=0 runs it in this process, under a debugger.";
    /* "worker": {"process", "exception", "message", "file", "line",
     * "function", "fork_after_cuda_init"}, "forks_after_init" */
    cp_jb_key(&f->details, "worker");
    cp_jb_open(&f->details, '{');
    static const char *const keys[] = { "process", "exception", "message", "cause", "file",
                                        "function" };
    const char *vals[] = { w->what, w->type, w->msg, w->cause[0] ? w->cause : NULL, b->file,
                           b->func };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cp_jb_ks(&f->details, keys[i], vals[i]);
    cp_jb_ki(&f->details, "line", b->line);
    cp_jb_kb(&f->details, "fork_after_cuda_init", w->fork_cuda);
    cp_jb_close(&f->details, '}');
    cp_jb_ku(&f->details, "forks_after_init", p->n_forks);
}
