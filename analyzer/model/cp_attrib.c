/*
 * cp_attrib.c - the companion's attribution records read into samples
 * (see cp_attrib.h).
 *
 * A record lists the stack of each site the first time it lists the site
 * (its own small ids, per framework); here each becomes a stack of Python
 * frames only, under an id above every id the shim's interning tables
 * hand out (CP_ATTR_ID; the backward pass's callers use 1 << 62).  Rows
 * naming a site whose stack never came (a record lost) are counted with
 * the sites beyond the cap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cp_attrib.h"
#include "cp_fw.h"
#include "cp_grow.h"
#include "cp_jread.h"

#define CP_ATTR_ID (1ull << 61)
#define CP_ATTR_MAX_FRAMES 64

static const char *const attr_kinds[CP_ATTR_FW_N] = { "torch.attrib", "cupy.attrib" };

typedef struct cp_attrib {
    cp_map ids;                 /* fw << 32 | the record's site id -> uint64_t stack id */
    uint64_t n_ids;             /* stack and frame ids handed out */
    int state[CP_ATTR_FW_N];    /* enum cp_attr_state */
    const char *why[CP_ATTR_FW_N];  /* interned, for CP_ATTR_OFF */
    cp_attrib_sample cur;       /* the current record's sample, when cur_ok */
    size_t cap_cur;
    int cur_ok;
    cp_attrib_sample last[CP_ATTR_FW_N];
    size_t cap_last[CP_ATTR_FW_N];
    int torch_async;            /* PyTorch's backend is cudaMallocAsync */
} cp_attrib;

static cp_attrib *attr_get(cp_proc *p)
{
    if (!p->attrib) {
        p->attrib = calloc(1, sizeof *p->attrib);
        if (p->attrib)
            cp_map_init(&p->attrib->ids, sizeof(uint64_t));
    }
    return p->attrib;
}

static uint64_t attr_u64(const cp_jn *n)
{
    int64_t v;
    return n && cp_jn_i64(n, &v) == 0 && v > 0 ? (uint64_t)v : 0;
}

/* One entry of "stacks": {"id": k, "frames": [[file, line, func], ...]}. */
static int attr_stack(cp_proc *p, cp_attrib *a, int fw, const cp_jn *st)
{
    uint64_t rid = attr_u64(cp_jn_get(st, "id"));
    const cp_jn *frames = cp_jn_get(st, "frames");
    if (!rid || rid >= (1ull << 32) || !frames || frames->type != CP_J_ARR || !frames->n)
        return 0;
    uint64_t py[CP_ATTR_MAX_FRAMES];
    size_t n = 0;
    for (size_t i = 0; i < frames->n && n < CP_ATTR_MAX_FRAMES; i++) {
        const cp_jn *f = &frames->kid[i];
        if (f->type != CP_J_ARR || f->n < 3 || f->kid[0].type != CP_J_STR ||
            f->kid[2].type != CP_J_STR)
            continue;
        uint64_t id = CP_ATTR_ID | ++a->n_ids;
        if (cp_stacks_pyframe(&p->stacks, id, f->kid[0].s, f->kid[2].s, attr_u64(&f->kid[1])))
            return -ENOMEM;
        py[n++] = id;
    }
    if (!n)
        return 0;
    uint64_t sid = CP_ATTR_ID | ++a->n_ids;
    if (cp_stacks_add(&p->stacks, sid, 0, NULL, n, py) == -ENOMEM)
        return -ENOMEM;
    uint64_t *v = cp_map_put(&a->ids, (uint64_t)fw << 32 | rid, NULL);
    if (!v)
        return -ENOMEM;
    *v = sid;
    return 0;
}

/* The rows of "sites": [[id, bytes, blocks], ...] into a->cur. */
static int attr_rows(cp_attrib *a, int fw, const cp_jn *sites)
{
    cp_attrib_sample *c = &a->cur;
    if (!sites || sites->type != CP_J_ARR)
        return 0;
    if (cp_grow((void **)&c->rows, &a->cap_cur, sites->n, sizeof *c->rows, 16))
        return -ENOMEM;
    for (size_t i = 0; i < sites->n; i++) {
        const cp_jn *s = &sites->kid[i];
        if (s->type != CP_J_ARR || s->n < 3)
            continue;
        uint64_t rid = attr_u64(&s->kid[0]), bytes = attr_u64(&s->kid[1]);
        const uint64_t *sid = rid < (1ull << 32) ? cp_map_get(&a->ids, (uint64_t)fw << 32 | rid)
                                                 : NULL;
        if (!sid) {
            c->other_bytes += bytes;
            continue;
        }
        c->rows[c->n++] = (cp_attrib_row){ *sid, bytes, attr_u64(&s->kid[2]) };
    }
    return 0;
}

/* Keep the current sample as framework fw's last. */
static int attr_keep_last(cp_attrib *a, int fw)
{
    cp_attrib_sample *l = &a->last[fw];
    cp_attrib_row *rows = l->rows;
    if (cp_grow((void **)&rows, &a->cap_last[fw], a->cur.n, sizeof *rows, 16))
        return -ENOMEM;
    *l = a->cur;
    l->rows = rows;
    if (a->cur.n)
        memcpy(rows, a->cur.rows, a->cur.n * sizeof *rows);
    return 0;
}

static int attr_record(cp_proc *p, cp_attrib *a, int fw, const cp_jn *root, uint64_t ts)
{
    const cp_jn *ev = cp_jn_get(root, "event");
    if (!ev || ev->type != CP_J_STR)
        return 0;
    if (strcmp(ev->s, "on") == 0) {
        a->state[fw] = CP_ATTR_ON;
        return 0;
    }
    if (strcmp(ev->s, "off") == 0) {
        const cp_jn *why = cp_jn_get(root, "why");
        a->state[fw] = CP_ATTR_OFF;
        a->why[fw] = why && why->type == CP_J_STR ? cp_sym_intern(why->s, strlen(why->s)) : NULL;
        return 0;
    }
    const cp_jn *stacks = cp_jn_get(root, "stacks"), *sites = cp_jn_get(root, "sites");
    if (!sites)
        return 0;                           /* "end": the cost */
    for (size_t i = 0; stacks && stacks->type == CP_J_ARR && i < stacks->n; i++)
        if (attr_stack(p, a, fw, &stacks->kid[i]))
            return -ENOMEM;
    cp_attrib_sample *c = &a->cur;
    c->fw = fw;
    c->at_exit = strcmp(ev->s, "exit") == 0;
    c->ts = ts;
    c->n = 0;
    c->live_bytes = attr_u64(cp_jn_get(root, "live_bytes"));
    c->unattributed_bytes = attr_u64(cp_jn_get(root, "unattributed_bytes"));
    c->other_bytes = attr_u64(cp_jn_get(root, "other_bytes"));
    if (attr_rows(a, fw, sites) || attr_keep_last(a, fw))
        return -ENOMEM;
    if (a->state[fw] == CP_ATTR_NONE)
        a->state[fw] = CP_ATTR_ON;          /* its "on" record was lost */
    a->cur_ok = 1;
    return 0;
}

/* companion.info and torch.exit name PyTorch's allocator backend; their
 * JSON has fractions, which cp_jread refuses: the lenient reader. */
static int attr_backend(cp_proc *p, const char *k)
{
    char backend[32];
    cp_jv v = { p->fw_ready_json, p->fw_ready_len };
    if (strcmp(k, "companion.info") != 0 && strcmp(k, "torch.exit") != 0)
        return 0;
    if (cp_json_str(v, "allocator_backend", backend, sizeof backend) ||
        strcmp(backend, "cudaMallocAsync") != 0)
        return 0;
    cp_attrib *a = attr_get(p);
    if (!a)
        return -ENOMEM;
    a->torch_async = 1;
    return 0;
}

int cp_attrib_framework(cp_proc *p, const cp_record *r)
{
    if (p->attrib)
        p->attrib->cur_ok = 0;
    const char *k = p->fw_ready_kind;
    if (k && attr_backend(p, k))
        return -ENOMEM;
    int fw;
    for (fw = 0; fw < CP_ATTR_FW_N; fw++)
        if (k && strcmp(k, attr_kinds[fw]) == 0)
            break;
    if (fw == CP_ATTR_FW_N)
        return 0;
    cp_attrib *a = attr_get(p);
    if (!a)
        return -ENOMEM;
    char err[128];
    cp_jdoc *d = cp_jdoc_parse(p->fw_ready_json, p->fw_ready_len, err, sizeof err);
    if (!d)
        return strcmp(err, "out of memory") == 0 ? -ENOMEM : 0;   /* damaged: skipped */
    int rc = attr_record(p, a, fw, cp_jdoc_root(d), r->ts);
    cp_jdoc_free(d);
    return rc;
}

const cp_attrib_sample *cp_attrib_current(const cp_proc *p)
{
    return p->attrib && p->attrib->cur_ok ? &p->attrib->cur : NULL;
}

const cp_attrib_sample *cp_attrib_last(const cp_proc *p, int fw)
{
    const cp_attrib *a = p->attrib;
    return a && fw >= 0 && fw < CP_ATTR_FW_N && a->last[fw].ts ? &a->last[fw] : NULL;
}

int cp_attrib_torch_async(const cp_proc *p)
{
    return p->attrib && p->attrib->torch_async;
}

int cp_attrib_state(const cp_proc *p, int fw, const char **why)
{
    const cp_attrib *a = p->attrib;
    if (why)
        *why = a && fw >= 0 && fw < CP_ATTR_FW_N ? a->why[fw] : NULL;
    return a && fw >= 0 && fw < CP_ATTR_FW_N ? a->state[fw] : CP_ATTR_NONE;
}

void cp_attrib_free(cp_proc *p)
{
    cp_attrib *a = p->attrib;
    if (!a)
        return;
    cp_map_free(&a->ids);
    free(a->cur.rows);
    for (int fw = 0; fw < CP_ATTR_FW_N; fw++)
        free(a->last[fw].rows);
    free(a);
    p->attrib = NULL;
}
