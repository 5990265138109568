#!/bin/bash
# tests/gpu/explain_cases.sh OUTDIR - four explanations that must hold on
# programs nobody here wrote (tests/gpu/explain/*.py), each run under
# `cuprobe run` and reported into OUTDIR:
#   numba_clean                a clean numba-cuda run on NVIDIA's bindings
#                              (lookups newer than the driver): no warning,
#                              no error, numba's arrays named after numba,
#                              its JIT-compiled kernel launched;
#   set_device                 torch.cuda.set_device(3) with one GPU visible
#                              (CUDA_VISIBLE_DEVICES=0, and unset on a
#                              machine with fewer than 4 GPUs): a synchronous
#                              fatal-error at the marked line, the visible
#                              GPUs listed, no async advice, no no-gpu-used
#                              warning;
#   fork_worker                CUDA in a forked DataLoader worker: an error
#                              at __getitem__'s line naming the fork;
#   backward_growth(_lightning) activations kept every step: memory-growth
#                              with a site at a line of the script.
# Needs python3 with a CUDA torch and one GPU (numba and lightning cases are
# skipped without them).  About 3 minutes.  Prints the findings and a
# verdict per case; exits 1 when a case fails.
#   tests/gpu/explain_cases.sh --again OUTDIR  reports and judges the traces
# an earlier run left in OUTDIR again, with this build's analyzer: no GPU,
# no program run (a case without traces there is skipped).
AGAIN=0
[ "$1" = --again ] && { AGAIN=1; shift; }
OUT=${1:-${OUT:-explain-cases-out}}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/tests/gpu/explain"
CP="$ROOT/build/cuprobe"
[ -x "$CP" ] || { echo "SKIP: $CP not built"; exit 0; }
if [ $AGAIN = 1 ]; then
    NGPU=1
elif ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "SKIP: python3 with a CUDA torch is not available"
    exit 0
else
    NGPU=$(python3 -c 'import torch; print(torch.cuda.device_count())')
fi

# run NAME SCRIPT [VAR=VALUE...]: OUT/NAME.{txt,json,out}, exit status in OUT/NAME.rc
run() {
    name=$1; script=$2; shift 2
    start=$(date +%s)
    if [ $AGAIN = 0 ]; then
        rm -rf "${OUT:?}/$name" && mkdir -p "$OUT/$name"
        env "$@" PYTHONUNBUFFERED=1 timeout 300 "$CP" run -o "$OUT/$name/t.%p.trace" -- \
            python3 "$HERE/$script" >"$OUT/$name.out" 2>&1
        echo $? >"$OUT/$name.rc"
    fi
    timeout 120 "$CP" report --no-progress "$OUT/$name"/*.trace >"$OUT/$name.txt" 2>&1
    timeout 120 "$CP" report --no-progress --json "$OUT/$name"/*.trace >"$OUT/$name.json" 2>&1
    echo "=== $name ($script $*): exit $(cat "$OUT/$name.rc"), $(( $(date +%s) - start )) s"
    grep -E '^(error|warning) +\[' "$OUT/$name.txt"
    grep -E '^info +\[(cuda-errors|leak|no-gpu-used)\]' "$OUT/$name.txt"
}

# judge NAME SCRIPT KIND: the verdict of one case (KIND: clean, sync,
# worker, growth), appended to OUT/verdicts.
judge() {
    python3 - "$OUT/$1.json" "$OUT/$1.txt" "$HERE/$2" "$3" "$1" <<'PY' | tee -a "$OUT/verdicts"
import json, os, re, sys
path, txt, script, kind, name = sys.argv[1:6]
base = os.path.basename(script)
try:
    rep = json.load(open(path))
except ValueError:
    print("%-26s FAIL  report unreadable" % name); sys.exit(0)
text = open(txt).read()
mark = next((n for n, l in enumerate(open(script), 1) if re.search(r"#\s*EXPECT:", l)), None)
bad = [f for f in rep["findings"] if f["severity"] in ("warning", "error")]
def lines_of(f):
    out = set()
    for s in f.get("sites") or ():
        out |= {int(p["line"]) for p in s.get("python") or () if os.path.basename(p.get("file") or "") == base}
    d = f.get("details") or {}
    if os.path.basename(str(d.get("file") or "")) == base and d.get("line"):
        out.add(int(d["line"]))
    return out
why = []
if kind == "clean":
    ok = not bad
    why = ["%s %s" % (f["severity"], f["check"]) for f in bad]
    if "held at exit by numba" not in text:
        ok = False; why.append("numba's arrays not named after numba")
    out = open(path[:-len(".json")] + ".out", errors="replace").read()
    why.append("numba launched its kernel" if "numba ok kernel" in out
               else "numba copied instead (no kernel compiled)")
else:
    want = {"sync": "fatal-error", "worker": "fatal-error", "growth": "memory-growth"}[kind]
    hits = [f for f in bad if f["check"] == want]
    found = set().union(*(lines_of(f) for f in hits)) if hits else set()
    ok = bool(found) if kind == "growth" else mark in found
    why.append("%s at %s:%s" % (want, base, sorted(found) or "no line of the script"))
    if kind == "growth":
        # The marker is the line --attribute names (what allocated the
        # memory that stays); a run without it names the backward() call.
        why.append("marked line %d %s" % (mark, "named" if mark in found else
                   "not named (the line --attribute names; without it, the backward() call)"))
        notes = [s.get("note") for f in hits for s in f.get("sites") or () if s.get("note")]
        why.append("notes: %s" % (notes[:2] or "none"))
    if kind == "sync":
        for needle in ("CUDA_LAUNCH_BLOCKING", "compute-sanitizer", "Kernels run asynchronously"):
            if needle in text:
                ok = False; why.append("says " + needle)
        if "A synchronous error" not in text or "This process sees" not in text:
            ok = False; why.append("no synchronous explanation")
        if any(f["check"] == "no-gpu-used" for f in bad):
            ok = False; why.append("no-gpu-used warning")
    if kind == "worker" and ("fork" not in text or "spawn" not in text):
        ok = False; why.append("no fork cause")
    others = ["%s %s" % (f["severity"], f["check"]) for f in bad if f["check"] != want]
    if others:
        why.append("also: " + ", ".join(others))
print("%-26s %s  %s" % (name, "PASS" if ok else "FAIL", "; ".join(why)))
PY
}

# can NAME CHECK: whether to run case NAME: with --again, when its traces
# are in OUT; else when the python3 command CHECK succeeds.
can() {
    if [ $AGAIN = 1 ]; then ls "$OUT/$1"/*.trace >/dev/null 2>&1; else python3 -c "$2" 2>/dev/null; fi
}
rm -f "$OUT/verdicts"
if can numba_clean 'import numba.cuda'; then
    run numba_clean numba_clean.py
    judge numba_clean numba_clean.py clean
else
    echo "skip numba_clean: numba cannot be imported" | tee -a "$OUT/verdicts"
fi
run set_device set_device.py CUDA_VISIBLE_DEVICES=0
judge set_device set_device.py sync
if [ "$NGPU" -lt 4 ] && can set_device_unset 'pass'; then
    run set_device_unset set_device.py
    judge set_device_unset set_device.py sync
fi
run fork_worker fork_worker.py
judge fork_worker fork_worker.py worker
run backward_growth backward_growth.py
judge backward_growth backward_growth.py growth
if can backward_growth_lightning 'import importlib.util as u, sys; sys.exit(not (u.find_spec("lightning") or u.find_spec("pytorch_lightning")))'; then
    run backward_growth_lightning backward_growth_lightning.py
    judge backward_growth_lightning backward_growth_lightning.py growth
else
    echo "skip backward_growth_lightning: lightning cannot be imported" | tee -a "$OUT/verdicts"
fi
echo "=== verdicts (reports in $OUT/NAME.txt)"
cat "$OUT/verdicts"
! grep -q ' FAIL ' "$OUT/verdicts"
