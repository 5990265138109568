#!/bin/bash
# Session 20: the shim builds that device calls compare, built under
# build/v/NAME and copied, slim, to build/vv/NAME/bin (cuprobe, libcuprobe.so;
# scripts/python beside bin/; carry build/vv), from this tree or a worktree
# at an older commit.  Usage: bash variants.sh NAME [REV] [CFLAGS...]
#   NAME ending in "st": a -DCP_SELFTIME build (make selftime's).
set -e
name=$1 rev=${2:-} ; shift; [ $# -gt 0 ] && shift
root=$(git rev-parse --show-toplevel)
cd "$root"
src=$root
if [ -n "$rev" ] && [ "$rev" != . ]; then
    src=/tmp/wt-$rev
    [ -d "$src" ] || git worktree add -q --detach "$src" "$rev"
fi
flags="$*"
case $name in *st) flags="$flags -DCP_SELFTIME" ;; esac
ub=$(ls -d "$root"/build/libunwind-* | head -1)
make -C "$src" -s -j8 B=build/v/$name UNW_DIR="$ub" EXTRA_CFLAGS="$flags" \
    build/v/$name/libcuprobe.so build/v/$name/cuprobe >/dev/null
out=$root/build/vv/$name
mkdir -p "$out/bin" "$out/scripts"
cp "$src/build/v/$name/libcuprobe.so" "$src/build/v/$name/cuprobe" "$out/bin/"
rm -rf "$out/scripts/python" && cp -r "$src/scripts/python" "$out/scripts/"
echo "$name: $(cd "$src" && git describe --always --dirty) $flags"
