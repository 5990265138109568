/*
 * check_leak_owner.c - who holds an allocation live at exit (see
 * check_leak_owner.h).  The evidence, strongest first:
 *   1. a native frame in a known library (cp_libs.c): a caching
 *      allocator's (libc10, xla, cupy) or a CUDA library's;
 *   2. the innermost Python frame of an installed package that allocates
 *      on the GPU (the package is the directory under site-packages, so a
 *      virtualenv named "torch" does not make numba's frames PyTorch's);
 *      a frame of the program's own code first means the program made the
 *      call itself;
 *   3. PyTorch's own list of its segments at exit (the companion's
 *      torch.exit record): an address inside one is PyTorch's;
 *   4. only then, in a process with exactly one caching allocator and no
 *      other framework that allocates from Python, that allocator's
 *      segment sizes (multiples of 2 MiB).
 */
#include <stdlib.h>
#include <string.h>

#include "check_leak_owner.h"
#include "cp_path.h"
#include "cp_fw.h"
#include "cp_grow.h"

/* Installed Python packages that allocate device memory: cls CL_ALLOC
 * for a caching allocator (named by its framework), CL_OTHER for arrays
 * the program holds through them.  fw 0 with no name: a pass-through
 * (NVIDIA's CUDA Python bindings), the package that called it decides. */
static const struct lo_pkg {
    const char *pkg;
    unsigned fw;
    int cls;
    const char *name;
} lo_pkgs[] = {
    { "torch", CP_FW_TORCH, CL_ALLOC, NULL },
    { "cupy", CP_FW_CUPY, CL_ALLOC, NULL },
    { "cupyx", CP_FW_CUPY, CL_ALLOC, NULL },
    { "cupy_backends", CP_FW_CUPY, CL_ALLOC, NULL },
    { "jax", CP_FW_JAX, CL_ALLOC, NULL },
    { "jaxlib", CP_FW_JAX, CL_ALLOC, NULL },
    { "rmm", 0, CL_ALLOC, "RMM memory resource" },
    { "numba", 0, CL_OTHER, "numba" },
    { "numba_cuda", 0, CL_OTHER, "numba" },
    { "pycuda", 0, CL_OTHER, "PyCUDA" },
    { "cuda", 0, -1, NULL },
};

static const char *lo_fw_name(unsigned fw)
{
    return (fw & CP_FW_TORCH) ? "PyTorch caching allocator"
           : (fw & CP_FW_JAX) ? "JAX/XLA allocator"
           : (fw & CP_FW_CUPY) ? "CuPy memory pool" : NULL;
}

/* The installed package a file belongs to ("numba" for
 * .../site-packages/numba/cuda/api.py), or NULL when it is not under a
 * site-packages or dist-packages directory. */
static const struct lo_pkg *lo_package(const char *file)
{
    static const char *const roots[] = { "/site-packages/", "/dist-packages/" };
    const char *top = NULL;
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
        const char *r = file, *at;
        while ((at = strstr(r, roots[i])))
            r = top = at + strlen(roots[i]);
    }
    if (!top)
        return NULL;
    size_t n = strcspn(top, "/.");
    for (size_t i = 0; i < sizeof lo_pkgs / sizeof *lo_pkgs; i++)
        if (strlen(lo_pkgs[i].pkg) == n && strncmp(top, lo_pkgs[i].pkg, n) == 0)
            return &lo_pkgs[i];
    return NULL;
}

/* lo_by_stack(), and in *fw the framework (enum cp_fw bits) of a caching
 * allocator's allocation (0 otherwise). */
static int lo_by_stack_fw(cp_proc *p, uint64_t stack, const char **who, unsigned *fw)
{
    const cp_stack *st = cp_stacks_get(&p->stacks, stack);
    *who = NULL;
    *fw = 0;
    if (!st)
        return -1;
    for (uint32_t i = 0; i < st->n_native; i++) {
        if (!st->native[i].mod)
            continue;
        /* The known-library table (cp_libs.c) says whose it is. */
        const char *path = p->stacks.mods[st->native[i].mod - 1].path;
        const cp_known_lib *k = cp_lib_find(path, CP_LIB_ALLOC);
        if (k) {
            *who = lo_fw_name(k->fw);
            *fw = k->fw;
            return CL_ALLOC;
        }
        if (cp_lib_find(path, CP_LIB_HOLDS)) {
            *who = cp_base_name(path);
            return CL_LIB;
        }
    }
    for (uint32_t i = 0; i < st->n_py; i++) {
        const cp_pyframe *f = cp_map_get(&p->stacks.pyframes, st->py[i]);
        if (!f)
            continue;
        if (f->user)
            return CL_LEAK;
        const struct lo_pkg *k = lo_package(f->file);
        if (!k || k->cls < 0)
            continue;
        *who = k->name ? k->name : lo_fw_name(k->fw);
        *fw = k->cls == CL_ALLOC ? k->fw : 0;
        return k->cls;
    }
    return -1;
}

int lo_by_stack(cp_proc *p, uint64_t stack, const char **who)
{
    unsigned fw;
    return lo_by_stack_fw(p, stack, who, &fw);
}

unsigned lo_alloc_fw(cp_proc *p, uint64_t stack)
{
    const char *who;
    unsigned fw;
    return lo_by_stack_fw(p, stack, &who, &fw) == CL_ALLOC ? fw : 0;
}

void lo_rec(cp_proc *p, lo_state *s, const cp_record *r)
{
    (void)r;
    if (!p->fw_ready_kind || strcmp(p->fw_ready_kind, "torch.exit") != 0)
        return;
    cp_jv v = { p->fw_ready_json, p->fw_ready_len }, devs, d, segs, g, backend;
    size_t it = 0;
    int native = cp_json_member(v, "allocator_backend", &backend) == 0 &&
                 backend.n == 8 && memcmp(backend.p, "\"native\"", 8) == 0;
    int expandable = 0;
    cp_json_bool(v, "expandable_segments", &expandable);
    s->n = 0;
    if (cp_json_member(v, "devices", &devs) != 0)
        return;
    while (cp_json_next(devs, &it, &d) == 1) {
        size_t j = 0;
        if (cp_json_member(d, "segments", &segs) != 0)
            continue;
        while (cp_json_next(segs, &j, &g) == 1) {
            lo_seg e = { 0, 0 };
            cp_json_u64(g, "address", &e.addr);
            cp_json_u64(g, "total_size", &e.size);
            if (!e.size || cp_grow((void **)&s->seg, &s->cap, s->n + 1, sizeof *s->seg, 64))
                continue;
            s->seg[s->n++] = e;
        }
    }
    /* Segments halved to fit a record (segments_dropped), or expandable
     * segments (one address range, mapped piece by piece), leave the list
     * good only for the addresses it has. */
    cp_jv sd;
    s->listed = native && !expandable && cp_json_member(v, "segments_dropped", &sd) != 0;
}

/* Whether the module map holds a framework other than the caching
 * allocators that allocates from Python (numba, NVIDIA's bindings, PyCUDA,
 * RMM): then segment sizes say nothing about whose an allocation is. */
static int lo_other_python_gpu(const cp_proc *p)
{
    static const char *const needles[] = { "/numba", "/cuda/bindings/", "/cuda/ccuda",
                                           "/pycuda/", "/rmm/" };
    for (size_t i = 0; i < p->stacks.n_mods; i++)
        for (size_t k = 0; k < sizeof needles / sizeof *needles; k++)
            if (p->stacks.mods[i].path && strstr(p->stacks.mods[i].path, needles[k]))
                return 1;
    return 0;
}

int lo_by_pointer(cp_proc *p, const lo_state *s, uint64_t ptr, const cp_live *l,
                  const char **who)
{
    *who = NULL;
    for (size_t i = 0; i < s->n; i++)
        if (ptr - s->seg[i].addr < s->seg[i].size) {
            *who = lo_fw_name(CP_FW_TORCH);
            return CL_ALLOC;
        }
    unsigned fw = p->fw;
    if (s->listed)
        fw &= ~(unsigned)CP_FW_TORCH;
    /* One caching allocator, nothing else that allocates from Python. */
    if (fw && !(fw & (fw - 1)) && !lo_other_python_gpu(p) && l->size % (2u << 20) == 0) {
        *who = lo_fw_name(fw);
        return CL_ALLOC;
    }
    return CL_OTHER;
}

void lo_free(lo_state *s)
{
    free(s->seg);
    memset(s, 0, sizeof *s);
}
