"""trace_stats.py - counts from `cuprobe dump` output, for the GPU checks.

Usage: cuprobe dump TRACE | python3 trace_stats.py [--between MARK_A MARK_B]
Prints JSON: records per type and api, allocations/frees per api and kind,
copies per (api, src_class, dst_class), launches per api (summed
LAUNCH_COUNT), the routes each API was handed out by, and "sites": ALLOC
records by "NATIVE,PYTHON", the frame counts of the STACK they name
("-1,-1": none).  --between limits ALLOC/FREE counts to the records
between two framework marks.
"""
import collections
import json
import re
import sys

TOKEN = re.compile(r'(\w[\w.\[\]]*)=("(?:[^"\\]|\\.)*"|\S+)')
# A STACK's frame lists hold spaces, which TOKEN's values do not.
FRAMES = re.compile(r" (native|py)=\[([^\]]*)\]")


def parse(line):
    typ = line.split(" ", 1)[0]
    fields = {}
    for k, v in TOKEN.findall(line):
        fields[k] = json.loads(v) if v.startswith('"') else v
    return typ, fields


def main():
    between = None
    if len(sys.argv) == 4 and sys.argv[1] == "--between":
        between = (sys.argv[2], sys.argv[3])
    inside = between is None
    per_type = collections.Counter()
    alloc = collections.Counter()
    free = collections.Counter()
    copies = collections.Counter()
    launches = collections.Counter()
    routes = {}
    failed = collections.Counter()
    depth = {}
    sites = collections.Counter()
    for line in sys.stdin:
        typ, f = parse(line.rstrip("\n"))
        per_type[typ] += 1
        if typ == "FRAMEWORK" and f.get("kind") == "mark" and between:
            mark = json.loads(f["json"]).get("mark")
            if mark == between[0]:
                inside = True
            elif mark == between[1]:
                inside = False
        elif typ == "STACK":
            n = {k: len(v.split()) for k, v in FRAMES.findall(line)}
            depth[f["id"]] = "%d,%d" % (n.get("native", 0), n.get("py", 0))
        elif typ == "API":
            routes[f["elf_name"]] = f.get("routes", f.get("route"))
        elif typ in ("ALLOC", "FREE") and inside:
            if typ == "ALLOC":
                sites[depth.get(f.get("stack"), "-1,-1")] += 1
            key = "%s/%s" % (f["api"], f["kind"])
            if f.get("result") != "0":
                failed[key] += 1
            elif typ == "ALLOC":
                alloc[key] += 1
            else:
                free[key] += 1
        elif typ == "COPY":
            copies["%s %s->%s" % (f["api"], f["src_class"], f["dst_class"])] += 1
        elif typ == "LAUNCH_COUNT":
            launches[f["api"]] += int(f["count"])
    print(json.dumps({"types": per_type, "alloc": alloc, "free": free, "failed": failed,
                      "copies": copies, "launches": launches, "routes": routes,
                      "sites": sites},
                     indent=1, sort_keys=True))


main()
