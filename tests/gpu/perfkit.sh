#!/bin/sh
# tests/gpu/perfkit.sh [DIR] - pack this machine's perf (Debian linux-perf)
# with every library it loads, its own ld.so included, into DIR (default
# build/perfkit), so that a GPU machine without a package registry can
# profile: carry DIR and run
#   DIR/ld-linux-x86-64.so.2 --library-path DIR DIR/perf record ...
# (tests/gpu/profile_parts.sh does).  About 33 MB.
D=${1:-build/perfkit}
P=$(command -v perf) || { echo "perfkit: no perf here (apt-get install linux-perf)" >&2; exit 1; }
mkdir -p "$D" || exit 1
cp -L "$P" "$D/perf" || exit 1
ldd "$P" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | while read -r lib; do
    cp -L "$lib" "$D/" || exit 1
done
"$D"/ld-linux-x86-64.so.2 --library-path "$D" "$D/perf" --version
