/*
 * cp_advice.c - the one table of framework-specific fixes (cp_advice.h).
 *
 * Each row is a topic, each column a framework: the words are the knob a
 * user of that framework turns (PyTorch: torch.cuda.set_device,
 * PYTORCH_CUDA_ALLOC_CONF; JAX: CUDA_VISIBLE_DEVICES,
 * XLA_PYTHON_CLIENT_PREALLOCATE, XLA_PYTHON_CLIENT_MEM_FRACTION; CuPy: its
 * memory pool; plain CUDA: the driver and runtime calls).
 */
#include "cp_advice.h"

static const char *const cp_fwk_names[CP_FWK_N] = {
    [CP_FWK_CUDA] = "CUDA", [CP_FWK_TORCH] = "PyTorch", [CP_FWK_JAX] = "JAX/XLA",
    [CP_FWK_CUPY] = "CuPy",
};

static const char *const cp_adv_text[CP_ADV_N][CP_FWK_N] = {
    [CP_ADV_DEVICE] = {
        [CP_FWK_TORCH] = "Call torch.cuda.set_device(local_rank) before any other CUDA work "
                         "(or give each rank its GPU with CUDA_VISIBLE_DEVICES), pass "
                         "device=/map_location= explicitly and use "
                         "torch.device(f\"cuda:{local_rank}\") instead of \"cuda\".",
        [CP_FWK_JAX] = "XLA opens every GPU it can see: give each process only its own with "
                       "CUDA_VISIBLE_DEVICES (one process per GPU), or pass "
                       "local_device_ids= to jax.distributed.initialize().",
        [CP_FWK_CUPY] = "Select the GPU with cupy.cuda.Device(n).use() (or `with "
                        "cupy.cuda.Device(n):`) on every thread before creating arrays, or "
                        "give each process its GPU with CUDA_VISIBLE_DEVICES.",
        [CP_FWK_CUDA] = "Make the right context current on every thread (cudaSetDevice / "
                        "cuCtxSetCurrent) before any other call, or give each process its "
                        "GPU with CUDA_VISIBLE_DEVICES.",
    },
    [CP_ADV_ALL_GPUS] = {
        [CP_FWK_TORCH] = "Nothing is wrong; to keep the other GPUs untouched, start the "
                         "process with CUDA_VISIBLE_DEVICES set to the GPUs it uses.",
        [CP_FWK_JAX] = "Nothing is wrong for a single process; to leave the other GPUs to "
                       "other jobs, start it with CUDA_VISIBLE_DEVICES=<the GPUs it uses> "
                       "(XLA then opens only those).",
        [CP_FWK_CUPY] = "Nothing is wrong; start the process with CUDA_VISIBLE_DEVICES set "
                        "to the GPUs it uses to leave the others untouched.",
        [CP_FWK_CUDA] = "Nothing is wrong; start the process with CUDA_VISIBLE_DEVICES set "
                        "to the GPUs it uses to leave the others untouched.",
    },
    [CP_ADV_FRAG] = {
        [CP_FWK_TORCH] = "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or "
                         "max_split_size_mb of at least 21), allocate the large long-lived tensors first, "
                         "and do not call torch.cuda.empty_cache() inside the loop.",
        [CP_FWK_JAX] = "Let XLA's BFC allocator keep its arena: leave "
                       "XLA_PYTHON_CLIENT_PREALLOCATE unset (true) or raise "
                       "XLA_PYTHON_CLIENT_MEM_FRACTION, and do not use "
                       "XLA_PYTHON_CLIENT_ALLOCATOR=platform outside debugging (it allocates "
                       "and frees on demand).",
        [CP_FWK_CUPY] = "Keep CuPy's memory pool (cupy.get_default_memory_pool()) and do not "
                        "call its free_all_blocks() inside the loop; reuse arrays of the "
                        "same shape (out=) instead of allocating new ones each step.",
        [CP_FWK_CUDA] = "Reuse buffers instead of freeing and allocating them again, or use "
                        "stream-ordered allocation (cudaMallocAsync) with a pool release "
                        "threshold (cuMemPoolSetAttribute RELEASE_THRESHOLD).",
    },
    [CP_ADV_GROWTH] = {
        [CP_FWK_TORCH] = "Keep only what you need from each step: loss.item() or "
                         "loss.detach() when logging (not losses.append(loss)), clear "
                         "per-step lists, bound caches; watch torch.cuda.memory_allocated() "
                         "per step to confirm.",
        [CP_FWK_JAX] = "Do not keep each step's device arrays alive (convert logged values "
                       "with float() or jax.device_get(), clear per-step lists), and avoid "
                       "shapes that change every step (each one compiles and caches a new "
                       "executable).",
        [CP_FWK_CUPY] = "Drop references to per-step arrays (del, clear lists); watch "
                        "cupy.get_default_memory_pool().used_bytes() per step to confirm.",
        [CP_FWK_CUDA] = "Free each iteration's buffers at its end (cudaFree / cuMemFree), "
                        "or allocate them once before the loop and reuse them.",
    },
    [CP_ADV_CAPACITY] = {
        [CP_FWK_TORCH] = "Reduce what is live (smaller batch, activation checkpointing, free "
                         "references); cap the process with "
                         "torch.cuda.set_per_process_memory_fraction() when it shares the GPU.",
        [CP_FWK_JAX] = "JAX preallocates 75% of each visible GPU: set "
                       "XLA_PYTHON_CLIENT_PREALLOCATE=false, or "
                       "XLA_PYTHON_CLIENT_MEM_FRACTION to the share it needs, and "
                       "CUDA_VISIBLE_DEVICES to the GPUs it uses.",
        [CP_FWK_CUPY] = "Cap CuPy's pool with cupy.get_default_memory_pool().set_limit(size=...) "
                        "(or CUPY_GPU_MEMORY_LIMIT) and reduce what is live.",
        [CP_FWK_CUDA] = "Reduce what is allocated at once, or split the work so it fits.",
    },
    [CP_ADV_PINNED] = {
        [CP_FWK_TORCH] = "Pin the host memory: DataLoader(pin_memory=True), "
                         "tensor.pin_memory() or torch.empty(..., pin_memory=True); allocate "
                         "pinned buffers once and reuse them.",
        [CP_FWK_JAX] = "Stage host data through pinned buffers (jax.device_put of a NumPy "
                       "array copies synchronously from pageable memory); prefetch batches "
                       "with jax.device_put on the next step's data ahead of time.",
        [CP_FWK_CUPY] = "Copy from pinned memory: cupyx.empty_pinned() / "
                        "cupyx.zeros_pinned() for the host buffers, then "
                        "cupy.ndarray.set(..., stream=s).",
        [CP_FWK_CUDA] = "Allocate the host buffers with cuMemHostAlloc / cudaMallocHost or "
                        "register them with cudaHostRegister; allocate once and reuse.",
    },
    [CP_ADV_SYNC] = {
        [CP_FWK_TORCH] = "Keep values on the GPU inside the loop (accumulate the loss as a "
                         "tensor, call .item() / .cpu() every N steps), use non_blocking "
                         "copies into pinned buffers, and remove torch.cuda.synchronize() "
                         "calls not needed for timing.",
        [CP_FWK_JAX] = "Do not read results back every step (float(x), np.asarray(x), "
                       "x.block_until_ready()): log every N steps and let JAX dispatch "
                       "ahead.",
        [CP_FWK_CUPY] = "Do not call .get() / cupy.asnumpy() or synchronize every step; read "
                        "results back every N steps, on a stream, into pinned memory.",
        [CP_FWK_CUDA] = "Use cudaMemcpyAsync into pinned memory with an event and wait only "
                        "where the host needs the data; drop device-wide synchronisations "
                        "from the loop.",
    },
};

int cp_advice_fw(const cp_proc *p)
{
    if (!p)
        return CP_FWK_CUDA;
    if (p->fw & CP_FW_TORCH)
        return CP_FWK_TORCH;
    if (p->fw & CP_FW_JAX)
        return CP_FWK_JAX;
    if (p->fw & CP_FW_CUPY)
        return CP_FWK_CUPY;
    return CP_FWK_CUDA;
}

const char *cp_advice_fw_name(int fwk)
{
    return fwk >= 0 && fwk < CP_FWK_N ? cp_fwk_names[fwk] : cp_fwk_names[CP_FWK_CUDA];
}

const char *cp_advice(int fwk, int topic)
{
    if (fwk < 0 || fwk >= CP_FWK_N)
        fwk = CP_FWK_CUDA;
    if (topic < 0 || topic >= CP_ADV_N)
        return "";
    return cp_adv_text[topic][fwk];
}

void cp_advice_fix(cp_finding *f, const cp_proc *p, int topic)
{
    if (!f)
        return;
    int fwk = cp_advice_fw(p);
    f->fix = cp_advice(fwk, topic);
    cp_jb_ks(&f->details, "framework", cp_advice_fw_name(fwk));
}
