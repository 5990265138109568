#!/bin/bash
# Session 21: the shim builds that device calls compare: session 20's
# variants.sh (h200-2026-12-03-s20/variants.sh), plus PATCH=file: a
# measurement-only patch applied first in a worktree of its own at REV
# (floor.patch: the CP_FLOOR_* switches that skip parts of the event path;
# plt.patch: the shim without -fno-plt; never on main).
# Usage: [PATCH=file] bash variants.sh NAME [REV] [CFLAGS...]
set -e
name=$1 rev=${2:-HEAD}; shift; [ $# -gt 0 ] && shift
root=$(git rev-parse --show-toplevel)
cd "$root"
s20=docs/validation/h200-2026-12-03-s20/variants.sh
[ -z "$PATCH" ] && exec bash "$s20" "$name" "$rev" "$@"
# Session 20's script builds in /tmp/wt-REV when it exists: REV = NAME here.
src=/tmp/wt-$name
rm -rf "$src"; git worktree prune
git worktree add -q --detach "$src" "$rev"
git -C "$src" apply "$root/$PATCH"
exec bash "$s20" "$name" "$name" "$@"
