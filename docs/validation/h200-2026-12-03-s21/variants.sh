#!/bin/bash
# Session 21: the shim builds that device calls compare, as session 20's
# variants.sh (h200-2026-12-03-s20/variants.sh), plus PATCH=file: a
# measurement-only patch applied in the worktree first (floor.patch: the
# CP_FLOOR_* switches that skip parts of the event path; never on main).
# Usage: [PATCH=file] bash variants.sh NAME [REV] [CFLAGS...]
set -e
name=$1 rev=${2:-.}; shift; [ $# -gt 0 ] && shift
root=$(git rev-parse --show-toplevel)
cd "$root"
[ "$rev" = . ] && [ -z "$PATCH" ] && exec bash docs/validation/h200-2026-12-03-s20/variants.sh "$name" "" "$@"
[ "$rev" = . ] && rev=HEAD
src=/tmp/wt-$name
rm -rf "$src"; git worktree prune
git worktree add -q --detach "$src" "$rev"
[ -n "$PATCH" ] && git -C "$src" apply "$root/$PATCH"
flags="$*"
case $name in *st) flags="$flags -DCP_SELFTIME" ;; esac
ub=$(ls -d "$root"/build/libunwind-* | head -1)
make -C "$src" -s -j8 B=build/v/$name UNW_DIR="$ub" EXTRA_CFLAGS="$flags" \
    build/v/$name/libcuprobe.so build/v/$name/cuprobe >/dev/null
out=$root/build/vv/$name
mkdir -p "$out/bin" "$out/scripts"
cp "$src/build/v/$name/libcuprobe.so" "$src/build/v/$name/cuprobe" "$out/bin/"
rm -rf "$out/scripts/python" && cp -r "$src/scripts/python" "$out/scripts/"
echo "$name: $(git -C "$src" describe --always) ${PATCH:++$PATCH} $flags"
