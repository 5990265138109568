"""check_pystack.py DUMP MANIFEST [--no-python]

Compare a trace (as `cuprobe-analyze dump` prints it) with the manifest
written by pystack_cases.py: for every case, the ALLOC of that size must
carry a stack whose Python frames are exactly CPython's own view at the
call (file, qualname, line), innermost first, cut at CUPROBE_PYTHON_DEPTH
(64); the innermost line must be the source line that calls cuMemAlloc_v2;
a case with no frames (a thread C started) must have none but native ones.
The innermost native frame must be the caller of the hook, never the shim
itself (libcuprobe.so), and for a case naming "native0" lie in that module.
Every STRING, PYFRAME and STACK must be defined before its first use.
With --no-python (CUPROBE_PYTHON=0): no PYFRAME at all, all stacks py=[].
Exit 0 when all hold, 1 with the differences printed otherwise.
"""
import json
import re
import sys

FIELD = re.compile(r'([\w.\[\]]+)=("(?:[^"\\]|\\.)*"|\[[^\]]*\]|\S+)')
PY_DEPTH = 64


def unquote(v):
    if v.startswith('"'):
        return bytes(v[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")
    return v


def parse(path):
    recs = []
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for n, line in enumerate(f):
            parts = line.rstrip("\n").split(" ", 1)
            fields = {k: unquote(v) for k, v in FIELD.findall(parts[1] if len(parts) > 1 else "")}
            recs.append((n, parts[0], fields))
    return recs


def ids(v):
    return [int(x, 0) for x in v.strip("[]").split()]


def main():
    dump, manifest = sys.argv[1], sys.argv[2]
    no_python = "--no-python" in sys.argv
    recs = parse(dump)
    errors = []
    strings, frames, stacks, allocs, modules = {}, {}, {}, {}, []
    for n, kind, f in recs:
        if kind == "MODULE_RESET":
            modules = []
        elif kind == "MODULE":
            modules.append((int(f["base"], 0), int(f["size"]), f["path"]))
        elif kind == "STRING":
            strings.setdefault(int(f["id"]), (n, f["text"]))
        elif kind == "PYFRAME":
            frames.setdefault(int(f["id"]), (n, int(f["file_str"]), int(f["func_str"]), int(f["line"])))
        elif kind == "STACK":
            stacks.setdefault(int(f["id"]), (n, ids(f["native"]), ids(f["py"])))
        elif kind == "ALLOC":
            allocs.setdefault(int(f["size"]), []).append((n, int(f["stack"])))

    def frame_text(fid, used_at):
        n, fs, fn, line = frames[fid]
        if n > used_at:
            errors.append("PYFRAME %d defined after its use" % fid)
        for s in (fs, fn):
            if s not in strings or strings[s][0] > n:
                errors.append("STRING %d missing or defined after PYFRAME %d" % (s, fid))
        return [strings.get(fs, (0, "?"))[1], strings.get(fn, (0, "?"))[1], line]

    if no_python:
        if frames:
            errors.append("%d PYFRAME records with CUPROBE_PYTHON=0" % len(frames))
        for sid, (_, native, py) in stacks.items():
            if py:
                errors.append("stack %d has Python frames with CUPROBE_PYTHON=0" % sid)
    else:
        with open(manifest) as f:
            cases = json.load(f)
        for case in cases:
            name, size = case["case"], case["size"]
            hits = allocs.get(size, [])
            if len(hits) != 1:
                errors.append("%s: %d ALLOC records of size %d" % (name, len(hits), size))
                continue
            at, sid = hits[0]
            if sid not in stacks or stacks[sid][0] > at:
                errors.append("%s: stack %d missing or defined after the ALLOC" % (name, sid))
                continue
            _, native, py = stacks[sid]
            got = [frame_text(fid, stacks[sid][0]) for fid in py]
            want = case["frames"][:PY_DEPTH]
            if not native:
                errors.append("%s: no native frames" % name)
            else:
                mod = [p for b, sz, p in modules if b <= native[0] < b + sz]
                mod = mod[0] if mod else "?"
                if mod.endswith("libcuprobe.so"):
                    errors.append("%s: innermost native frame is in the shim" % name)
                if case.get("native0") and not mod.endswith(case["native0"]):
                    errors.append("%s: innermost native frame in %s, not %s" % (name, mod, case["native0"]))
            if got != want:
                errors.append("%s: Python frames differ\n  got  %r\n  want %r" % (name, got, want))
                continue
            if want:
                path, _, line = want[0]
                with open(path, encoding="utf-8") as src:
                    text = src.read().splitlines()[line - 1]
                if "cuMemAlloc_v2" not in text:
                    errors.append("%s: line %d is not the driver call: %r" % (name, line, text))
            print("ok  %-18s %s" % (name, "%s:%d in %s" % (got[0][0].rsplit("/", 1)[-1], got[0][2], got[0][1]) if got else "no Python frames"))
    for e in errors:
        print("FAIL " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
