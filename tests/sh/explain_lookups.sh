#!/bin/sh
# explain_lookups: a driver older than the CUDA Python bindings is an error
# only when something failed because of it, and memory held at exit is
# named after the allocator that holds it.  tests/py/explain_prog.py runs a
# clean numba program on NVIDIA's bindings (stand-ins), which look up every
# driver function at CUDA 13.3 on the fake 13.0 driver (FAKECUDA_GPA_NEWER:
# the three functions newer than the driver are not found), in a process
# that also imported PyTorch (a 48 MiB segment, FAKECUDA's own address via
# STANDIN_TORCH_DRIVER) and in a virtualenv named "torch"; numba holds a
# 16 MiB array at exit.  Its kernels are PTX (STANDIN_NUMBA_PTX): at the
# driver's ISA they load; at a newer one the driver's JIT refuses them and
# the run dies of it: then the mismatch is an error.
. "$ROOT/tests/sh/lib.sh"
need_py_fake
. "$ROOT/tests/sh/lib_explain.sh"

# 1. Clean run: no error or warning at all; the mismatch is info.
explain clean FAKECUDA_GPA_NEWER=1 STANDIN_TORCH_DRIVER=1 -- lookups
rc_is clean 0
has_not "^(error|warning) " clean
has "^info +\[cuda-errors\] the CUDA runtime or bindings \(CUDA 13\.3\) are newer than the driver \(CUDA 13\.0\): nothing failed because of it" clean
has "3 lookups asked for functions this driver does not have \(e\.g\. cuStreamBeginRecaptureToGraph\)" clean
expect_grep '"condition": *"driver-older-unneeded"' "$TMP/clean.json"
# 2. Who holds what at exit: PyTorch its segment, numba its array.
has "^info +\[leak\] held by allocator \(PyTorch caching allocator\): 48\.00 MiB in 1 segment at exit" clean
has "^info +\[leak\] held at exit by numba, not by a caching allocator: 16\.00 MiB in 1 allocation" clean
has "16\.00 MiB +.*explain_prog\.py:$(line_of "NUMBA ARRAY") \(lookups\)" clean

# 3. Without call sites, PyTorch's own list of its segments decides.
explain nostack FAKECUDA_GPA_NEWER=1 STANDIN_TORCH_DRIVER=1 CUPROBE_STACK_DEPTH=0 -- lookups
rc_is nostack 0
has "^info +\[leak\] held by allocator \(PyTorch caching allocator\): 48\.00 MiB in 1 segment at exit" nostack
has "^info +\[leak\] held at exit outside the caching allocator: 16\.00 MiB in 1 allocation" nostack

# 4. The program calls a function the driver lacks and dies of it: error.
explain needed FAKECUDA_GPA_NEWER=1 STANDIN_TORCH_DRIVER=1 -- needed
rc_is needed 1
has "^error +\[cuda-errors\] the driver \(CUDA 13\.0\) is older than the CUDA runtime \(CUDA 13\.3\)" needed
has "What failed because of it: the exception the run died of names cuStreamBeginRecaptureToGraph" needed

# 5. Kernels in PTX newer than the driver (ISA 9.1 on CUDA 13.0): refused.
explain ptx FAKECUDA_GPA_NEWER=1 STANDIN_TORCH_DRIVER=1 STANDIN_NUMBA_PTX=9.1 -- lookups
rc_is ptx 1
has "^error +\[fatal-error\] pid [0-9]+ died of a kernel image this driver cannot compile at .*explain_prog\.py:$(line_of "NUMBA LAUNCH") \(lookups\)" ptx
has "CudaAPIError: \[222\] Call to cuModuleLoadData results in CUDA_ERROR_UNSUPPORTED_PTX_VERSION" ptx
has "Fix: upgrade the NVIDIA driver \(or install cuda-compat\), or build the kernels with a toolkit no newer" ptx
has "\[cuda-errors\] the driver \(CUDA 13\.0\) is older than the CUDA runtime \(CUDA 13\.3\)" ptx
has "What failed because of it: the exception the run died of is CUDA_ERROR_UNSUPPORTED_PTX_VERSION \(222\)" ptx
has_not "initialisation failed|nothing failed because of it" ptx
expect_grep '"condition": *"driver-too-old"' "$TMP/ptx.json"
# ... at the driver's own ISA (9.0) they load: as clean as run 1.
explain ptx90 FAKECUDA_GPA_NEWER=1 STANDIN_TORCH_DRIVER=1 STANDIN_NUMBA_PTX=9.0 -- lookups
rc_is ptx90 0
has_not "^(error|warning) " ptx90
echo "ok"
