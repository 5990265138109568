#!/bin/sh
# layering.sh - the layout rules, checked on the sources and the built objects:
#  - no loop of calls between files: the graph "file A calls a function
#    defined in file B" (from nm: A's undefined symbols, B's defined ones)
#    over build/interpose/**.o, build/analyzer/**.o and build/frontend/*.o
#    has no cycle;
#  - no loop of #include between modules either (a module: x.c with its
#    x.h; a header shared through an inline function, a struct or a macro
#    ties two files together as much as a call does);
#  - interpose/, analyzer/ and frontend/ never call into each other, and
#    interpose/ and analyzer/ never include each other's headers;
#  - the analyzer's folders keep their order (ANA_ORDER and ANA_DOCTOR in
#    the Makefile): a file includes headers of its own folder, of folders
#    before it and of include/ only, and calls only into those folders;
#  - an analyzer header's guard is its file name (cp_map.h: CP_MAP_H);
#  - the Python companion's modules (scripts/python/cuprobe_companion) do
#    not import each other in a loop.
# One concept per file is the rule, not a length: files over 800 lines are
# listed for a human to look at, and do not fail the test.
# The names the shim exports to interpose on the program (interpose/
# exports.map: the driver's cu* functions, dlsym, dlopen, exit, fork, exec*,
# signal, sigaction) are the program's entry points, not calls between our
# files: a file calling dlopen calls libc's.
. "$ROOT/tests/sh/lib.sh"
command -v nm >/dev/null || skip "no nm"
command -v python3 >/dev/null || skip "no python3"
[ -d "$B/interpose" ] && [ -d "$B/analyzer" ] && [ -d "$B/frontend" ] ||
    die "$B/interpose, $B/analyzer or $B/frontend not built"

# One nm over every object (-A: each line starts "OBJECT: "); a process
# per object costs more than the rest of the test.  An object without its
# source is stale (the source was removed) and is left out.
find "$B/interpose" "$B/analyzer" "$B/frontend" -name '*.o' | sort | while read -r o; do
    rel=${o#"$B"/}
    [ -f "$ROOT/${rel%.o}.c" ] && echo "$o"
done >"$TMP/objs"
xargs nm -P -A <"$TMP/objs" | awk -v b="$B/" '{ f = $1; sub(/:$/, "", f); f = substr(f, length(b) + 1) }
    $3 ~ /^[TDBRCVWG]$/ { print "D", f, $2 } $3 == "U" { print "U", f, $2 }' >"$TMP/syms"
[ -s "$TMP/syms" ] || die "no symbols read from $B/interpose and $B/analyzer"

(cd "$ROOT" && find interpose analyzer frontend include tests/fakecuda -name '*.[ch]' | sort | xargs wc -l) \
    | awk '$2 != "total" && $1 > 800 { print "  " $2 ": " $1 " lines" }' >"$TMP/long"

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
def problem(msg):
    global bad
    bad += 1
    print(msg)
side = lambda f: f.split("/")[0]
for f in files:
    for g, s in sorted(edges[f].items()):
        if side(f) != side(g):
            problem(f"cross-side call: {f} -> {g} ({s})")

# Tarjan's strongly connected components of graph g (node -> {node: why}):
# a component of 2+ nodes is a loop.
def loops(g):
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
    def visit(v):
        work = [(v, iter(sorted(g[v])))]
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        while work:
            u, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(sorted(g[w]))))
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
    for v in sorted(g):
        if v not in index:
            visit(v)
    return [c for c in comps if len(c) > 1]
def report_loops(g, what):
    for c in loops(g):
        lines = [f"  {f} -> {t} ({why})" for f in c for t, why in sorted(g[f].items()) if t in c]
        problem(f"loop of {what}:\n" + "\n".join(lines))
report_loops(edges, "calls between files")

# --- includes -----------------------------------------------------------------
# The analyzer's folder order, as the Makefile compiles it.
mk = open(os.path.join(root, "Makefile")).read()
def mkvar(name):
    m = re.search(r"^" + name + r"\s*:=(.*)$", mk, re.M)
    if not m:
        problem(f"Makefile: no {name} line")
        return []
    return m.group(1).split()
order = mkvar("ANA_ORDER")
doctor_sees = mkvar("ANA_DOCTOR")
# analyzer/<folder>/x.c: "<folder>"; analyzer/x.c: "." (the top, after every folder).
def folder(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else "."
def sees(fo):
    if fo == "doctor":
        return set(doctor_sees) | {"doctor"}
    if fo == ".":
        return set(order) | {"doctor", "."}
    return set(order[:order.index(fo) + 1]) if fo in order else {fo}
srcs = []
for top in ("interpose", "analyzer"):
    for d, _, fs in os.walk(os.path.join(root, top)):
        srcs += [os.path.relpath(os.path.join(d, f), root) for f in fs if f.endswith((".c", ".h"))]
srcs.sort()
by_name = {}
for f in srcs:
    by_name.setdefault(os.path.basename(f), []).append(f)
for fo in sorted({folder(f) for f in srcs if f.startswith("analyzer/")}):
    if fo != "." and fo != "doctor" and fo not in order:
        problem(f"analyzer/{fo}/ has no place in the Makefile's ANA_ORDER")
# Modules: x.c with its x.h.  x_int.h, the internal header of x, is a node
# of its own: it shares x's state with the files that implement x's
# internals, and its include of x.h (the types it extends) is no edge.
module = lambda f: f[:-2]
mods = {}
inc_re = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
for f in srcs:
    mods.setdefault(module(f), {})
    text = open(os.path.join(root, f), errors="replace").read()
    for name in inc_re.findall(text):
        here = os.path.join(os.path.dirname(f), name)
        if os.path.exists(os.path.join(root, here)):
            target = os.path.normpath(here)
        elif os.path.exists(os.path.join(root, "include", name)):
            continue
        else:
            cands = by_name.get(os.path.basename(name), [])
            same = [c for c in cands if side(c) == side(f)]
            if not cands:
                continue        # a generated or system header in quotes
            if not same:
                problem(f"cross-side include: {f} includes {cands[0]}")
                continue
            target = same[0]
        if side(target) != side(f):
            problem(f"cross-side include: {f} includes {target}")
            continue
        if f.startswith("analyzer/") and folder(target) not in sees(folder(f)):
            problem(f"include against the folder order: {f} includes {target}")
        if f.endswith("_int.h") and target == f[:-len("_int.h")] + ".h":
            continue
        if module(target) != module(f):
            mods[module(f)].setdefault(module(target), f"{f} includes {os.path.basename(target)}")
# No loop of #include between the analyzer's modules: a loop through a
# header (an inline function, a struct, a macro) ties two files together as
# much as a loop of calls does, and nm does not see it.
report_loops({m: {t: w for t, w in e.items() if t.startswith("analyzer/")}
              for m, e in mods.items() if m.startswith("analyzer/")}, "#include between modules")
# What x.h promises the rest of the analyzer is defined in x.c: a file
# that includes x_int.h (and so sees x's state) and defines one of x.h's
# functions serves x's callers from x's state while x calls it, a loop
# through data that neither nm nor the includes show.
decl_re = lambda name: re.compile(r"\b" + re.escape(name) + r"\s*\(")
def uncommented(path):
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", open(os.path.join(root, path)).read(), flags=re.S)
for hdr in srcs:
    if not (hdr.startswith("analyzer/") and hdr.endswith("_int.h")):
        continue
    pub = hdr[:-len("_int.h")] + ".h"
    if pub not in srcs:
        continue
    pub_text = uncommented(pub)
    for f in srcs:
        if not f.endswith(".c") or module(f) == module(pub) or \
           os.path.basename(hdr) not in inc_re.findall(open(os.path.join(root, f)).read()):
            continue
        for sym, where in defs.items():
            if f[:-2] + ".o" in where and decl_re(sym).search(pub_text):
                problem(f"{f} defines {sym}(), which {pub} promises: it belongs in {pub[:-2]}.c")
# Calls between the analyzer's folders keep the order too.
for f in files:
    if not f.startswith("analyzer/"):
        continue
    for g, s in sorted(edges[f].items()):
        if g.startswith("analyzer/") and folder(g) not in sees(folder(f)):
            problem(f"call against the folder order: {f} -> {g} ({s})")

# Header guards: analyzer/util/cp_map.h guards with CP_MAP_H (doctor_int.h
# with DOCTOR_INT_H or CP_DOCTOR_INT_H).
for f in srcs:
    if not (f.startswith("analyzer/") and f.endswith(".h")):
        continue
    want = re.sub(r"[^A-Za-z0-9]", "_", os.path.basename(f)).upper()
    m = re.search(r"^#ifndef\s+(\w+)\s*\n#define\s+(\w+)", open(os.path.join(root, f)).read(), re.M)
    if not m or m.group(1) != m.group(2) or m.group(1) not in (want, "CP_" + want):
        problem(f"header guard: {f} should guard with {want}")

long = open(sys.argv[2]).read()
if long:
    print("files over 800 lines, for a human to look at (one concept per file?):\n" + long, end="")
print(f"layering: {len(files)} objects, {sum(len(e) for e in edges.values())} file-to-file edges, "
      f"{len(mods)} modules, {sum(len(e) for e in mods.values())} include edges, {bad} problem(s)")
sys.exit(1 if bad else 0)
PY
[ $? -eq 0 ] || die "layering rules broken (above)"
echo "layering: ok"
