# tests/doctor/lib_doctor.sh - helpers for tests/sh/doctor_*.sh; source it
# after lib.sh.  Fixture trees: tests/doctor/<name>/{sys,proc,dev}
#   none      no NVIDIA GPU (Intel graphics), no nvidia modules
#   gpu1      one GPU at 0000:18:00.0 bound to nvidia, x16 link, driver 580.65.06
#   gpu2      two GPUs at 0000:18:00.0 and 0000:28:00.0 (the fake driver's bus ids)
#   degraded  like gpu1 but the link trained at x8 of x16
#   unbound   a GPU with no NVIDIA kernel driver loaded
#   pcie2     like gpu2, each GPU behind a bridge and a root port
#             (0000:00:01.0 - 0000:17:00.0 - 0000:18:00.0, 0000:00:02.0 -
#             0000:27:00.0 - 0000:28:00.0), all with AER counters at 0
#   aerstorm  pcie2 with 12042 correctable errors on bridge 0000:27:00.0 and
#             GPU 0000:28:00.0's link trained at x8 of x16
#   aerfatal  pcie2 with 2 uncorrectable (non-fatal) errors on GPU 0000:18:00.0
# Kernel logs: tests/doctor/logs/ (CUPROBE_KMSG, --kernel-log).
DR_FIX="$ROOT/tests/doctor"
DR_LOGS="$DR_FIX/logs"
NVML_DIR="$B/fakenvml"
[ -x "$ANA" ] || skip "analyzer not built: $ANA"
unset CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER CUPROBE_SYSFS_ROOT CUPROBE_PROCFS_ROOT CUPROBE_DEV_ROOT CUPROBE_KMSG
for v in $(env | sed -n 's/^\(FAKE\(CUDA\|NVML\)_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
# use_tree NAME: point doctor at a fixture tree
use_tree() {
    export CUPROBE_SYSFS_ROOT="$DR_FIX/$1/sys" CUPROBE_PROCFS_ROOT="$DR_FIX/$1/proc" \
        CUPROBE_DEV_ROOT="$DR_FIX/$1/dev"
}
need_fake() { [ -f "$FAKE_DIR/libcuda.so.1" ] || skip "fake driver not built: $FAKE_DIR/libcuda.so.1"; }
need_nvml() { [ -f "$NVML_DIR/libnvidia-ml.so.1" ] || skip "fake NVML not built: $NVML_DIR/libnvidia-ml.so.1"; }
# log_case TREE LOG: fixture tree TREE whose kernel log is $DR_LOGS/LOG
# (CUPROBE_KMSG), two GPUs of the fake driver and the fake NVML
log_case() {
    need_fake
    need_nvml
    use_tree "$1"
    export LD_LIBRARY_PATH="$FAKE_DIR:$NVML_DIR" FAKECUDA_DEVICES=2 CUPROBE_KMSG="$DR_LOGS/$2"
}
# run_doctor NAME [VAR=VALUE...] ARGS...: run doctor with those variables set
# (only for this run: "VAR=x func" would persist in some shells); output in
# $TMP/out.NAME (= $out), exit status in $rc
run_doctor() {
    out="$TMP/out.$1"; shift
    (
        while [ $# -gt 0 ]; do
            case "$1" in [A-Z]*=*) export "$1"; shift ;; *) break ;; esac
        done
        # A generous step limit first (a later --timeout wins): on a loaded
        # machine the fake driver's steps can take longer than the default
        # 20 s.  4 MiB copies, not 64: the same checks, on a tenth of the CPU.
        # Not with --kernel-log, which checks no machine: there they would
        # do nothing, and doctor refuses options that do nothing.
        case " $* " in
        *" --kernel-log "*) exec timeout 300 "$ANA" doctor "$@" ;;
        esac
        exec timeout 300 "$ANA" doctor --timeout 120 --bw-mib 4 "$@"
    ) >"$out" 2>&1
    rc=$?
}
# expect_verdict TEXT STATUS: the verdict line is exactly "verdict: TEXT"
expect_verdict() {
    got=$(grep '^verdict: ' "$out")
    [ "$got" = "verdict: $1" ] || { cat "$out"; die "got '$got', want 'verdict: $1'"; }
    [ "$rc" -eq "$2" ] || { cat "$out"; die "exit status $rc, want $2"; }
}
# expect_check ID LAYER MARK PATTERN: the JSON output in $out has a check
# ID at LAYER with MARK whose head matches the regular expression PATTERN
expect_check() {
    command -v python3 >/dev/null || return 0
    python3 -c 'import json,re,sys
d = json.load(open(sys.argv[1]))
hit = [c for l in d["layers"] for c in l["checks"] if l["layer"] == int(sys.argv[3]) and c["id"] == sys.argv[2]
       and c["mark"] == sys.argv[4] and re.search(sys.argv[5], c["head"])]
sys.exit(0 if hit else "no check %s at layer %s marked %s with head /%s/" % tuple(sys.argv[2:6]))' \
        "$out" "$@" || { cat "$out"; die "check $1 missing"; }
}
# expect_json FIELD VALUE: top-level FIELD of the JSON output in $out
expect_json() {
    command -v python3 >/dev/null || return 0
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=str(d[sys.argv[2]]); sys.exit(0 if v==sys.argv[3] else "%s=%s" % (sys.argv[2], v))' \
        "$out" "$1" "$2" || { cat "$out"; die "JSON $1 is not $2"; }
}
