# tests/gpu/analyzer_ready.sh - sourced (from the repository root) by the GPU
# scripts that run the analyzer.  The analyzer links elfutils dynamically; a
# GPU machine without libdw gets the copies carried in build/gpulib (`make
# gpulib`; the analyzer only, not the traced programs).  A warm machine keeps
# the .bin of the last call: wrap whenever the carried analyzer is the ELF
# binary itself.  Exits the calling script when the analyzer still cannot
# start: reports it wrote would be its error message, not findings, and two
# such "reports" compare equal.
if [ -d build/gpulib ] && ! ldconfig -p | grep -q libdw.so.1 && head -c 4 build/cuprobe-analyze | grep -q ELF; then
    mv build/cuprobe-analyze build/cuprobe-analyze.bin
    printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/build/gpulib" exec "%s/build/cuprobe-analyze.bin" "$@"\n' "$PWD" "$PWD" >build/cuprobe-analyze
    chmod +x build/cuprobe-analyze
fi
if ! build/cuprobe-analyze --help >/dev/null 2>&1; then
    echo "FATAL: build/cuprobe-analyze cannot start here (carry build/gpulib: make gpulib):" >&2
    build/cuprobe-analyze --help 2>&1 | head -n 2 >&2
    exit 1
fi
