#!/usr/bin/env python3
"""explore_check.py - assertions of tests/sh/explore_*.sh.

  explore_check.py stats DUMP.txt STATS.csv STATS.json
      every API's calls and errors in `stats --csv --table api` equal those
      counted from `dump` of the same traces: a record with an EV prefix
      (api=, result=, dur_ns=) is a call, except OOM, XDEV and ASYNC_ERROR,
      which describe a call recorded on its own; LAUNCH_COUNT adds its
      count; a call with result != 0 is an error.  The JSON document has the
      same numbers, and each device's sites at the peak add up to at most
      its peak.
  explore_check.py colors PAGE.html
      the legend's colours are pairwise at least CIE76 dE 20 apart.
"""
import csv
import json
import re
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def stats(dump, stats_csv, stats_json):
    want = {}
    for line in open(dump, encoding="utf-8", errors="replace"):
        f = line.split()
        if not f or f[0].startswith("==>"):
            continue
        kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
        if f[0] == "LAUNCH_COUNT":
            c = want.setdefault(kv["api"], [0, 0])
            c[0] += int(kv["count"])
        elif "api" in kv and "result" in kv and "dur_ns" in kv:
            if f[0] in ("OOM", "XDEV", "ASYNC_ERROR"):
                continue
            c = want.setdefault(kv["api"], [0, 0])
            c[0] += 1
            c[1] += int(kv["result"]) != 0
    got = {}
    with open(stats_csv, newline="") as fh:
        for row in csv.DictReader(fh):
            got[row["API"]] = [int(row["Calls"]), int(row["Errors"])]
    if got != want:
        keys = sorted(set(got) | set(want))
        diff = ["%s: stats %s, dump %s" % (k, got.get(k), want.get(k)) for k in keys
                if got.get(k) != want.get(k)]
        fail("stats and dump disagree:\n  " + "\n  ".join(diff))
    with open(stats_json) as fh:
        doc = json.load(fh)
    if doc.get("schema") != "cuprobe-stats":
        fail("the JSON is not a cuprobe-stats document")
    js = {a["name"]: [a["calls"], a["errors"]] for a in doc["apis"]}
    if js != want:
        fail("stats --json and dump disagree: %s vs %s" % (js, want))
    for p in doc["processes"]:
        for d in p["devices"]:
            held = sum(s["bytes_at_peak"] for s in d.get("sites", {}).get("peak", []))
            if held > d["peak_bytes"]:
                fail("%s GPU %d: sites hold %d at the peak, more than the peak %d"
                     % (p["key"], d["ordinal"], held, d["peak_bytes"]))
    print("ok stats: %d APIs, %d calls match dump" % (len(want), sum(c[0] for c in want.values())))


def lab(hexcol):
    """sRGB hex to CIE L*a*b* (D65)."""
    rgb = [int(hexcol[i:i + 2], 16) / 255.0 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]) / 1.0
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883

    def g(t):
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116
    fx, fy, fz = g(x), g(y), g(z)
    return (116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))


def colors(page):
    src = open(page, encoding="utf-8").read()
    m = re.search(r'<div class="legend">(.*?)</div>', src, re.S)
    if not m:
        fail("no legend in the page")
    items = re.findall(r'<i style="background:(#[0-9a-fA-F]{6})"></i>([^<]*)', m.group(1))
    if len(items) < 6:
        fail("only %d legend colours" % len(items))
    worst = (1e9, None, None)
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            a, b = lab(items[i][0]), lab(items[j][0])
            de = sum((p - q) ** 2 for p, q in zip(a, b)) ** 0.5
            if de < worst[0]:
                worst = (de, items[i], items[j])
    if worst[0] < 20:
        fail("legend colours too close: %s (%s) and %s (%s), dE %.1f"
             % (worst[1][1], worst[1][0], worst[2][1], worst[2][0], worst[0]))
    print("ok colors: %d legend colours, closest pair %s / %s dE %.1f"
          % (len(items), worst[1][1], worst[2][1], worst[0]))


if __name__ == "__main__":
    if sys.argv[1] == "stats":
        stats(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "colors":
        colors(sys.argv[2])
    else:
        fail("unknown check " + sys.argv[1])
