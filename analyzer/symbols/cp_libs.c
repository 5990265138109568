/*
 * cp_libs.c - the one table of libraries the analyzer knows by name (see
 * cp_libs.h).  The first entry with the asked role that matches wins, so a
 * specific name stands before a prefix of it (libcublasLt and libcublasmp
 * before libcublas, libtorch_cuda before libtorch).
 */
#include <stddef.h>
#include <string.h>

#include "cp_libs.h"
#include "cp_path.h"

#define ENV CP_LIB_ENV
#define ALLOC CP_LIB_ALLOC
#define HOLDS CP_LIB_HOLDS
#define INTERNAL CP_LIB_INTERNAL

static const cp_known_lib cp_known_libs[] = {
    /* needle           name                      in_path fw        roles */
    { "libcudart",      "libcudart",              0, 0,            ENV | INTERNAL },
    { "libcublasLt",    "libcublasLt",            0, 0,            ENV | HOLDS },
    { "libcublasmp",    "libcublasmp",            0, 0,            ENV | HOLDS },
    { "libcublas",      "libcublas",              0, 0,            ENV | HOLDS },
    { "libcudnn",       "libcudnn",               0, 0,            ENV | HOLDS },
    { "libnccl",        "libnccl",                0, 0,            ENV | HOLDS },
    { "libcufft",       "libcufft",               0, 0,            ENV | HOLDS },
    { "libcurand",      "libcurand",              0, 0,            ENV | HOLDS },
    { "libcusparse",    "libcusparse",            0, 0,            ENV | HOLDS },
    { "libcusolver",    "libcusolver",            0, 0,            ENV | HOLDS },
    { "libcutensor",    "libcutensor",            0, 0,            ENV | HOLDS },
    { "libnvshmem",     "libnvshmem",             0, 0,            ENV | HOLDS },
    { "libnvrtc",       "libnvrtc",               0, 0,            ENV | HOLDS },
    { "libnvJitLink",   "libnvJitLink",           0, 0,            ENV | HOLDS },
    { "libnvidia-ml",   "libnvidia-ml",           0, 0,            ENV },
    /* PyTorch: its CUDA libraries name the framework; every libtorch* and
     * libc10* is its allocator and never a call site. */
    { "libtorch_cuda",  "libtorch_cuda",          0, CP_FW_TORCH,  ENV },
    { "libc10_cuda",    "libc10_cuda",            0, CP_FW_TORCH,  ENV },
    { "libtorch",       "libtorch",               0, CP_FW_TORCH,  ALLOC | INTERNAL },
    { "libc10",         "libc10",                 0, CP_FW_TORCH,  ALLOC | INTERNAL },
    { "xla_extension",  "jaxlib (xla_extension)", 0, CP_FW_JAX,    ENV | ALLOC },
    { "libxla",         "libxla",                 0, CP_FW_JAX,    ENV | ALLOC },
    { "/jaxlib/",       "jaxlib",                 1, CP_FW_JAX,    ENV | ALLOC },
    { "/jax_cuda",      "jax-cuda plugin",        1, CP_FW_JAX,    ENV | ALLOC },
    /* jax 0.4.2x and later: XLA's GPU runtime, its allocator included, is
     * the PJRT plugin jax_plugins/xla_cuda12/xla_cuda_plugin.so. */
    { "/jax_plugins/",  "jax-cuda plugin (PJRT)", 1, CP_FW_JAX,    ENV | ALLOC },
    { "libjax",         "libjax",                 0, CP_FW_JAX,    ALLOC },
    { "/cupy/",         "cupy",                   1, CP_FW_CUPY,   ENV | ALLOC },
    { "cupy_backends",  "cupy",                   1, CP_FW_CUPY,   ENV | ALLOC },
    { "libcuda.so",     "libcuda",                0, 0,            ENV | INTERNAL },
    /* The rest of what stands between a program and the driver. */
    { "libcuprobe",     "libcuprobe",             0, 0,            INTERNAL },
    { "libpython",      "libpython",              0, 0,            INTERNAL },
    { "libffi",         "libffi",                 0, 0,            INTERNAL },
    { "_ctypes",        "_ctypes",                0, 0,            INTERNAL },
    { "libc.so",        "libc",                   0, 0,            INTERNAL },
    { "ld-linux",       "ld-linux",               0, 0,            INTERNAL },
    { "libstdc++",      "libstdc++",              0, 0,            INTERNAL },
    { "libpthread",     "libpthread",             0, 0,            INTERNAL },
};

const cp_known_lib *cp_lib_find(const char *path, unsigned roles)
{
    if (!path)
        return NULL;
    const char *base = cp_base_name(path);
    for (size_t i = 0; i < sizeof cp_known_libs / sizeof *cp_known_libs; i++) {
        const cp_known_lib *k = &cp_known_libs[i];
        if (!(k->roles & roles))
            continue;
        if (k->in_path ? strstr(path, k->needle) != NULL
                       : strncmp(base, k->needle, strlen(k->needle)) == 0)
            return k;
    }
    return NULL;
}
