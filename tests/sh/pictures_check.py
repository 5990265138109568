#!/usr/bin/env python3
"""pictures_check.py - assertions of tests/sh/pictures_*.sh.

  pictures_check.py perfetto EXPORT.json REPORT.json NTRACES [TIMES]
      the export parses; every process has one track (process_name) and
      there is one per trace, under its real pid; its threads are named
      (thread_name) with their real tids; events with a time are in time
      order within each process; the highest "GPU d held" counter of each
      process equals the report's peak_bytes for that device, and a "GPU d by
      holder" counter splits it; OOMs in the report appear as instants;
      every finding is an instant, and findings are not all at one time
      when the report has findings of several times (the end of the run is
      not where every finding goes).
  pictures_check.py page PAGE.html DOM.html REPORT.json NCHARTS
      the page references nothing outside itself; after its script ran
      (DOM from chromium --dump-dom) the body is data-ready, the charts and
      their shapes exist, and every finding of the report is there with its
      check id, in order; every memory chart carries data-peak-bytes and
      data-ymax-bytes, its scale at most twice the peak.
  pictures_check.py zoom DOM.html
      a page opened with a finding selected (#finding-N): the memory chart
      that highlights it has data-ymax-bytes <= 2 x data-peak-bytes, and the
      highlight spans at least 20% of the plot's width.
"""
import json
import re
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def perfetto(export, report, ntraces, expect_times=False):
    with open(export) as f:
        doc = json.load(f)
    with open(report) as f:
        rep = json.load(f)
    ev = doc["traceEvents"]
    names = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            if e["pid"] in names:
                fail("two process_name events for pid %d" % e["pid"])
            names[e["pid"]] = e["args"]["name"]
    if len(names) != ntraces:
        fail("%d process tracks for %d traces: %s" % (len(names), ntraces, names))
    pids = {e["pid"] for e in ev if "pid" in e}
    if pids != set(names):
        fail("events on pids without a track: %s" % (pids - set(names)))
    last = {}
    for i, e in enumerate(ev):
        if "ts" not in e:
            continue
        if e["ts"] < last.get(e["pid"], -1):
            fail("event %d (%s) at %s before %s" % (i, e.get("name"), e["ts"], last[e["pid"]]))
        last[e["pid"]] = e["ts"]
    order = {e["args"]["sort_index"]: e["pid"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "process_sort_index"}
    threads = {}
    for e in ev:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            threads.setdefault(e["pid"], {})[e["tid"]] = e["args"]["name"]
    procs = rep["processes"]
    checked = 0
    for idx, p in enumerate(procs):
        pid = order[idx + 1]
        if pid != p["pid"] and pid < 4194304:
            fail("process %d exported as pid %d, its pid is %d" % (idx, pid, p["pid"]))
        if p.get("records", 1) and pid not in threads:
            fail("no thread_name for process %d (pid %d)" % (idx, pid))
        tids = {e["tid"] for e in ev if e.get("pid") == pid and e.get("ph") == "X"}
        if tids - set(threads.get(pid, {})):
            fail("slices on unnamed threads %s of pid %d" % (tids - set(threads[pid]), pid))
        for m in p.get("memory", []):
            name = "GPU %d held" % m["ordinal"]
            vals = [e["args"]["bytes"] for e in ev
                    if e.get("ph") == "C" and e["pid"] == pid and e["name"] == name]
            if m["peak_bytes"] == 0 and not vals:
                continue
            if not vals:
                fail("no '%s' counter for process %d" % (name, idx))
            if max(vals) != m["peak_bytes"]:
                fail("process %d %s: highest counter %d, report peak_bytes %d"
                     % (idx, name, max(vals), m["peak_bytes"]))
            split = [e["args"] for e in ev if e.get("ph") == "C" and e["pid"] == pid
                     and e["name"] == "GPU %d by holder" % m["ordinal"]]
            if not split:
                fail("no 'GPU %d by holder' counter for process %d" % (m["ordinal"], idx))
            if max(sum(a.values()) for a in split) > m["peak_bytes"]:
                fail("process %d: holders add up to more than the peak" % idx)
            checked += 1
    ooms = [f for f in rep["findings"] if f["check"] == "oom"]
    inst = [e for e in ev if e.get("ph") == "i"]
    if ooms and not any(e.get("cat") == "oom" for e in inst):
        fail("the report has OOM findings but the export no OOM instant")
    fi = [e for e in inst if e.get("cat") == "finding"]
    nf = len(fi)
    if nf != len(rep["findings"]):
        fail("%d finding instants for %d findings" % (nf, len(rep["findings"])))
    for e in fi:
        if "until_us" in e["args"] and e["args"]["until_us"] < e["ts"]:
            fail("finding %s ends before it starts" % e["args"]["id"])
    if expect_times and len({e["ts"] for e in fi}) < 2:
        fail("every finding at one time: %s" % [(e["name"], e["ts"]) for e in fi])
    print("ok perfetto: %d events, %d tracks, %d peak counters match, %d findings"
          % (len(ev), len(names), checked, nf))


def page(path, dom_path, report, ncharts):
    src = open(path, encoding="utf-8").read()
    dom = open(dom_path, encoding="utf-8").read()
    with open(report) as f:
        rep = json.load(f)
    # Nothing outside the page: no attribute that loads or links anything,
    # no CSS url() or @import, no scheme anywhere in markup.
    for pat in (r'\b(src|href|xlink:href|action|poster|srcset|background)\s*=',
                r'url\s*\(', r'@import', r'<(link|iframe|object|embed|img|base)\b',
                r'\b(https?|ftp|file|data):', r'fetch\s*\(', r'XMLHttpRequest', r'import\s*\('):
        m = re.search(pat, src, re.I)
        if m:
            fail("the page references something outside itself: %r near %r"
                 % (m.group(0), src[max(0, m.start() - 60):m.end() + 60]))
    if 'data-ready="1"' not in dom:
        fail("the page's script did not run to its end (no data-ready on body)")
    charts = re.findall(r'<svg class="chart (mem|copies)"', dom)
    if len(charts) != ncharts:
        fail("%d charts in the DOM, expected %d" % (len(charts), ncharts))
    for svg in mem_charts(dom):
        if not re.search(r'<path class="area"', svg) or not re.search(r'<path class="peak"', svg):
            fail("a memory chart without its stacked areas or peak line: %s" % svg[:200])
        peak, ymax = scale(svg)
        if ymax > 2 * max(peak, 1):
            fail("a memory chart's scale %d is over twice its peak %d" % (ymax, peak))
    found = re.findall(r'<div class="finding (\w+)" id="finding-(\d+)" data-check="([\w-]+)"', dom)
    want = [(f["severity"], f["check"]) for f in rep["findings"]]
    got = [(sev, chk) for sev, i, chk in found]
    if [int(i) for _, i, _ in found] != list(range(len(found))):
        fail("finding ids out of order: %s" % [i for _, i, _ in found])
    if got != want:
        fail("findings in the page %s, in the report %s" % (got, want))
    for f in rep["findings"]:
        t = re.sub(r'\s+', ' ', f["title"]).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if t[:60] not in dom:
            fail("finding title missing from the page: %s" % t)
    print("ok page: %d charts, %d area paths, %d findings, %d bytes, nothing external"
          % (len(charts), dom.count('class="area"'), len(found), len(src)))


def mem_charts(dom):
    """The markup of each memory chart, up to the next chart (or the end)."""
    out = []
    for m in re.finditer(r'<svg class="chart mem"', dom):
        nxt = dom.find('<svg class="chart', m.start() + 1)
        out.append(dom[m.start():nxt if nxt > 0 else len(dom)])
    return out


def scale(svg):
    head = svg[:svg.index(">")]
    p = re.search(r'data-peak-bytes="(\d+)"', head)
    y = re.search(r'data-ymax-bytes="(\d+)"', head)
    if not p or not y:
        fail("a memory chart without data-peak-bytes or data-ymax-bytes: %s" % head)
    return int(p.group(1)), int(y.group(1))


def zoom(dom_path):
    dom = open(dom_path, encoding="utf-8").read()
    if 'data-ready="1"' not in dom:
        fail("the page's script did not run to its end")
    hit = 0
    for svg in mem_charts(dom):
        hl = re.search(r'<rect class="hl on"[^>]* x="([\d.]+)"[^>]* width="([\d.]+)"', svg)
        if not hl:
            continue
        fr = re.search(r'<rect class="frame" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)
        peak, ymax = scale(svg)
        if ymax > 2 * peak:
            fail("selected: data-ymax-bytes %d over twice data-peak-bytes %d" % (ymax, peak))
        share = float(hl.group(2)) / float(fr.group(2))
        if share < 0.2:
            fail("selected: the finding's range is %.1f%% of the chart's width" % (100 * share))
        print("ok zoom: scale %d bytes for a peak of %d, the finding spans %.0f%% of the width"
              % (ymax, peak, 100 * share))
        hit += 1
    if not hit:
        fail("no memory chart highlights the selected finding")


if __name__ == "__main__":
    if sys.argv[1] == "zoom":
        zoom(sys.argv[2])
    elif sys.argv[1] == "perfetto":
        perfetto(sys.argv[2], sys.argv[3], int(sys.argv[4]), len(sys.argv) > 5)
    else:
        page(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
