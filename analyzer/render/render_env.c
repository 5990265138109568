/*
 * render_env.c - the environment section that opens every report: driver
 * and runtime versions, devices with their physical identity, allocator
 * configuration, the CUDA libraries the process loaded.
 */
#include <stdio.h>
#include <string.h>

#include "cp_path.h"
#include "cp_series.h"
#include "render.h"

/* Environment variables that configure allocators, and those that decide
 * which devices a process sees and which rank it is. */
static const char *const cp_alloc_env[] = {
    "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING",
    "XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR", "CUPY_GPU_MEMORY_LIMIT", NULL,
};
static const char *const cp_dev_env[] = {
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", NULL,
};

static const char *cp_libcuda_linked(const cp_proc *p)
{
    for (size_t i = 0; i < p->n_libs; i++)
        if (strcmp(p->libs[i].name, "libcuda") == 0)
            return p->libs[i].path;
    return NULL;
}

const char *cp_version_str(int64_t v, char *buf, size_t cap)
{
    if (v <= 0)
        snprintf(buf, cap, "%s", "");
    else
        snprintf(buf, cap, "%lld.%lld", (long long)(v / 1000), (long long)(v % 1000 / 10));
    return buf;
}

/* libcuda as the loader found it (DLOPEN record), else as linked: the
 * module map's libcuda. */
static const char *cp_libcuda_kind(const cp_proc *p)
{
    if (!p->dlopen_seen)
        return cp_libcuda_linked(p) ? "linked" : NULL;
    return cp_libkind_name(p->lib_kind);
}

static void cp_env_list(FILE *o, const cp_proc *p, const char *label,
                        const char *const *names)
{
    int any = 0;
    for (int i = 0; names[i]; i++) {
        const char *v = cp_proc_env(p, names[i]);
        if (!v)
            continue;
        fprintf(o, "%s%s=%s", any ? " " : label, names[i], v);
        any = 1;
    }
    if (any)
        fputc('\n', o);
}

void cp_env_text(FILE *o, const cp_proc *p, const cp_out_opts *opt)
{
    char v1[32], v2[32], b1[32], u[64], pci[32];
    (void)opt;
    fprintf(o, "  driver: %s%s%s   runtime: %s%s%s\n",
            p->driver_version > 0 ? "CUDA " : "unknown",
            cp_version_str(p->driver_version, v1, sizeof v1),
            p->driver_seen && p->driver_version <= 0 ? " (cuDriverGetVersion failed)" : "",
            p->runtime_version > 0 ? "CUDA " : "unknown",
            cp_version_str(p->runtime_version, v2, sizeof v2), "");
    if (p->dlopen_seen)
        fprintf(o, "  libcuda: %s (%s)\n",
                p->dlopen_ok && p->lib_path ? p->lib_path
                                            : (p->lib_error ? p->lib_error : "not loaded"),
                cp_libcuda_kind(p));
    else if (cp_libcuda_linked(p))
        fprintf(o, "  libcuda: %s (linked)\n", cp_libcuda_linked(p));
    int any = 0;
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        const cp_devinfo *di = &p->dev[d];
        if (!di->seen)
            continue;
        any = 1;
        fprintf(o, "  GPU %d: %s, %s, PCI %s, cc %llu.%llu, %s, %llu SMs, pageable memory "
                "access: %s\n", d, di->name, cp_dev_uuid(p, d, u, sizeof u),
                cp_dev_pci(p, d, pci, sizeof pci), (unsigned long long)di->cc_major,
                (unsigned long long)di->cc_minor, cp_fmt_bytes(di->total_mem, b1, sizeof b1),
                (unsigned long long)di->sm_count,
                di->pageable_access ? (di->host_page_tables ? "yes (host page tables)" : "yes")
                                    : "no");
    }
    if (!any)
        fprintf(o, "  devices: none recorded\n");
    cp_env_list(o, p, "  allocator: ", cp_alloc_env);
    cp_env_list(o, p, "  devices env: ", cp_dev_env);
    if (p->n_libs) {
        fprintf(o, "  CUDA libraries:");
        for (size_t i = 0; i < p->n_libs; i++)
            fprintf(o, "%s %s (%s)", i ? "," : "", p->libs[i].name, p->libs[i].path);
        fputc('\n', o);
    }
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        const cp_devmem *m = &p->mem[d];
        if (!m->n_alloc && !m->has_ctx && !m->held_total)
            continue;
        fprintf(o, "  memory on GPU %d: peak %s", d, cp_fmt_bytes(m->peak_total, b1, sizeof b1));
        fprintf(o, ", %s held at the end, %llu allocations%s\n",
                cp_fmt_bytes(m->held_total, b1, sizeof b1), (unsigned long long)m->n_alloc,
                m->has_ctx ? ", context" : "");
        if (p->series && cp_series_dev(p->series, d)) {
            fprintf(o, "    over time (most held in each eighth of the %s):",
                    p->win_from || p->win_cut ? "window" : "run");
            for (int k = 0; k < 8; k++)
                fprintf(o, " %s", cp_fmt_bytes(cp_series_max_in(p->series, d, k / 8.0,
                                                                (k + 1) / 8.0), b1, sizeof b1));
            fputc('\n', o);
        }
    }
}

static void cp_env_obj(cp_jb *b, const cp_proc *p, const char *key, const char *const *names)
{
    cp_jb_key(b, key);
    cp_jb_open(b, '{');
    for (int i = 0; names[i]; i++) {
        const char *v = cp_proc_env(p, names[i]);
        if (v)
            cp_jb_ks(b, names[i], v);
    }
    cp_jb_close(b, '}');
}

void cp_env_json(cp_jb *b, const cp_proc *p)
{
    char v[64], pci[32];
    if (p->driver_version > 0)
        cp_jb_ki(b, "driver_version", p->driver_version);
    else
        cp_jb_ks(b, "driver_version", NULL);
    if (p->runtime_version > 0)
        cp_jb_ki(b, "runtime_version", p->runtime_version);
    else
        cp_jb_ks(b, "runtime_version", NULL);
    cp_jb_key(b, "libcuda");
    cp_jb_open(b, '{');
    cp_jb_ks(b, "kind", cp_libcuda_kind(p));
    cp_jb_ks(b, "path", p->dlopen_ok ? p->lib_path : cp_libcuda_linked(p));
    cp_jb_ks(b, "error", p->dlopen_ok ? NULL : p->lib_error);
    cp_jb_close(b, '}');
    cp_jb_key(b, "devices");
    cp_jb_open(b, '[');
    for (int d = 0; d < p->n_dev && d < CP_MAX_DEV; d++) {
        const cp_devinfo *di = &p->dev[d];
        if (!di->seen)
            continue;
        cp_jb_open(b, '{');
        cp_jb_ki(b, "ordinal", d);
        cp_jb_ks(b, "name", di->name);
        cp_jb_ks(b, "uuid", cp_dev_uuid(p, d, v, sizeof v));
        cp_jb_ks(b, "pci_bus_id", cp_dev_pci(p, d, pci, sizeof pci));
        snprintf(v, sizeof v, "%llu.%llu", (unsigned long long)di->cc_major,
                 (unsigned long long)di->cc_minor);
        cp_jb_ks(b, "compute_capability", v);
        cp_jb_ku(b, "total_bytes", di->total_mem);
        cp_jb_ku(b, "sm_count", di->sm_count);
        cp_jb_kb(b, "pageable_memory_access", (int)di->pageable_access);
        cp_jb_kb(b, "uses_host_page_tables", (int)di->host_page_tables);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    cp_env_obj(b, p, "allocator", cp_alloc_env);
    cp_env_obj(b, p, "env", cp_dev_env);
    cp_jb_key(b, "libraries");
    cp_jb_open(b, '[');
    for (size_t i = 0; i < p->n_libs; i++) {
        cp_jb_open(b, '{');
        cp_jb_ks(b, "name", p->libs[i].name);
        cp_jb_ks(b, "path", p->libs[i].path);
        cp_jb_close(b, '}');
    }
    cp_jb_close(b, ']');
    cp_jb_key(b, "frameworks");
    cp_jb_open(b, '[');
    static const struct { unsigned bit; const char *name; } fw[] = {
        { CP_FW_TORCH, "torch" }, { CP_FW_JAX, "jax" }, { CP_FW_CUPY, "cupy" },
    };
    for (size_t i = 0; i < sizeof fw / sizeof *fw; i++)
        if (p->fw & fw[i].bit) {
            cp_jb_elem(b);
            cp_jb_str(b, fw[i].name);
        }
    cp_jb_close(b, ']');
}

const char *cp_proc_label(const cp_proc *p, char *buf, size_t cap)
{
    static const char *const rank_vars[] = { "RANK", "SLURM_PROCID", "LOCAL_RANK", NULL };
    const char *rank = NULL;
    for (int i = 0; rank_vars[i] && !rank; i++)
        rank = cp_proc_env(p, rank_vars[i]);
    const char *host = p->host && *p->host ? p->host : NULL;
    if (rank)
        snprintf(buf, cap, "rank %s%s%s (pid %llu)", rank, host ? " on " : "", host ? host : "",
                 (unsigned long long)p->pid);
    else
        snprintf(buf, cap, "pid %llu%s%s (%s)", (unsigned long long)p->pid, host ? " on " : "",
                 host ? host : "", p->exe ? cp_base_name(p->exe) : "?");
    return buf;
}
