#!/bin/sh
# wheel_install: `make wheel`, installed offline (pip --no-index) into a fresh
# venv, puts a cuprobe on the venv's PATH that traces the demo on the fake
# driver and reports its findings, with the venv's own shim, analyzer
# (libdw and libelf linked in) and companion; pip uninstall takes them away.
# tier: long
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$ROOT/tests/sh/lib.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
python3 -m venv "$TMP/probe" >/dev/null 2>&1 && [ -x "$TMP/probe/bin/pip" ] ||
    skip "python3 -m venv with pip unavailable (python3-venv)"
[ -x "$B/tests/progs/demo_train" ] && [ -f "$FAKE_DIR/libcuda.so.1" ] || skip "demo or fake driver not built"

make --no-print-directory -s -C "$ROOT" B="$B" DIST="$TMP/dist" wheel >"$TMP/make.out" 2>&1 ||
    { cat "$TMP/make.out"; die "make wheel failed"; }
set -- "$TMP"/dist/cuprobe-*-py3-none-*.whl
[ $# -eq 1 ] && [ -f "$1" ] || die "make wheel wrote no single wheel: $*"
WHL=$1
VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
case "${WHL##*/}" in
    cuprobe-"$VERSION"-py3-none-manylinux_2_*_"$(uname -m)".whl) ;;
    *) die "wheel name ${WHL##*/}: not cuprobe-$VERSION-py3-none-manylinux_2_N_$(uname -m).whl" ;;
esac

V="$TMP/venv"
python3 -m venv "$V" || die "python3 -m venv failed"
PIP_DISABLE_PIP_VERSION_CHECK=1 "$V/bin/pip" install -q --no-index "$WHL" >"$TMP/pip.out" 2>&1 ||
    { cat "$TMP/pip.out"; die "pip install --no-index failed"; }

# Only the venv's bin and the system's: no build tree, no other cuprobe.
P="$V/bin:/usr/bin:/bin"
[ "$(PATH=$P command -v cuprobe)" = "$V/bin/cuprobe" ] ||
    die "cuprobe resolved to $(PATH=$P command -v cuprobe), not $V/bin/cuprobe"
for f in "$V/lib/cuprobe/libcuprobe.so" "$V/lib/cuprobe/cuprobe-analyze" \
         "$V/share/cuprobe/python/cuprobe_companion/__init__.py"; do
    [ -f "$f" ] || die "the wheel did not install $f"
done
# The analyzer and the shim need the C library only (libdw, libelf, zstd
# and libunwind are inside them).
for f in "$V/lib/cuprobe/cuprobe-analyze" "$V/lib/cuprobe/libcuprobe.so" "$V/bin/cuprobe"; do
    ldd "$f" | awk '$1 !~ /^(linux-vdso|\/lib.*ld-linux|libc|libm|libpthread|libdl)[.-]/' >"$TMP/ldd"
    [ ! -s "$TMP/ldd" ] || { cat "$TMP/ldd"; die "$f needs more than libc"; }
done

mkdir "$TMP/w" && cd "$TMP/w" || die "no work directory"
PATH=$P FAKECUDA_DEVICES=2 LD_LIBRARY_PATH="$FAKE_DIR" \
    cuprobe run -o "$TMP/w/demo-%p.trace" -- "$B/tests/progs/demo_train" >"$TMP/run.out" 2>&1 ||
    { cat "$TMP/run.out"; die "cuprobe run of the demo failed"; }
PATH=$P cuprobe report >"$TMP/report.out" 2>&1 || { cat "$TMP/report.out"; die "cuprobe report failed"; }
expect_grep '^Findings: 1 error, 3 warnings' "$TMP/report.out"
for check in cross-device-access stray-device pageable-async-copy; do
    expect_grep "^(error|warning|info) +\[$check\]" "$TMP/report.out"
done
expect_grep 'demo_train\.c:48' "$TMP/report.out"     # symbolized by the packaged analyzer

# `cuprobe run` puts the venv's companion on PYTHONPATH.
PATH=$P LD_LIBRARY_PATH="$FAKE_DIR" cuprobe run -o "$TMP/w/py-%p.trace" -- \
    "$V/bin/python3" -c 'import cuprobe_companion; print(cuprobe_companion.__file__)' \
    >"$TMP/py.out" 2>&1 || { cat "$TMP/py.out"; die "cuprobe run of python failed"; }
expect_grep "^$V/share/cuprobe/python/cuprobe_companion/__init__\.py\$" "$TMP/py.out"

"$V/bin/pip" uninstall -q -y cuprobe >"$TMP/pip.out" 2>&1 || { cat "$TMP/pip.out"; die "pip uninstall failed"; }
[ ! -e "$V/bin/cuprobe" ] && [ ! -e "$V/lib/cuprobe/libcuprobe.so" ] &&
    [ ! -e "$V/share/cuprobe/python/sitecustomize.py" ] || die "pip uninstall left cuprobe's files"
echo "wheel ${WHL##*/} installs offline into a venv; its cuprobe traces and reports the demo"
