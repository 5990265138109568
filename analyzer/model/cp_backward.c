/*
 * cp_backward.c - the backward pass's allocations given the line that
 * called backward() (see cp_backward.h).
 *
 * The caller's frame becomes a Python frame of the process's own, with an
 * id the shim never hands out (CP_BW_FRAME), and a native-only stack that
 * allocated during the pass is re-announced with that frame as its only
 * Python frame: labels, summaries and every check then see an ordinary
 * Python call site.  A stack is given a caller once, by the first pass it
 * allocated in: the stacks of autograd's threads are the same from one
 * step to the next, and a training loop calls backward() from one line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_backward.h"
#include "cp_path.h"
#include "cp_fw.h"

/* Python frame ids of callers of backward(): above every id the shim's
 * interning table hands out. */
#define CP_BW_FRAME (1ull << 62)
#define CP_BW_THREADS 16

typedef struct cp_bw_site {
    int kind;                   /* CP_BW_NAMED: frame is its caller; CP_BW_AUTOGRAD: none
                                 * known; 0: not the backward pass's (Python frames) */
    uint64_t frame;
} cp_bw_site;

typedef struct cp_bw {
    uint64_t caller_tid;        /* the thread inside backward(), 0 when none */
    int depth;                  /* nested backward() calls */
    uint64_t frame;             /* its caller's frame id */
    uint64_t n_frames;
    char last[600];             /* "file\nline\nfunc" of the last caller: frames are reused */
    uint64_t autograd[CP_BW_THREADS];   /* tids of threads named pt_autograd_* */
    int n_autograd;
    cp_map sites;               /* stack id -> cp_bw_site */
} cp_bw;

static cp_bw *cp_bw_get(cp_proc *p)
{
    if (!p->bw) {
        p->bw = calloc(1, sizeof *p->bw);
        if (p->bw)
            cp_map_init(&p->bw->sites, sizeof(cp_bw_site));
    }
    return p->bw;
}

void cp_bw_thread(cp_proc *p, const cp_record *r)
{
    static const char prefix[] = "pt_autograd";
    const cp_str *n = &r->u.thread.name;
    if (n->n < sizeof prefix - 1 || memcmp(n->p, prefix, sizeof prefix - 1) != 0)
        return;
    cp_bw *s = cp_bw_get(p);
    if (s && s->n_autograd < CP_BW_THREADS)
        s->autograd[s->n_autograd++] = r->tid;
}

int cp_bw_framework(cp_proc *p, const cp_record *r)
{
    if (!p->fw_ready_kind || strcmp(p->fw_ready_kind, "torch.backward") != 0)
        return 0;
    cp_bw *s = cp_bw_get(p);
    if (!s)
        return -ENOMEM;
    cp_jv v = { p->fw_ready_json, p->fw_ready_len };
    char ev[16] = "", file[512] = "", func[160] = "", key[sizeof s->last];
    int64_t line = 0;
    cp_json_str(v, "event", ev, sizeof ev);
    if (strcmp(ev, "end") == 0) {
        if (s->depth > 0 && --s->depth == 0)
            s->caller_tid = 0;
        return 0;
    }
    if (strcmp(ev, "begin") != 0 || s->depth++ > 0)
        return 0;
    s->caller_tid = r->tid;
    cp_json_str(v, "file", file, sizeof file);
    cp_json_str(v, "func", func, sizeof func);
    cp_json_i64(v, "line", &line);
    snprintf(key, sizeof key, "%s\n%lld\n%s", file, (long long)line, func);
    if (s->frame && strcmp(key, s->last) == 0)
        return 0;
    memcpy(s->last, key, sizeof key);
    s->frame = CP_BW_FRAME | ++s->n_frames;
    return cp_stacks_pyframe(&p->stacks, s->frame, file[0] ? file : "?", func[0] ? func : "?",
                             line > 0 ? (uint64_t)line : 0);
}

static int cp_bw_autograd(const cp_bw *s, uint64_t tid)
{
    for (int i = 0; i < s->n_autograd; i++)
        if (s->autograd[i] == tid)
            return 1;
    return 0;
}

/* Stack id announced again with frame as its one Python frame. */
static int cp_bw_reannounce(cp_proc *p, uint64_t id, const cp_stack *st, uint64_t frame)
{
    uint64_t *ip = malloc((st->n_native + 1) * sizeof *ip);
    if (!ip)
        return -ENOMEM;
    for (uint32_t i = 0; i < st->n_native; i++)
        ip[i] = st->native[i].ip;
    int rc = cp_stacks_add(&p->stacks, id, st->n_native, ip, 1, &frame);
    free(ip);
    return rc == -ENOMEM ? -ENOMEM : 0;
}

int cp_bw_alloc(cp_proc *p, const cp_record *r)
{
    cp_bw *s = p->bw;
    uint64_t id = r->ev.stack;
    /* The thread that called backward() has Python frames of its own. */
    if (!id || r->tid == s->caller_tid)
        return 0;
    int named = s->depth > 0 && s->frame;
    if (!named && !cp_bw_autograd(s, r->tid))
        return 0;
    /* Each stack is judged once (kind 0: it had Python frames), and named
     * by the first pass it allocates in whose caller is known. */
    int created;
    cp_bw_site *site = cp_map_put(&s->sites, id, &created);
    if (!site)
        return -ENOMEM;
    if (!created && (site->kind != CP_BW_AUTOGRAD || !named))
        return 0;
    const cp_stack *st = cp_stacks_get(&p->stacks, id);
    site->kind = !st || st->n_py ? 0 : named ? CP_BW_NAMED : CP_BW_AUTOGRAD;
    site->frame = site->kind == CP_BW_NAMED ? s->frame : 0;
    return site->kind == CP_BW_NAMED ? cp_bw_reannounce(p, id, st, s->frame) : 0;
}

int cp_bw_kind(const cp_proc *p, uint64_t stack)
{
    const cp_bw_site *site = p->bw && stack ? cp_map_get(&p->bw->sites, stack) : NULL;
    return site ? site->kind : 0;
}

const char *cp_bw_note(const cp_proc *p, uint64_t stack)
{
    const cp_bw_site *site = p->bw && stack ? cp_map_get(&p->bw->sites, stack) : NULL;
    if (site && !site->kind)
        site = NULL;
    const cp_pyframe *f = site && site->kind == CP_BW_NAMED
                              ? cp_map_get(&p->stacks.pyframes, site->frame) : NULL;
    char buf[700];
    if (!site)
        return NULL;
    if (!f)
        return "allocated in the backward pass, on an autograd thread (no Python frames; the "
               "line that called backward() was not recorded)";
    snprintf(buf, sizeof buf, "allocated in the backward pass of the model called at %s:%llu",
             cp_base_name(f->file), (unsigned long long)f->line);
    return cp_sym_intern(buf, strlen(buf));
}

void cp_bw_free(cp_proc *p)
{
    if (!p->bw)
        return;
    cp_map_free(&p->bw->sites);
    free(p->bw);
    p->bw = NULL;
}
