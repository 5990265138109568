// link: build/analyzer/symbols/cp_libs.o
/*
 * test_libs.c - the one table of known libraries (analyzer/symbols/cp_libs.c)
 * on the module paths real installs load (PyTorch, JAX and CuPy wheels,
 * NVIDIA's pip wheels, system CUDA): what the environment section names
 * and which framework it marks, whose allocator or library holds memory
 * allocated from inside it (leak, the timeline), and which modules are
 * never a call site (the symbolizer).  Every use asks this one table, so
 * these answers hold for all of them.
 */
#define CP_UNIT_COUNT
#include <string.h>

#include "cp_unit.h"
#include "cp_libs.h"

#define SP "/usr/local/lib/python3.12/dist-packages/"

static const struct {
    const char *path;
    const char *env;        /* name in the environment section, NULL: not named */
    unsigned fw;            /* framework the ENV row marks */
    unsigned alloc_fw;      /* framework whose allocator holds memory allocated here */
    int holds, internal;
} cases[] = {
    { SP "torch/lib/libtorch_cuda.so", "libtorch_cuda", CP_FW_TORCH, CP_FW_TORCH, 0, 1 },
    { SP "torch/lib/libc10_cuda.so", "libc10_cuda", CP_FW_TORCH, CP_FW_TORCH, 0, 1 },
    { SP "torch/lib/libtorch_cpu.so", NULL, 0, CP_FW_TORCH, 0, 1 },
    { SP "torch/lib/libc10.so", NULL, 0, CP_FW_TORCH, 0, 1 },
    { SP "torch/_C.cpython-312-x86_64-linux-gnu.so", NULL, 0, 0, 0, 0 },
    { SP "nvidia/cublas/lib/libcublasLt.so.12", "libcublasLt", 0, 0, 1, 0 },
    { SP "nvidia/cublas/lib/libcublas.so.12", "libcublas", 0, 0, 1, 0 },
    { SP "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9", "libcudnn", 0, 0, 1, 0 },
    { SP "nvidia/nccl/lib/libnccl.so.2", "libnccl", 0, 0, 1, 0 },
    { SP "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "libnvrtc", 0, 0, 1, 0 },
    { SP "nvidia/nvshmem/lib/libnvshmem_host.so.3", "libnvshmem", 0, 0, 1, 0 },
    { SP "nvidia/cuda_runtime/lib/libcudart.so.12", "libcudart", 0, 0, 0, 1 },
    { SP "jaxlib/xla_extension.so", "jaxlib (xla_extension)", CP_FW_JAX, CP_FW_JAX, 0, 0 },
    { SP "jaxlib/_jax.cpython-312-x86_64-linux-gnu.so", "jaxlib", CP_FW_JAX, CP_FW_JAX, 0, 0 },
    { SP "jax_cuda12_plugin/xla_cuda_plugin.so", "jax-cuda plugin", CP_FW_JAX, CP_FW_JAX, 0, 0 },
    /* jax-cuda12-pjrt / jax-cuda13-pjrt: XLA's GPU runtime and its allocator. */
    { SP "jax_plugins/xla_cuda12/xla_cuda_plugin.so", "jax-cuda plugin (PJRT)", CP_FW_JAX,
      CP_FW_JAX, 0, 0 },
    { SP "jax_plugins/xla_cuda13/xla_cuda_plugin.so", "jax-cuda plugin (PJRT)", CP_FW_JAX,
      CP_FW_JAX, 0, 0 },
    { SP "cupy/_core/core.cpython-312-x86_64-linux-gnu.so", "cupy", CP_FW_CUPY, CP_FW_CUPY, 0, 0 },
    { SP "cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so", "cupy", CP_FW_CUPY,
      CP_FW_CUPY, 0, 0 },
    { "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda", 0, 0, 0, 1 },
    { "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml", 0, 0, 0, 0 },
    { "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL, 0, 0, 0, 1 },
    { "/lib64/ld-linux-x86-64.so.2", NULL, 0, 0, 0, 1 },
    { "/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so", NULL, 0, 0, 0, 1 },
    { "/opt/cuprobe/lib/cuprobe/libcuprobe.so", NULL, 0, 0, 0, 1 },
    /* A directory's name is not a library's: the program's own module. */
    { "/opt/libtorch/lib/mylayer.so", NULL, 0, 0, 0, 0 },
    { "/home/u/train/build/libmodel.so", NULL, 0, 0, 0, 0 },
};

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *p = cases[i].path;
        const cp_known_lib *e = cp_lib_find(p, CP_LIB_ENV);
        const cp_known_lib *a = cp_lib_find(p, CP_LIB_ALLOC);
        int ok = (cases[i].env ? e && strcmp(e->name, cases[i].env) == 0 : !e) &&
                 (e ? e->fw : 0) == cases[i].fw &&
                 (a ? a->fw : 0) == cases[i].alloc_fw &&
                 !!cp_lib_find(p, CP_LIB_HOLDS) == cases[i].holds &&
                 !!cp_lib_find(p, CP_LIB_INTERNAL) == cases[i].internal;
        if (!ok)
            printf("  %s: env %s fw %u, alloc fw %u, holds %d, internal %d\n", p,
                   e ? e->name : "-", e ? e->fw : 0, a ? a->fw : 0,
                   !!cp_lib_find(p, CP_LIB_HOLDS), !!cp_lib_find(p, CP_LIB_INTERNAL));
        CHECK(ok);
    }
    CHECK(cp_lib_find(NULL, CP_LIB_ENV) == NULL);
    CHECK(cp_lib_find("libcudart.so.12", 0) == NULL);    /* no role asked, none found */
    if (g_fail)
        return 1;
    printf("test_libs: %zu paths ok\n", sizeof cases / sizeof *cases);
    return 0;
}
