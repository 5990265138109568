#!/usr/bin/env python3
"""pictures_check.py - assertions of tests/sh/pictures_*.sh.

  pictures_check.py perfetto EXPORT.json REPORT.json NTRACES [PAGE.html]
      the export parses; every process has one track (process_name) and
      there is one per trace, under its real pid; its threads are named
      (thread_name) with their real tids; events with a time are in time
      order within each process; the highest "GPU d held" counter of each
      process equals the report's peak_bytes for that device, and a "GPU d by
      holder" counter splits it; OOMs in the report appear as instants;
      every finding is an instant.  PAGE.html, the page of the same traces
      (one process): each finding the page times is an instant at that
      time (within 2 us), its range's end too, and they are not all at one
      time (the end of the run is not where every finding goes).
  pictures_check.py page PAGE.html DOM.html REPORT.json NCHARTS
      the page references nothing outside itself; after its script ran
      (DOM from chromium --dump-dom) the body is data-ready, the charts and
      their shapes exist, and every finding of the report is there with its
      check id, in order; every memory chart carries data-peak-bytes and
      data-ymax-bytes, its scale at most twice the peak, and shows the
      card's capacity (data-cap-bytes) as a line when its scale reaches
      it, else as a mark saying it is off the scale.
  pictures_check.py probe DOM.html [SAME.html]
      a page with tests/sh/pictures_probe.js run in it: it fits its window
      (each chart as wide as it is drawn, no sideways scrolling); every
      tick carries its unit (s, ms or µs; B to TiB; /s); hovering a site
      table's first row marks the row and draws that site's memory on its
      chart, its label as the title, up to what the row held at the peak
      (within a pixel) and no higher than the chart's peak, gone once the
      pointer leaves; a heading's first click sorts its column down, the
      second up; a drag from 30% to 60% of the first plot puts
      #t=FROM,TO in the address with that window, and every chart's time
      ticks fall inside it; a double-click returns to the whole run and
      clears the address; selecting a finding puts its id and its window
      in the address and highlights it.  SAME.html, the page opened at the
      address the drag left: its charts' ticks are those after the drag.
  pictures_check.py zoom DOM.html
      a page opened with a finding selected (#finding-N): the memory chart
      that highlights it has data-ymax-bytes <= 2 x data-peak-bytes, and the
      highlight spans at least 20% of the plot's width.
"""
import html
import json
import re
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def perfetto(export, report, ntraces, page_path=None):
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
    if page_path:
        src = open(page_path, encoding="utf-8").read()
        when = {"finding-" + i: (float(a), float(b)) for i, a, b in re.findall(
            r'<div class="finding \w+" id="finding-(\d+)" data-check="[\w-]+" '
            r'data-from="([\d.]+)" data-to="([\d.]+)"', src)}
        if len(when) < 2:
            fail("the page times %d findings; the check wants two or more" % len(when))
        for e in fi:
            w = when.get(e["args"]["id"])
            if not w:
                continue
            if abs(e["ts"] / 1e6 - w[0]) > 2e-6:
                fail("%s at %.6f s in the export, from %.6f s on the page"
                     % (e["args"]["id"], e["ts"] / 1e6, w[0]))
            end = e["args"].get("until_us", e["ts"]) / 1e6
            if w[1] > w[0] and abs(end - w[1]) > 2e-6:
                fail("%s ends at %.6f s in the export, %.6f s on the page"
                     % (e["args"]["id"], end, w[1]))
        if len({e["ts"] for e in fi}) < 2:
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
        cap = re.search(r'data-cap-bytes="(\d+)"', svg[:svg.index(">")])
        cap = int(cap.group(1)) if cap else 0
        line, off = '<line class="cap"' in svg, 'class="capoff"' in svg
        if cap and (line, off) != (ymax >= cap, ymax < cap):
            fail("capacity %d on a scale of %d: line %s, off-scale mark %s" % (cap, ymax, line, off))
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


def probe_of(dom_path):
    dom = open(dom_path, encoding="utf-8").read()
    m = re.search(r'data-probe="([^"]*)"', dom)
    if not m:
        fail("%s: the probe did not run to its end" % dom_path)
    return json.loads(html.unescape(m.group(1)))


UNIT_S = {"s": 1.0, "ms": 1e-3, "µs": 1e-6}


def xticks(chart):
    """The time ticks of a chart, in seconds."""
    out = []
    for anchor, txt in chart["ticks"]:
        if anchor != "middle":
            continue
        m = re.match(r"^(-?\d+(?:\.\d+)?) (s|ms|µs)$", txt)
        if not m:
            fail("%s: a time tick without its unit: %r" % (chart["id"], txt))
        out.append(float(m.group(1)) * UNIT_S[m.group(2)])
    return out


def probe(dom_path, same_path=None):
    p = probe_of(dom_path)
    charts = p["load"]["charts"]
    if not charts:
        fail("no charts")
    if p["scroll"] > p["inner"]:
        fail("the page is %d px wide in a %d px window" % (p["scroll"], p["inner"]))
    for c in charts:
        if abs(c["vbw"] - c["w"]) > 1 or c["w"] > p["inner"]:
            fail("%s: drawn %d px wide, laid out %.0f px in a %d px window"
                 % (c["id"], c["vbw"], c["w"], p["inner"]))
        yunit = r"(B|KiB|MiB|GiB|TiB)" if "mem" in c["kind"] else r"/s"
        for anchor, txt in c["ticks"]:
            if anchor == "end" and txt != "capacity" and \
                    not re.match(r"^\d+(?:\.\d+)? ?" + yunit + "$", txt):
                fail("%s: a scale tick without its unit: %r" % (c["id"], txt))
        if len(xticks(c)) < 2:
            fail("%s: fewer than two time ticks" % c["id"])
    if not p["hover"]:
        fail("no call-site table to hover")
    for h in p["hover"]:
        if not h["on"] or not h["d"]:
            fail("hovering %s drew nothing on %s" % (h["site"], h["chart"]))
        if h["title"] != h["site"]:
            fail("the highlight is titled %r, the row is %r" % (h["title"], h["site"]))
        y0, ht = h["frame"]
        ys = [float(v) for v in re.findall(r"[ML][\d.]+ ([\d.]+)", h["d"])]
        top = (y0 + ht - min(ys)) / ht * h["ymax"]
        px = h["ymax"] / ht
        if top < h["at_peak"] - px or top > h["peak"] + px:
            fail("%s: highlighted up to %d bytes; it held %d at the peak of %d"
                 % (h["site"], top, h["at_peak"], h["peak"]))
        if h["after"]:
            fail("%s: the highlight stays once the pointer left" % h["site"])
    for s in p["sort"]:
        if sorted(s["down"]) != sorted(s["before"]) or s["down"] != sorted(s["down"], reverse=True) \
                or s["up"] != sorted(s["up"]):
            fail("sorting by allocations: %s, then %s" % (s["down"], s["up"]))
    d = p["drag"]
    m = re.match(r"^#t=([\d.]+),([\d.]+)$", d["hash"])
    if not m:
        fail("after a drag the address is %r" % d["hash"])
    a, b = float(m.group(1)), float(m.group(2))
    t0 = p["start"]
    want = (t0 + 0.3 * (p["span"] - t0), t0 + 0.6 * (p["span"] - t0))
    tol = 0.01 * p["span"]
    if abs(a - want[0]) > tol or abs(b - want[1]) > tol:
        fail("dragged over %.6f..%.6f s, the window is %.6f..%.6f s" % (want + (a, b)))
    if d["win"] == p["load"]["win"]:
        fail("the window's line did not change: %r" % d["win"])
    for c in d["charts"]:
        t = xticks(c)
        if len(t) < 2 or min(t) < a - 1e-6 * p["span"] or max(t) > b + 1e-6 * p["span"]:
            fail("%s does not follow the window %.6f..%.6f s: ticks %s" % (c["id"], a, b, t))
    if p["whole"]["hash"] or p["whole"]["win"] != p["load"]["win"]:
        fail("a double-click left %r, %r" % (p["whole"]["hash"], p["whole"]["win"]))
    s = p.get("select")
    if s:
        if not re.match(r"^#%s&t=[\d.]+,[\d.]+$" % s["id"], s["hash"]) and s["hash"] != "#" + s["id"]:
            fail("selecting %s left the address %r" % (s["id"], s["hash"]))
        if s["id"] not in s["hl"]:
            fail("selecting %s highlights %s" % (s["id"], s["hl"]))
    if same_path:
        q = probe_of(same_path)
        got = [xticks(c) for c in q["load"]["charts"]]
        if got != [xticks(c) for c in d["charts"]]:
            fail("the address %s opens another view: %s" % (d["hash"], got))
        if q["load"]["win"] != d["win"]:
            fail("the address %s says %r, the drag %r" % (d["hash"], q["load"]["win"], d["win"]))
    print("ok probe: %d charts fit %d px; %d highlights, %d sorts; window %s, kept by the address%s"
          % (len(charts), p["inner"], len(p["hover"]), len(p["sort"]), d["hash"],
             ", which opens the same view" if same_path else ""))


if __name__ == "__main__":
    if sys.argv[1] == "probe":
        probe(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    elif sys.argv[1] == "zoom":
        zoom(sys.argv[2])
    elif sys.argv[1] == "perfetto":
        perfetto(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else None)
    else:
        page(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
