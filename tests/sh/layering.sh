#!/bin/sh
# layering.sh - the layout rules of the brief, checked on the built objects:
#  - no loop of calls between files: the graph "file A calls a function
#    defined in file B" (from nm: A's undefined symbols, B's defined ones)
#    over build/interpose/**.o, build/analyzer/**.o and build/frontend/*.o
#    has no cycle;
#  - interpose/, analyzer/ and frontend/ never call into each other;
#  - no source file over 600 lines in interpose/, analyzer/, frontend/,
#    include/ and tests/fakecuda/;
#  - the Python companion's modules (scripts/python/cuprobe_companion) do
#    not import each other in a loop either.
# The names the shim exports to interpose on the program (interpose/
# exports.map: the driver's cu* functions, dlsym, dlopen, exit, fork, exec*,
# signal, sigaction) are the program's entry points, not calls between our
# files: a file calling dlopen calls libc's.
. "$ROOT/tests/sh/lib.sh"
command -v nm >/dev/null || skip "no nm"
command -v python3 >/dev/null || skip "no python3"
[ -d "$B/interpose" ] && [ -d "$B/analyzer" ] && [ -d "$B/frontend" ] ||
    die "$B/interpose, $B/analyzer or $B/frontend not built"

for o in $(find "$B/interpose" "$B/analyzer" "$B/frontend" -name '*.o' | sort); do
    rel=${o#"$B"/}
    [ -f "$ROOT/${rel%.o}.c" ] || continue   # a stale object of a removed source
    nm -P "$o" | awk -v f="$rel" '$2 ~ /^[TDBRCVWG]$/ { print "D", f, $1 } $2 == "U" { print "U", f, $1 }'
done >"$TMP/syms"
[ -s "$TMP/syms" ] || die "no symbols read from $B/interpose and $B/analyzer"

(cd "$ROOT" && find interpose analyzer frontend include tests/fakecuda -name '*.[ch]' | sort | xargs wc -l) \
    | awk '$2 != "total" && $1 > 600 { print "  " $2 ": " $1 " lines" }' >"$TMP/long"

python3 - "$TMP/syms" "$TMP/long" "$ROOT" <<'PY'
import fnmatch, glob, os, re, sys
root = sys.argv[3]
exported = []
in_global = False
for line in open(os.path.join(root, "interpose/exports.map")):
    line = line.split("/*")[0].strip()
    if line.startswith("global:"):
        in_global = True
    elif line.startswith("local:"):
        in_global = False
    elif in_global and line.endswith(";"):
        exported.append(line[:-1].strip())
def interposed(sym):
    return not sym.startswith("cuprobe_") and any(fnmatch.fnmatchcase(sym, p) for p in exported)
defs, uses = {}, {}
for line in open(sys.argv[1]):
    kind, f, sym = line.split()
    if interposed(sym):
        continue
    if kind == "D":
        defs.setdefault(sym, set()).add(f)
    else:
        uses.setdefault(f, set()).add(sym)
# The companion: "from . import _x" / "from ._x import ..." between modules.
pydir = os.path.join(root, "scripts/python/cuprobe_companion")
for path in sorted(glob.glob(os.path.join(pydir, "*.py"))):
    me = "companion/" + os.path.basename(path)
    uses.setdefault(me, set())
    defs.setdefault("py:" + me, set()).add(me)
    for m in re.finditer(r"^\s*from \.(\w*) import (\w+)", open(path).read(), re.M):
        mod = m.group(1) or m.group(2)
        uses[me].add("py:companion/" + mod + ".py")
files = sorted(set(uses) | {f for fs in defs.values() for f in fs})
edges = {f: {} for f in files}
for f, syms in uses.items():
    for s in sorted(syms):
        for g in defs.get(s, ()):
            if g != f:
                edges[f].setdefault(g, s)
bad = 0
side = lambda f: f.split("/")[0]
for f in files:
    for g, s in sorted(edges[f].items()):
        if side(f) != side(g):
            print(f"cross-side call: {f} -> {g} ({s})")
            bad += 1
# Tarjan's strongly connected components: a component of 2+ files is a loop.
index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
def visit(v):
    work = [(v, iter(sorted(edges[v])))]
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    while work:
        u, it = work[-1]
        for w in it:
            if w not in index:
                index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(edges[w]))))
                break
            if w in on:
                low[u] = min(low[u], index[w])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[u])
            if low[u] == index[u]:
                c = []
                while True:
                    w = stack.pop(); on.discard(w); c.append(w)
                    if w == u:
                        break
                comps.append(sorted(c))
for v in files:
    if v not in index:
        visit(v)
# Loops that landed with other work and are still to be broken (each named
# exactly; any other loop, or a bigger one, fails).  Remove a line when its
# loop is gone.
KNOWN = [
]
for c in comps:
    if len(c) > 1 and set(c) in KNOWN:
        print("known loop, still to be broken: " + " <-> ".join(c))
        continue
    if len(c) > 1:
        bad += 1
        print("loop of calls between files:")
        for f in c:
            for g, s in sorted(edges[f].items()):
                if g in c:
                    print(f"  {f} -> {g} ({s})")
# Files over 600 lines that landed with other work and are still to be
# split (named exactly; remove a line when its file is back under 600).
KNOWN_LONG = {
}
long = ""
for line in open(sys.argv[2]):
    if line.split(":")[0].strip() in KNOWN_LONG:
        print("known long file, still to be split:" + line.rstrip("\n"))
    else:
        long += line
if long:
    bad += 1
    print("files over 600 lines:\n" + long, end="")
print(f"layering: {len(files)} objects, {sum(len(e) for e in edges.values())} file-to-file edges, {bad} problem(s)")
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || die "layering rules broken (above)"
echo "layering: ok"
