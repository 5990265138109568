#!/usr/bin/env python3
"""gen_summary.py - a report summary of many processes made from a small one,
for measuring (and testing) how the report merges a large run.

  gen_summary.py SEED.json OUT.json PROCS [--distinct]

SEED.json is a summary (`cuprobe report --summary`) of a few processes of one
host.  OUT.json holds PROCS processes: the seed's, again and again, each
copy of it on a host of its own (node0000, node0001, ...), so that the pids
repeat across hosts as they do in containers; --distinct gives every copy a
pid of its own instead (its parent's and its forked children's the same
shift).  Only the host, pids and file change: the findings, call sites and
timelines are the seed's.  The pid, ppid and host are the first, second and
tenth fields of a process's "p" array (analyzer/model/cp_proc_fields.h).
"""
import json
import sys

PID, PPID, HOST = 0, 1, 9


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    seed = json.load(open(argv[1]))
    n, distinct = int(argv[3]), "--distinct" in argv[4:]
    base = seed["processes"]
    if not base:
        print("the seed has no process", file=sys.stderr)
        return 1
    with open(argv[2], "w") as out:
        head = {k: v for k, v in seed.items() if k != "processes"}
        text = json.dumps(head, separators=(",", ":"))
        out.write(text[:-1] + ',"processes":[\n')
        for i in range(n):
            copy, p = divmod(i, len(base))
            proc = json.loads(json.dumps(base[p]))
            proc["p"][HOST] = "node%04d" % copy
            if distinct:
                shift = 1000000 * (copy + 1)
                proc["p"][PID] += shift
                if proc["p"][PPID] != 1:
                    proc["p"][PPID] += shift
                proc["forks"] = [c + shift for c in proc["forks"]]
            proc["file"] = "node%04d/%s" % (copy, proc["file"])
            out.write(("," if i else "") + json.dumps(proc, separators=(",", ":")) + "\n")
        out.write("]}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
