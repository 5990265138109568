// pictures_probe.js - what a user does on the HTML page, done by script in a
// copy of the page (tests/sh/pictures_explore.sh appends it after the page's
// own script) and written to <body data-probe="JSON"> for --dump-dom, where
// tests/sh/pictures_check.py probe reads it: the charts' widths and tick
// labels as loaded; hovering the first row of each call-site table (the
// highlight on its chart) and leaving it; sorting a table by a count twice;
// dragging across the first chart from 30% to 60% of its plot (the address
// and every chart's ticks after); a double-click (the whole run again); and
// selecting the first finding that has a time.
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('cp-data').textContent);
  var out = { inner: innerWidth, scroll: document.documentElement.scrollWidth, span: D.span,
              start: D.start || 0 };
  function each(sel, fn) { return Array.prototype.map.call(document.querySelectorAll(sel), fn); }
  function charts() {
    return each('svg.chart', function (s) {
      return { id: s.id, kind: s.getAttribute('class'), vbw: +s.getAttribute('viewBox').split(' ')[2],
               w: s.getBoundingClientRect().width,
               ticks: Array.prototype.map.call(s.querySelectorAll('text.ax'), function (t) {
                 return [t.getAttribute('text-anchor'), t.textContent];
               }) };
    });
  }
  function view() {
    return { hash: location.hash, win: document.getElementById('win').textContent, charts: charts() };
  }
  out.load = view();
  out.hover = each('.sites-table', function (tb) {
    var svg = document.getElementById('chart-' + tb.getAttribute('data-chart'));
    var tr = tb.tBodies[0].rows[0];
    tr.dispatchEvent(new MouseEvent('mouseenter'));
    var hl = svg.querySelector('path.sitehl'), fr = svg.querySelector('rect.frame');
    var r = { chart: svg.id, site: tr.cells[0].textContent, on: tr.classList.contains('on'),
              at_peak: +tr.cells[1].getAttribute('data-v'), d: hl && hl.getAttribute('d'),
              title: hl && hl.textContent, ymax: +svg.getAttribute('data-ymax-bytes'),
              peak: +svg.getAttribute('data-peak-bytes'),
              frame: [+fr.getAttribute('y'), +fr.getAttribute('height')] };
    tr.dispatchEvent(new MouseEvent('mouseleave'));
    r.after = !!svg.querySelector('path.sitehl') || tr.classList.contains('on');
    return r;
  });
  out.sort = each('.sites-table', function (tb) {
    var th = tb.tHead.rows[0].cells[2];
    function col() {
      return Array.prototype.map.call(tb.tBodies[0].rows, function (r) {
        return +r.cells[2].getAttribute('data-v');
      });
    }
    var before = col();
    th.click();
    var down = col();
    th.click();
    return { before: before, down: down, up: col() };
  });
  var svg = document.querySelector('svg.chart');
  if (svg) {
    var box = svg.getBoundingClientRect(), fr = svg.querySelector('rect.frame');
    var W = +svg.getAttribute('viewBox').split(' ')[2], x0 = +fr.getAttribute('x');
    var fw = +fr.getAttribute('width'), y = box.top + box.height / 2;
    var cx = function (f) { return box.left + (x0 + f * fw) * box.width / W; };
    svg.dispatchEvent(new MouseEvent('mousedown', { button: 0, clientX: cx(0.3), clientY: y, bubbles: true }));
    svg.dispatchEvent(new MouseEvent('mousemove', { clientX: cx(0.6), clientY: y, bubbles: true }));
    window.dispatchEvent(new MouseEvent('mouseup', { clientX: cx(0.6), clientY: y, bubbles: true }));
    out.drag = view();
    document.querySelector('svg.chart').dispatchEvent(new MouseEvent('dblclick', { bubbles: true }));
    out.whole = view();
  }
  var f = document.querySelector('.finding[data-from]');
  if (f) {
    f.click();
    out.select = view();
    out.select.id = f.id;
    out.select.hl = each('rect.hl.on', function (r) { return r.getAttribute('data-for'); });
  }
  document.body.setAttribute('data-probe', JSON.stringify(out));
})();
