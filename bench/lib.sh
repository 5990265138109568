# bench/lib.sh - what the fake-driver timing scripts share (run_calls.sh,
# pair_shims.sh, thread_churn.sh); source it.  Sets B (default build)
# and T (a directory removed at exit), puts the fake driver first on
# LD_LIBRARY_PATH unless REAL=1 (the machine's own libcuda), and defines:
#   median          the median of the numbers on stdin;
#   med CALL FILE   the median of bench_calls' figure for CALL in FILE.
B=${B:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ "${REAL:-0}" = 1 ] || export LD_LIBRARY_PATH="$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
med() { grep "^$1 " "$2" | awk '{print $2}' | median; }
