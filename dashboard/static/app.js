// The dashboard page: reads the stream of snapshots at ./events (format
// version 2, see the Go package's documentation) and keeps one tile per
// guard name and one row per pipeline up to date. DOM nodes are made once
// per name and reused: an update only writes the text that changed, moves
// only the tiles whose place changed, and draws the sparklines of the
// tiles on screen.
'use strict';

(() => {
  const VERSION = 2;
  const ROWS = 3;          // guard rows a tile shows; the others are in the last row's title
  const HISTORY = 120;       // points of a sparkline: 2 minutes, one a second
  const STALE_MS = 5000;     // no event for this long: reconnect
  const tilesEl = document.getElementById('tiles');
  const pipesBody = document.querySelector('#pipelines tbody');
  const pipesSection = document.getElementById('pipelines-section');
  const statusEl = document.getElementById('status');
  const summaryEl = document.getElementById('summary');
  const updatedEl = document.getElementById('updated');
  const emptyEl = document.getElementById('empty');
  const filterEl = document.getElementById('filter');

  const tiles = new Map();   // name -> tile
  const pipes = new Map();   // name -> row
  let order = [];            // tile names in display order
  let gen = 0;               // the apply that last saw a tile
  let filter = '';
  let described = {};        // kind -> value name -> {unit, type, help}: the snapshots' "values"

  // What the page did, for tests and for the curious (window.dashboard.stats).
  const stats = {
    connects: 0,      // streams opened
    snapshots: 0,     // "snapshot" events (one per stream)
    updates: 0,       // "update" events
    lastSeq: 0,       // the seq of the last snapshot applied
    tiles: 0,         // tiles on the page
    lastApplyMs: 0,   // time to apply the last snapshot (script only)
    maxApplyMs: 0,
    lastFrameMs: 0,   // time from the start of the last apply to the next frame (layout and paint included)
    fullApplyMs: 0,   // the last "snapshot" event's apply time
    updateApplyMs: 0, // the last "update" event's apply time
    parseMs: 0,       // time to parse the last event's JSON
    recent: [],       // the last 10 events' [parse, apply, next frame] times, ms
  };

  const visible = new Set();
  const io = 'IntersectionObserver' in window ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      const t = e.target.tile;
      if (!t) continue;
      if (e.isIntersecting) {
        visible.add(t);
        if (t.sparkDirty) drawSpark(t);
      } else {
        visible.delete(t);
      }
    }
  }, { rootMargin: '300px' }) : null;

  function el(tag, cls, parent, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    if (parent) parent.appendChild(n);
    return n;
  }

  const SVG = 'http://www.w3.org/2000/svg';

  // The prototype of a tile, cloned for each name: one clone is much
  // cheaper than the two dozen elements it holds made one by one.
  const proto = (() => {
    const root = el('div', 'tile');
    const head = el('div', 'head', root);
    el('span', 'name', head, '');
    el('span', 'badge', head, '');
    const nums = el('div', 'nums', root);
    for (const [cls, label] of [['calls', 'calls/s'], ['err', 'errors'], ['ref', 'refused/s']]) {
      const c = el('div', '', nums);
      el('b', cls, c, '–');
      el('small', '', c, label);
    }
    const lat = el('div', 'row lat', root);
    for (const q of ['p50', 'p90', 'p99']) {
      el('small', '', lat, (q === 'p50' ? '' : ' · ') + q + ' ');
      el('b', q, lat, '–');
    }
    el('small', '', lat, ' ms');
    for (let i = 0; i < ROWS; i++) {
      el('div', 'row guard', root).hidden = true;
      el('div', 'row timers', root).hidden = true; // a guard's running durations, out of a closed state
      el('div', 'row keys', root).hidden = true; // a keyed guard's top keys
    }
    const box = el('div', 'sparkbox', root);
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('viewBox', `0 0 ${HISTORY - 1} 32`);
    svg.setAttribute('preserveAspectRatio', 'none');
    for (const cls of ['calls', 'errors']) {
      const p = document.createElementNS(SVG, 'path');
      p.setAttribute('class', cls);
      svg.appendChild(p);
    }
    box.appendChild(svg);
    el('span', 'scale', box, ''); // the sparkline's scale: the value at its top
    return root;
  })();

  function makeTile(name) {
    const root = proto.cloneNode(true);
    root.dataset.name = name;
    root.dataset.state = 'none';
    const q = (sel) => root.querySelector(sel);
    const nameEl = q('.name');
    nameEl.textContent = name;
    nameEl.title = name;
    const t = {
      name, root, badge: q('.badge'), calls: q('b.calls'), err: q('b.err'), ref: q('b.ref'),
      p50: q('b.p50'), p90: q('b.p90'), p99: q('b.p99'), grows: [...root.querySelectorAll('.row.guard')],
      trows: [...root.querySelectorAll('.row.timers')], krows: [...root.querySelectorAll('.row.keys')], scale: q('.scale'),
      pc: q('path.calls'), pe: q('path.errors'),
      state: '', hCalls: [], hErrors: [], sparkDirty: true, gen: 0, rows: 0,
    };
    root.tile = t;
    root.hidden = !matches(name);
    if (io) io.observe(root);
    return t;
  }

  // set writes text to node only if it changed.
  function set(node, text) {
    if (node._shown !== text) {
      node._shown = text;
      node.textContent = text;
    }
  }

  // setv shows the value v in node as f formats it, formatting only a
  // value that changed.
  function setv(node, v, f) {
    if (node._value === v) return;
    node._value = v;
    set(node, f(v));
  }

  const dash = (f) => (v) => (v === null || v === undefined ? '–' : f(v));
  // A rate is null only without a source (no Measure layer, no Counter):
  // the first snapshot has rates already.
  const fmtRate = (v) => (v === null || v === undefined ? 'n/a' : num(v));
  const fmtPct = dash((v) => num(v) + '%');
  const fmtMs = dash(ms);

  function num(v, digits) {
    if (v === null || v === undefined) return '–';
    if (digits === undefined) digits = v >= 100 ? 0 : 1;
    return v.toFixed(digits).replace(/\.0+$/, '');
  }

  function ms(v) {
    if (v === null || v === undefined) return '–';
    if (v >= 100) return v.toFixed(0);
    if (v >= 10) return v.toFixed(1).replace(/\.0$/, '');
    return String(+v.toPrecision(2));
  }

  function stateOf(g) {
    if (!g.state) return 'none';
    return g.forced ? 'forced-' + g.state : g.state;
  }

  function badgeOf(g, state) {
    if (state !== 'none') return state.replace('-', ' ');
    const kinds = [...new Set(g.guards.map((x) => x.kind))];
    return kinds.length ? kinds.join(' · ') : 'measured';
  }

  // unitOf returns how a unit reads after a number: '' for a count
  // ("{call}"), '/s' for "{token}/s", 's' for seconds.
  function unitOf(unit) {
    const u = (unit || '').replace(/\{[^}]*\}/g, '');
    return u === '1' ? '' : u;
  }

  // secs formats a duration in seconds: 350 ms, 2.5 s, 12 s, 4m05s, 2h03m.
  function secs(v) {
    if (v < 1) return ms(v * 1000) + ' ms';
    if (v < 10) return v.toFixed(1).replace(/\.0$/, '') + ' s';
    if (v < 60) return Math.floor(v) + ' s';
    const two = (n) => String(Math.floor(n)).padStart(2, '0');
    if (v < 3600) return Math.floor(v / 60) + 'm' + two(v % 60) + 's';
    return Math.floor(v / 3600) + 'h' + two((v % 3600) / 60) + 'm';
  }

  function fmtValue(v, unit) {
    if (v === null || v === undefined) return '–';
    const u = unitOf(unit);
    if (u === 's') return secs(v);
    const a = Math.abs(v);
    const text = a >= 100 || Number.isInteger(v) ? v.toFixed(0) : String(+v.toPrecision(3));
    return text + (u && !u.startsWith('/') ? ' ' + u : u);
  }

  // guardRow is one guard as a row: its kind and its state as it gives
  // it (a breaker's "open", a fleet guard's own states), then its first
  // three other values, each as the guard describes it; all of them in
  // the title, with their help. Durations ("s") that are 0 are left out
  // of the row (timers not running: a closed breaker's open_for and
  // cooldown_left); a guard in a state other than closed shows those that
  // are not 0 on a line of their own, the second element (a breaker's
  // open for, cooldown left), else ''. The third is a keyed guard's top
  // keys (key, state, refusals), else ''.
  function guardRow(x) {
    const d = described[x.kind] || {};
    const parts = [x.kind + (x.state ? ' ' + x.state : '') + (x.keys ? ` (${x.keys.keys} keys)` : '')];
    const title = [x.kind + (x.state ? ' ' + x.state : '') + ': refused ' + x.refused];
    const timers = [];
    const timed = x.state && x.state !== 'closed';
    let shown = 0;
    for (const [name, v] of Object.entries(x.values || {})) {
      const desc = d[name] || {};
      const text = fmtValue(v, desc.unit);
      const label = name.replace(/_/g, ' ') + ' ' + text;
      if (unitOf(desc.unit) === 's' && (v === 0 || timed)) {
        if (v !== 0) timers.push(label);
      } else if (shown < 3) {
        parts.push(label);
        shown++;
      }
      title.push(`${name} ${text}${desc.help ? ' — ' + desc.help : ''}`);
    }
    let keys = '';
    if (x.keys && x.keys.top && x.keys.top.length) {
      keys = 'top keys: ' + x.keys.top.map((k) => `${k.key}${k.state ? ' ' + k.state : ''} ${k.refused} refused`).join(' · ');
      title.push(keys);
    }
    return [parts.join(' · '), title.join('\n'), timers.join(' · '), keys];
  }

  function updateTile(t, g, full) {
    const state = stateOf(g);
    if (state !== t.state) {
      t.state = state;
      t.root.dataset.state = state;
    }
    const kinds = state + ' ' + g.guards.map((x) => x.kind).join(' ');
    if (t.kinds !== kinds) { t.kinds = kinds; set(t.badge, badgeOf(g, state)); }
    setv(t.calls, g.callsPerSec, fmtRate);
    setv(t.err, g.errorPct, fmtPct);
    const bad = g.errorPct !== null && g.errorPct >= 10;
    if (t.bad !== bad) { t.bad = bad; t.err.classList.toggle('bad', bad); }
    setv(t.ref, g.refusalsPerSec, fmtRate);
    const l = g.latencyMs || {};
    setv(t.p50, l.p50, fmtMs);
    setv(t.p90, l.p90, fmtMs);
    setv(t.p99, l.p99, fmtMs);
    const rows = Math.min(g.guards.length, ROWS);
    let lines = rows;
    for (let i = 0; i < ROWS; i++) {
      const r = t.grows[i];
      const kr = t.krows[i];
      const tr = t.trows[i];
      let keys = '', timers = '';
      if (i < rows) {
        const [text, title, tm, k] = guardRow(g.guards[i]);
        keys = k;
        timers = tm;
        let more = '';
        if (i === ROWS - 1 && g.guards.length > ROWS) {
          more = '\n' + g.guards.slice(ROWS).map((x) => guardRow(x)[1]).join('\n');
        }
        set(r, text);
        if (r.title !== title + more) r.title = title + more;
        if (r.dataset.kind !== g.guards[i].kind) r.dataset.kind = g.guards[i].kind;
        const st = g.guards[i].state || '';
        if (r.dataset.state !== st) r.dataset.state = st;
      }
      if (r.hidden !== (i >= rows)) r.hidden = i >= rows;
      if (timers) { set(tr, timers); lines++; }
      if (tr.hidden !== !timers) tr.hidden = !timers;
      if (keys) { set(kr, keys); if (kr.title !== keys) kr.title = keys; lines++; }
      if (kr.hidden !== !keys) kr.hidden = !keys;
    }
    if (t.rows !== lines) { t.rows = lines; t.root.dataset.rows = lines; }

    if (full) {
      const h = g.history || {};
      t.hCalls = h.calls ? h.calls.slice(-HISTORY) : [];
      t.hErrors = h.errors ? h.errors.slice(-HISTORY) : [];
    } else if (g.refusalsPerSec !== null) { // null: no rates yet, so no point
      if (g.callsPerSec !== null) push(t.hCalls, g.callsPerSec);
      if (g.errorsPerSec !== null) push(t.hErrors, g.errorsPerSec);
    }
    t.sparkDirty = true;
    if (!io || visible.has(t)) drawSpark(t);
  }

  function push(a, v) {
    a.push(v);
    if (a.length > HISTORY) a.splice(0, a.length - HISTORY);
  }

  function path(a, top) {
    if (a.length === 0) return '';
    const x0 = HISTORY - a.length;
    let d = '';
    for (let i = 0; i < a.length; i++) {
      const y = 31 - (a[i] / top) * 29;
      d += (i ? 'L' : 'M') + (x0 + i) + ',' + y.toFixed(1);
    }
    return d;
  }

  function drawSpark(t) {
    t.sparkDirty = false;
    let top = 1;
    for (const v of t.hCalls) if (v > top) top = v;
    for (const v of t.hErrors) if (v > top) top = v;
    // The scale: the value at the sparkline's top (its bottom is 0).
    set(t.scale, t.hCalls.length || t.hErrors.length ? num(top) + '/s' : '');
    if (t.scale.title !== 'sparkline scale: 0 to ' + t.scale.textContent) t.scale.title = 'sparkline scale: 0 to ' + t.scale.textContent;
    const dc = path(t.hCalls, top);
    const de = path(t.hErrors, top);
    if (t.dc !== dc) { t.dc = dc; t.pc.setAttribute('d', dc); }
    if (t.de !== de) { t.de = de; t.pe.setAttribute('d', de); }
  }

  // reorder moves the tiles into the order of names, moving as few nodes
  // as it can: those outside a longest run already in order.
  function reorder(names) {
    const nodes = names.map((n) => tiles.get(n).root);
    const pos = new Map();
    const kids = tilesEl.children;
    for (let i = 0; i < kids.length; i++) pos.set(kids[i], i);
    const old = nodes.map((n) => (pos.has(n) ? pos.get(n) : -1));
    const keep = increasing(old);
    let next = null;
    for (let i = nodes.length - 1; i >= 0; i--) {
      if (!keep[i]) tilesEl.insertBefore(nodes[i], next);
      next = nodes[i];
    }
  }

  // increasing marks a longest strictly increasing subsequence of a
  // (ignoring -1s), in O(n log n).
  function increasing(a) {
    const tails = [];        // index in a of the smallest tail of each length
    const prev = new Array(a.length).fill(-1);
    for (let i = 0; i < a.length; i++) {
      if (a[i] < 0) continue;
      let lo = 0, hi = tails.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (a[tails[mid]] < a[i]) lo = mid + 1; else hi = mid;
      }
      if (lo > 0) prev[i] = tails[lo - 1];
      tails[lo] = i;
    }
    const keep = new Array(a.length).fill(false);
    for (let i = tails.length ? tails[tails.length - 1] : -1; i >= 0; i = prev[i]) keep[i] = true;
    return keep;
  }

  function updatePipes(list) {
    pipesSection.hidden = list.length === 0;
    const seen = new Set();
    let i = 0;
    for (const p of list) {
      seen.add(p.name);
      let r = pipes.get(p.name);
      if (!r) {
        const tr = document.createElement('tr');
        tr.dataset.name = p.name;
        r = { tr, name: el('td', '', tr, p.name), chain: el('td', 'chain', tr), retries: el('td', 'num', tr), fallbacks: el('td', 'num', tr) };
        pipes.set(p.name, r);
      }
      if (pipesBody.children[i] !== r.tr) pipesBody.insertBefore(r.tr, pipesBody.children[i] || null);
      set(r.chain, p.chain);
      setv(r.retries, p.retriesPerSec, fmtRate);
      setv(r.fallbacks, p.fallbacksPerSec, fmtRate);
      i++;
    }
    for (const [name, r] of pipes) {
      if (!seen.has(name)) { r.tr.remove(); pipes.delete(name); }
    }
  }

  // apply shows one snapshot (full: with history, from a "snapshot" event).
  function apply(snap, full) {
    const t0 = performance.now();
    if (snap.version !== VERSION) {
      setStatus('error', `snapshot format version ${snap.version}, this page reads ${VERSION}`);
      return;
    }
    gen++;
    described = snap.values || {};
    const guards = snap.guards;
    const names = new Array(guards.length);
    let moved = guards.length !== order.length;
    let open = 0, half = 0;
    for (let i = 0; i < guards.length; i++) {
      const g = guards[i];
      let t = tiles.get(g.name);
      if (!t) {
        t = makeTile(g.name);
        tiles.set(g.name, t);
        moved = true;
      }
      t.gen = gen;
      names[i] = g.name;
      if (!moved && order[i] !== g.name) moved = true;
      updateTile(t, g, full);
      if (g.state === 'open') open++;
      else if (g.state === 'half-open') half++;
    }
    if (tiles.size !== guards.length) {
      for (const [name, t] of tiles) {
        if (t.gen === gen) continue;
        if (io) io.unobserve(t.root);
        visible.delete(t);
        t.root.remove();
        tiles.delete(name);
      }
    }
    if (moved) {
      reorder(names);
      order = names;
    }
    updatePipes(snap.pipelines || []);
    emptyEl.hidden = guards.length > 0;
    summaryEl.textContent = '';
    summaryEl.append(`${guards.length} ${guards.length === 1 ? 'guard' : 'guards'} · `);
    el('span', open ? 'n-open' : '', summaryEl, `${open} open`);
    summaryEl.append(` · ${half} half-open`);
    updatedEl.textContent = 'snapshot ' + snap.seq + ' at ' + new Date(snap.time).toLocaleTimeString();

    stats.lastSeq = snap.seq;
    stats.tiles = tiles.size;
    const dt = performance.now() - t0;
    stats.lastApplyMs = dt;
    stats.maxApplyMs = Math.max(stats.maxApplyMs, dt);
    if (full) stats.fullApplyMs = dt; else stats.updateApplyMs = dt;
    const parse = stats.parseMs;
    requestAnimationFrame(() => {
      stats.lastFrameMs = performance.now() - t0;
      stats.recent.push([+parse.toFixed(1), +dt.toFixed(1), +stats.lastFrameMs.toFixed(1)]);
      if (stats.recent.length > 10) stats.recent.shift();
    });
  }

  function matches(name) {
    return filter === '' || name.toLowerCase().includes(filter);
  }

  filterEl.addEventListener('input', () => {
    filter = filterEl.value.trim().toLowerCase();
    for (const t of tiles.values()) {
      const hide = !matches(t.name);
      if (t.root.hidden !== hide) t.root.hidden = hide;
    }
  });

  function setStatus(s, text) {
    statusEl.dataset.status = s;
    statusEl.textContent = text || s;
  }

  // The stream. EventSource reconnects by itself after a dropped stream
  // (in the server's "retry:" time); if it gives up (CLOSED), or if no
  // event came for STALE_MS, the page opens a new one, backing off to 10 s.
  let es = null;
  let backoff = 1000;
  let lastEvent = 0;
  let retryTimer = 0;

  function connect() {
    clearTimeout(retryTimer);
    if (es) es.close();
    setStatus(stats.connects ? 'reconnecting' : 'connecting');
    es = new EventSource('events');
    es.addEventListener('open', () => { stats.connects++; lastEvent = Date.now(); });
    es.addEventListener('snapshot', (ev) => handle(ev, true));
    es.addEventListener('update', (ev) => handle(ev, false));
    es.addEventListener('error', () => {
      if (statusEl.dataset.status !== 'error') setStatus('reconnecting');
      if (es.readyState === EventSource.CLOSED) {
        retryTimer = setTimeout(connect, backoff);
        backoff = Math.min(backoff * 2, 10000);
      }
    });
  }

  function handle(ev, full) {
    lastEvent = Date.now();
    let snap;
    const t0 = performance.now();
    try {
      snap = JSON.parse(ev.data);
      stats.parseMs = performance.now() - t0;
    } catch (e) {
      setStatus('error', 'bad snapshot: ' + e.message);
      return;
    }
    if (full) stats.snapshots++; else stats.updates++;
    backoff = 1000;
    setStatus('live');
    apply(snap, full);
  }

  setInterval(() => {
    if (es && es.readyState === EventSource.OPEN && Date.now() - lastEvent > STALE_MS) {
      setStatus('stale');
      connect();
    }
  }, 1000);

  window.dashboard = { stats, apply };
  connect();
})();
