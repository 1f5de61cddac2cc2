/**
 * The script of report.html (inlined, no libraries): reads the embedded JSON (#report-data) and draws the
 * summary, the flame graph (SVG: click to zoom, hover for details), one timeline canvas per thread (wheel to
 * zoom, drag to pan, double-click to reset, hover for details), the coverage bars and the file links. Everything
 * is drawn synchronously on load so headless browsers see the finished page.
 */
export const REPORT_JS = String.raw`
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('report-data').textContent);
  var tip = document.getElementById('tip');
  var SVGNS = 'http://www.w3.org/2000/svg';

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(n) {
    if (n >= 1e9) return (n / 1e9).toFixed(2) + ' G';
    if (n >= 1e6) return (n / 1e6).toFixed(2) + ' M';
    if (n >= 1e4) return (n / 1e3).toFixed(1) + ' k';
    return String(Math.round(n * 100) / 100);
  }
  function fmtTime(v) {
    if (D.timeline.unit !== 'ns') return fmt(v) + ' events';
    if (v >= 1e9) return (v / 1e9).toFixed(3) + ' s';
    if (v >= 1e6) return (v / 1e6).toFixed(3) + ' ms';
    if (v >= 1e3) return (v / 1e3).toFixed(2) + ' µs';
    return Math.round(v) + ' ns';
  }
  function pct(x, of) { return of > 0 ? (100 * x / of).toFixed(1) + '%' : '-'; }
  function hash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  function colorOf(name) {
    if (name.indexOf('gap: ') === 0) return '#d62839';
    if (name.charAt(0) === '[') return '#b9bfca';
    var cls = name.lastIndexOf('.') > 0 ? name.slice(0, name.lastIndexOf('.')) : name;
    var h = hash(cls), m = hash(name);
    var jdk = /^(java|javax|jdk|sun|com\.sun)\./.test(name);
    var hue = jdk ? 190 + (h % 40) : 8 + (h % 42);
    var sat = jdk ? 45 + (m % 20) : 70 + (m % 25);
    var light = 55 + (m % 14);
    return 'hsl(' + hue + ',' + sat + '%,' + light + '%)';
  }
  function showTip(ev, html) {
    tip.innerHTML = html;
    tip.style.display = 'block';
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = ev.clientX - tip.offsetWidth - 8;
    if (y + tip.offsetHeight > window.innerHeight) y = ev.clientY - tip.offsetHeight - 8;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.style.display = 'none'; }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]; }); }

  // ---- summary ----
  function summary() {
    var S = D.summary, box = document.getElementById('cards');
    var cards = [
      ['threads', S.threadsWithEvents + ' / ' + S.threads.length],
      ['bytecodes', fmt(S.bytecodes)],
      ['events', fmt(S.events)],
      ['frames', fmt(S.frames)],
      ['gaps', fmt(S.gaps)],
      ['lost time', S.lostNs === null ? 'n/a' : fmtTimeNs(S.lostNs)],
      ['traced time', S.durationNs === null ? 'n/a' : fmtTimeNs(S.durationNs)],
      ['methods', fmt(S.methods)]
    ];
    cards.forEach(function (c) {
      var d = el('div', { 'class': 'card' });
      d.appendChild(el('div', { 'class': 'v' }, c[1]));
      d.appendChild(el('div', { 'class': 'k' }, c[0]));
      box.appendChild(d);
    });
    var o = S.origins, tot = o[0] + o[1] + o[2];
    var bar = document.getElementById('origin-bar');
    var cols = ['#3a8f5c', '#e0a526', '#8e5bd6'], names = ['observed', 'inferred', 'recovered'];
    var legend = document.getElementById('origin-legend');
    for (var i = 0; i < 3; i++) {
      var sp = el('span');
      sp.style.width = (tot ? 100 * o[i] / tot : 0) + '%';
      sp.style.background = cols[i];
      sp.title = names[i] + ': ' + o[i];
      bar.appendChild(sp);
      var l = el('span');
      var sw = el('i');
      sw.style.background = cols[i];
      l.appendChild(sw);
      l.appendChild(document.createTextNode(names[i] + ' ' + pct(o[i], tot) + ' (' + fmt(o[i]) + ')'));
      legend.appendChild(l);
    }
    var tb = document.getElementById('threads-table');
    S.threads.forEach(function (t) {
      if (!t.events) return;
      var tr = el('tr');
      tr.appendChild(el('td', null, t.name));
      tr.appendChild(el('td', { 'class': 'n' }, String(t.tid)));
      tr.appendChild(el('td', { 'class': 'n' }, fmt(t.bytecodes)));
      tr.appendChild(el('td', { 'class': 'n' }, fmt(t.gaps)));
      tr.appendChild(el('td', { 'class': 'n' }, t.lostNs === null ? 'n/a' : fmtTimeNs(t.lostNs)));
      tb.appendChild(tr);
    });
    var hb = document.getElementById('hot-table'), max = D.hot.length ? D.hot[0].self : 1;
    D.hot.forEach(function (h) {
      var tr = el('tr');
      tr.appendChild(el('td', { 'class': 'm' }, h.name));
      tr.appendChild(el('td', { 'class': 'n' }, fmt(h.self)));
      tr.appendChild(el('td', { 'class': 'n' }, pct(h.self, S.bytecodes)));
      var td = el('td');
      td.style.width = '30%';
      var b = el('div', { 'class': 'bar' }), s = el('span');
      s.style.width = (100 * h.self / max) + '%';
      s.style.background = colorOf(h.name);
      b.appendChild(s);
      td.appendChild(b);
      tr.appendChild(td);
      hb.appendChild(tr);
    });
  }
  function fmtTimeNs(v) {
    if (v >= 1e9) return (v / 1e9).toFixed(3) + ' s';
    if (v >= 1e6) return (v / 1e6).toFixed(3) + ' ms';
    if (v >= 1e3) return (v / 1e3).toFixed(2) + ' µs';
    return Math.round(v) + ' ns';
  }

  // ---- flame graph ----
  function flame() {
    var F = D.flame, n = F.parent.length;
    var svg = document.getElementById('flame');
    if (!n) { svg.parentNode.appendChild(el('p', null, 'No bytecodes.')); return; }
    var kids = [];
    for (var i = 0; i < n; i++) kids.push([]);
    var depth = new Int32Array(n), maxDepth = 0;
    for (var j = 1; j < n; j++) {
      kids[F.parent[j]].push(j);
      depth[j] = depth[F.parent[j]] + 1;
      if (depth[j] > maxDepth) maxDepth = depth[j];
    }
    var W = 1300, RH = 16, total = F.value[0];
    var H = (maxDepth + 1) * RH + 4;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('height', H);
    var zoomed = 0;
    function nameOf(i) { return F.names[F.name[i]]; }
    function draw(root) {
      zoomed = root;
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      var scale = W / F.value[root], drawn = 0;
      function rect(i, x, w, faded) {
        var y = H - (depth[i] + 1) * RH;
        var g = document.createElementNS(SVGNS, 'g');
        var r = document.createElementNS(SVGNS, 'rect');
        r.setAttribute('x', x.toFixed(2));
        r.setAttribute('y', y);
        r.setAttribute('width', Math.max(0.5, w - 0.6).toFixed(2));
        r.setAttribute('height', RH - 1);
        r.setAttribute('rx', 1.5);
        r.setAttribute('fill', i === 0 ? '#c9ced8' : colorOf(nameOf(i)));
        if (faded) r.setAttribute('opacity', '0.55');
        r.setAttribute('data-node', i);
        g.appendChild(r);
        var label = i === 0 ? 'all (' + fmt(total) + ' bytecodes)' : nameOf(i);
        var chars = Math.floor((w - 6) / 6.7);
        if (chars >= 3) {
          var t = document.createElementNS(SVGNS, 'text');
          t.setAttribute('x', (x + 3).toFixed(2));
          t.setAttribute('y', y + RH - 5);
          t.textContent = label.length > chars ? label.slice(0, chars - 1) + '…' : label;
          g.appendChild(t);
        }
        svg.appendChild(g);
        drawn++;
      }
      // ancestors of the zoomed node: full width
      for (var a = F.parent[root]; a >= 0; a = a === 0 ? -1 : F.parent[a]) rect(a, 0, W, true);
      var stack = [[root, 0]];
      while (stack.length) {
        var top = stack.pop(), i = top[0], x = top[1], w = F.value[i] * scale;
        if (w < 0.4) continue;
        rect(i, x, w, false);
        var cx = x;
        for (var k = 0; k < kids[i].length; k++) {
          var c = kids[i][k];
          stack.push([c, cx]);
          cx += F.value[c] * scale;
        }
      }
      svg.setAttribute('data-drawn', drawn);
      document.getElementById('flame-zoom').textContent = root === 0 ? '' : 'zoomed: ' + nameOf(root);
    }
    svg.addEventListener('click', function (ev) {
      var i = ev.target.getAttribute && ev.target.getAttribute('data-node');
      if (i === null || i === undefined) return;
      i = +i;
      draw(i === zoomed && i !== 0 ? F.parent[i] : i);
    });
    svg.addEventListener('mousemove', function (ev) {
      var i = ev.target.getAttribute && ev.target.getAttribute('data-node');
      if (i === null || i === undefined) { hideTip(); return; }
      i = +i;
      var path = [], a = i;
      while (a > 0) { path.push(nameOf(a)); a = F.parent[a]; }
      showTip(ev, '<b>' + esc(i === 0 ? 'all' : nameOf(i)) + '</b><br>' + fmt(F.value[i]) + ' bytecodes (' + pct(F.value[i], total) +
        '), self ' + fmt(F.self[i]) + '<br><span style="color:#aeb6c6">' + esc(path.slice(1, 6).join(' ← ')) + (path.length > 6 ? ' …' : '') + '</span>');
    });
    svg.addEventListener('mouseleave', hideTip);
    document.getElementById('flame-reset').addEventListener('click', function () { draw(0); });
    draw(0);
  }

  // ---- timeline ----
  function timeline() {
    var T = D.timeline, box = document.getElementById('timelines');
    var threads = T.threads.filter(function (t) { return t.start.length > 0; });
    if (!threads.length) { box.appendChild(el('p', null, 'No frames.')); return; }
    var tmin = Infinity, tmax = 0;
    threads.forEach(function (t) { if (t.start[0] < tmin) tmin = t.start[0]; if (t.endTime > tmax) tmax = t.endTime; });
    if (!(tmax > tmin)) tmax = tmin + 1;
    var view = { a: tmin, b: tmax };
    var RH = 11, MAXROWS = 40, W = 1300;
    var canvases = [];
    threads.forEach(function (t) {
      var rows = 0;
      for (var i = 0; i < t.depth.length; i++) if (t.depth[i] + 1 > rows) rows = t.depth[i] + 1;
      rows = Math.min(rows, MAXROWS);
      var div = el('div', { 'class': 'tl-thread' });
      div.appendChild(el('div', { 'class': 'name' }, t.name + ' (tid ' + t.tid + ') — ' + fmt(t.start.length) + ' slices' + (t.cut ? ', frames shorter than ' + fmtTime(T.minDuration) + ' not shown' : '')));
      var c = el('canvas', { 'class': 'timeline' });
      var h = 14 + rows * RH + 2;
      var dpr = window.devicePixelRatio || 1;
      c.width = W * dpr;
      c.height = h * dpr;
      c.style.height = h + 'px';
      div.appendChild(c);
      box.appendChild(div);
      canvases.push({ t: t, c: c, h: h, rows: rows, dpr: dpr });
    });
    function drawAll() {
      var drawnTotal = 0;
      canvases.forEach(function (o) { drawnTotal += drawOne(o); });
      document.getElementById('tl-range').textContent = fmtTime(view.a - tmin) + ' – ' + fmtTime(view.b - tmin) + ' (' + fmtTime(view.b - view.a) + ' shown)';
      box.setAttribute('data-drawn', drawnTotal);
    }
    function drawOne(o) {
      var t = o.t, g = o.c.getContext('2d');
      g.setTransform(o.dpr, 0, 0, o.dpr, 0, 0);
      g.clearRect(0, 0, W, o.h);
      var sx = W / (view.b - view.a), drawn = 0;
      // time axis ticks
      g.fillStyle = '#8a93a5';
      g.font = '10px system-ui, sans-serif';
      var span = view.b - view.a, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
      if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
      for (var v = Math.ceil((view.a - tmin) / step) * step; v + tmin <= view.b; v += step) {
        var px = (v + tmin - view.a) * sx;
        g.fillRect(px, 0, 1, 4);
        g.fillText(fmtTime(v), px + 2, 10);
      }
      for (var i = 0; i < t.start.length; i++) {
        var s = t.start[i], e = t.end[i];
        if (e < view.a || s > view.b) continue;
        var d = t.depth[i];
        if (d >= o.rows) continue;
        var x0 = (s - view.a) * sx, x1 = (e - view.a) * sx;
        var gap = t.gap[i] === 1;
        // gaps are always marked (at least 1 px); frames too narrow to see are skipped
        if (x1 - x0 < 0.5) { if (!gap && x1 - x0 < 0.15) continue; x1 = x0 + 0.5; }
        var name = gap ? T.gapNames[t.id[i]] : T.names[t.id[i]];
        if (gap) {
          g.fillStyle = 'rgba(214,40,57,0.18)';
          g.fillRect(x0, 14, Math.max(1, x1 - x0), o.h - 14);
          g.fillStyle = '#d62839';
          g.fillRect(x0, 14 + d * RH, Math.max(1, x1 - x0), RH - 1);
        } else {
          g.fillStyle = colorOf(name);
          g.fillRect(x0, 14 + d * RH, x1 - x0, RH - 1);
          if (x1 - x0 > 40) {
            g.fillStyle = '#1d2330';
            g.font = '9px ui-monospace, monospace';
            var chars = Math.floor((x1 - x0 - 4) / 5.5);
            g.fillText(name.length > chars ? name.slice(0, chars - 1) + '…' : name, Math.max(x0, 0) + 2, 14 + d * RH + 8);
          }
        }
        drawn++;
      }
      o.c.setAttribute('data-drawn', drawn);
      return drawn;
    }
    function at(o, ev) {
      var r = o.c.getBoundingClientRect();
      return { x: (ev.clientX - r.left) / r.width * W, y: ev.clientY - r.top };
    }
    var drag = null;
    canvases.forEach(function (o) {
      o.c.addEventListener('wheel', function (ev) {
        ev.preventDefault();
        var p = at(o, ev), tm = view.a + p.x / W * (view.b - view.a);
        var f = ev.deltaY > 0 ? 1.25 : 0.8, na = tm - (tm - view.a) * f, nb = tm + (view.b - tm) * f;
        if (nb - na < 10) return;
        view.a = Math.max(tmin, na);
        view.b = Math.min(tmax, nb);
        drawAll();
      }, { passive: false });
      o.c.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, a: view.a, b: view.b, o: o }; });
      o.c.addEventListener('dblclick', function () { view.a = tmin; view.b = tmax; drawAll(); });
      o.c.addEventListener('mousemove', function (ev) {
        if (drag) return;
        var p = at(o, ev), tm = view.a + p.x / W * (view.b - view.a), row = Math.floor((p.y - 14) / RH), t = o.t, best = -1;
        for (var i = 0; i < t.start.length; i++)
          if (t.depth[i] === row && t.start[i] <= tm && t.end[i] >= tm) { best = i; break; }
        if (best < 0) { hideTip(); return; }
        var gap = t.gap[best] === 1;
        showTip(ev, '<b>' + esc(gap ? T.gapNames[t.id[best]] : T.names[t.id[best]]) + '</b><br>' + fmtTime(t.end[best] - t.start[best]) +
          ' at ' + fmtTime(t.start[best] - tmin) + ', depth ' + t.depth[best]);
      });
      o.c.addEventListener('mouseleave', hideTip);
    });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) return;
      var dt = (ev.clientX - drag.x) / drag.o.c.getBoundingClientRect().width * (drag.b - drag.a);
      var w = drag.b - drag.a, na = Math.min(Math.max(tmin, drag.a - dt), tmax - w);
      view.a = na;
      view.b = na + w;
      drawAll();
    });
    window.addEventListener('mouseup', function () { drag = null; });
    document.getElementById('tl-reset').addEventListener('click', function () { view.a = tmin; view.b = tmax; drawAll(); });
    drawAll();
  }

  // ---- coverage ----
  function coverage() {
    var C = D.coverage, sec = document.getElementById('coverage-section');
    if (!C || !C.classes.length) { sec.parentNode.removeChild(sec); return; }
    var box = document.getElementById('coverage');
    var t = C.total;
    document.getElementById('coverage-total').textContent = fmt(t.linesCovered) + ' of ' + fmt(t.lines) + ' lines covered (' + pct(t.linesCovered, t.lines) + ')' +
      (t.linesRecoveredOnly ? ', ' + fmt(t.linesRecoveredOnly) + ' only through recovered events' : '') + (C.cut ? '; ' + C.cut + ' more classes not shown' : '');
    C.classes.forEach(function (c) {
      var row = el('div', { 'class': 'cov-row' });
      row.appendChild(el('div', { 'class': 'cn', title: c.name }, c.name));
      var bar = el('div', { 'class': 'bar' });
      var rec = c.linesRecoveredOnly || 0, obs = Math.max(0, c.linesCovered - rec);
      [[obs, '#3a8f5c', 'covered'], [rec, '#8e5bd6', 'covered only by recovered events']].forEach(function (p) {
        var s = el('span');
        s.style.width = (c.lines ? 100 * p[0] / c.lines : 0) + '%';
        s.style.background = p[1];
        s.title = p[2] + ': ' + p[0] + ' lines';
        bar.appendChild(s);
      });
      row.appendChild(bar);
      row.appendChild(el('div', { 'class': 'pc' }, c.linesCovered + '/' + c.lines + ' ' + pct(c.linesCovered, c.lines)));
      box.appendChild(row);
    });
    box.setAttribute('data-drawn', C.classes.length);
  }

  // ---- parts: files and summaries ----
  function parts() {
    var box = document.getElementById('parts');
    D.parts.forEach(function (p) {
      var d = el('div');
      d.appendChild(el('h3', null, p.name));
      var ul = el('ul', { 'class': 'files' });
      p.files.forEach(function (f) {
        var li = el('li');
        li.appendChild(el('a', { href: f }, f));
        ul.appendChild(li);
      });
      if (p.files.length) d.appendChild(ul);
      if (p.summary.length) {
        var tb = el('table');
        p.summary.forEach(function (kv) {
          var tr = el('tr');
          tr.appendChild(el('th', null, kv[0]));
          tr.appendChild(el('td', { 'class': 'n' }, typeof kv[1] === 'number' ? fmt(kv[1]) : String(kv[1])));
          tb.appendChild(tr);
        });
        d.appendChild(tb);
      }
      box.appendChild(d);
    });
    var pr = document.getElementById('problems');
    if (!D.problems.length) pr.parentNode.removeChild(pr);
    else D.problems.forEach(function (s) { pr.querySelector('ul').appendChild(el('li', null, s)); });
  }

  summary();
  flame();
  timeline();
  coverage();
  parts();
  document.body.setAttribute('data-rendered', '1');
})();
`;

/** Installed before everything else: shows script errors on the page (and lets tests see them in the DOM). */
export const ERROR_HOOK_JS = String.raw`
(function () {
  function show(msg) {
    var e = document.getElementById('errors');
    if (!e) { document.addEventListener('DOMContentLoaded', function () { show(msg); }); return; }
    e.style.display = 'block';
    e.setAttribute('data-errors', String((+e.getAttribute('data-errors') || 0) + 1));
    e.textContent += 'report error: ' + msg + '\n';
  }
  window.addEventListener('error', function (ev) { show(ev.message + ' (' + (ev.filename || '') + ':' + (ev.lineno || 0) + ')'); });
  window.addEventListener('unhandledrejection', function (ev) { show('unhandled rejection: ' + ev.reason); });
})();
`;
