/*
 * cp_model_meta.c - what the model learns besides memory: the CUDA libraries
 * and frameworks a process loaded (from its module map), framework
 * companion records reassembled from their slices, and CP_REC_RESOLVE
 * fields (see cp_model.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_grow.h"
#include "cp_model.h"

/* CUDA libraries and frameworks worth naming in the environment section:
 * the CP_LIB_ENV rows of the known-library table (cp_libs.c). */
void cp__model_library(cp_proc *p, const char *path)
{
    const cp_known_lib *k = cp_lib_find(path, CP_LIB_ENV);
    if (!k)
        return;
    p->fw |= k->fw;
    for (size_t j = 0; j < p->n_libs; j++)
        if (strcmp(p->libs[j].name, k->name) == 0)
            return;
    if (cp_grow((void **)&p->libs, &p->cap_libs, p->n_libs + 1, sizeof *p->libs, 16))
        return;
    p->libs[p->n_libs++] = (cp_lib){ k->name, path };
}

void cp__model_dlopen(cp_proc *p, const cp_record *r)
{
    p->dlopen_seen = 1;
    p->lib_kind = r->u.dlopen.lib_kind;
    if (r->u.dlopen.ok) {
        p->dlopen_ok = 1;
        free(p->lib_path);
        p->lib_path = cp_str_dup(r->u.dlopen.found_path);
    } else {
        free(p->lib_error);
        p->lib_error = cp_str_dup(r->u.dlopen.error);
    }
}

/* A companion record names its framework ("torch.exit", "jax.periodic"):
 * the framework is in use even where the module map was not recorded. */
static void cp_fw_from_kind(cp_proc *p, cp_str k)
{
    static const struct { const char *prefix; unsigned fw; } kinds[] = {
        { "torch.", CP_FW_TORCH }, { "jax.", CP_FW_JAX }, { "cupy.", CP_FW_CUPY },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        size_t n = strlen(kinds[i].prefix);
        if (k.n > n && memcmp(k.p, kinds[i].prefix, n) == 0)
            p->fw |= kinds[i].fw;
    }
}

/* Payloads over 256 KiB arrive as "<kind>#<i>/<n>" slices, in order. */
int cp__model_framework(cp_proc *p, const cp_record *r)
{
    cp_str k = r->u.framework.kind, j = r->u.framework.json;
    cp_fw_from_kind(p, k);
    const char *hash = memchr(k.p, '#', k.n);
    if (!hash) {
        p->fw_ready_kind = cp_sym_intern(k.p, k.n);
        p->fw_ready_json = j.p;
        p->fw_ready_len = j.n;
        return 0;
    }
    int i = 0, n = 0;
    char tail[32];
    size_t tl = k.n - (size_t)(hash + 1 - k.p);
    if (tl >= sizeof tail)
        return 0;
    memcpy(tail, hash + 1, tl);
    tail[tl] = 0;
    if (sscanf(tail, "%d/%d", &i, &n) != 2 || n <= 0 || i < 0 || i >= n)
        return 0;
    const char *kind = cp_sym_intern(k.p, (size_t)(hash - k.p));
    if (i == 0 || !p->fw_kind || strcmp(p->fw_kind, kind) != 0 || i != p->fw_next) {
        /* A new set (an incomplete earlier one is dropped). */
        free(p->fw_kind);
        p->fw_kind = i == 0 ? strdup(kind) : NULL;
        p->fw_len = 0;
        p->fw_next = 0;
        p->fw_total = n;
        if (i != 0)
            return 0;
    }
    if (p->fw_len + j.n + 1 > p->fw_cap) {
        size_t c = (p->fw_len + j.n + 1) * 2;
        char *b = realloc(p->fw_buf, c);
        if (!b)
            return -ENOMEM;
        p->fw_buf = b;
        p->fw_cap = c;
    }
    memcpy(p->fw_buf + p->fw_len, j.p, j.n);
    p->fw_len += j.n;
    p->fw_buf[p->fw_len] = 0;
    p->fw_next = i + 1;
    if (p->fw_next == p->fw_total) {
        p->fw_ready_kind = kind;
        p->fw_ready_json = p->fw_buf;
        p->fw_ready_len = p->fw_len;
        p->fw_next = 0;
        free(p->fw_kind);
        p->fw_kind = NULL;
    }
    return 0;
}

