"""vmm_groups.py - how PyTorch's expandable-segment counters relate to the
driver calls: reads `cuprobe dump` of one process on stdin and prints the
number of cuMemSetAccess calls (one per ExpandableSegment::map() call, which
maps a run of 20 MiB pages), of cuMemMap/cuMemUnmap pages, of contiguous
unmap runs (one per unmap() call) and of reserve/free calls, and the failed
calls with their result codes."""
import collections
import re
import sys

ops = collections.Counter()
failed = collections.Counter()
runs, prev_end = 0, None
for line in sys.stdin:
    if not line.startswith(("VMM ", "ALLOC ", "FREE ")):
        if line.startswith(("COPY", "MEMSET", "SYNC")):
            prev_end = None
        continue
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    if f.get("result", "0") != "0":
        failed["%s result=%s" % (f["api"], f["result"])] += 1
        continue
    if line.startswith("VMM "):
        ops[f["op"]] += 1
        if f["op"] == "unmap":
            va, size = int(f["va"], 16), int(f["size"])
            if prev_end != va:
                runs += 1
            prev_end = va + size
print(dict(ops), "contiguous unmap runs:", runs, "failed:", dict(failed))
