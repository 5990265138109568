"""report_findings.py - the findings of one check in a `cuprobe report
--json` file, wherever the report nests them (top level, per process)."""
import json


def findings(path, check):
    """Every finding object whose "check" is `check`, in document order."""
    def walk(o):
        if isinstance(o, dict):
            if o.get("check") == check:
                yield o
            for v in o.values():
                yield from walk(v)
        elif isinstance(o, list):
            for v in o:
                yield from walk(v)
    with open(path) as f:
        return list(walk(json.load(f)))
