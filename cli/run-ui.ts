/**
 * The run server's page at `/`: a static HTML file and one script (`/ui.js`) that need no
 * bundling. It polls `/api/v0/components` and `/metrics` every second and draws the component
 * graph (each component coloured by its health, an arrow for each reference, in the direction the
 * entries flow; as wide as its columns, its panel scrolling when it is wider), the chosen
 * component's arguments (secrets hidden by the server) and its metric series (a histogram as one
 * row: its count and sum), and streams its tap in either direction.
 */

export const UI_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Rivulet</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
  header { padding: 10px 16px; background: #1d2330; color: #fff; display: flex; gap: 16px; align-items: baseline; }
  header h1 { font-size: 18px; margin: 0; }
  main { display: grid; grid-template-columns: minmax(420px, 1fr) minmax(380px, 1fr); gap: 12px; padding: 12px; }
  main > section { min-width: 0; }
  #graph { display: block; }
  /* The graph scrolls on its own under its heading when it is wider than its panel. */
  #graph-view { overflow: auto; }
  section { background: #fff; border: 1px solid #d8dce3; border-radius: 6px; padding: 10px; overflow: auto; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  svg .node rect { fill: #eef6ee; stroke: #3c8c46; stroke-width: 1.5; cursor: pointer; }
  svg .node.unhealthy rect { fill: #fbecec; stroke: #c0392b; }
  svg .node.selected rect { stroke-width: 3; }
  svg .node text { font-size: 12px; pointer-events: none; }
  svg .edge { stroke: #6b7280; stroke-width: 1.5; fill: none; marker-end: url(#arrow); }
  table { border-collapse: collapse; width: 100%; }
  td { border-top: 1px solid #eceef2; padding: 2px 6px; font-family: ui-monospace, monospace; font-size: 12px; vertical-align: top; }
  td.value { text-align: right; }
  pre { background: #f3f4f6; padding: 6px; margin: 0; font-size: 12px; white-space: pre-wrap; word-break: break-all; }
  #tap { max-height: 320px; overflow: auto; }
  .health-unhealthy { color: #c0392b; }
  .health-healthy { color: #3c8c46; }
  button { font: inherit; }
</style>
</head>
<body data-ready="false">
<header><h1>Rivulet</h1><span id="summary"></span></header>
<main>
  <section>
    <h2>Components</h2>
    <div id="graph-view">
    <svg id="graph" xmlns="http://www.w3.org/2000/svg" width="100%" height="200">
      <defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#6b7280"/></marker></defs>
      <g id="edges"></g><g id="nodes"></g>
    </svg>
    </div>
  </section>
  <section id="details">
    <h2 id="selected">Choose a component</h2>
    <div id="health"></div>
    <h2>Counters</h2>
    <table id="counters"></table>
    <h2>Arguments</h2>
    <pre id="arguments"></pre>
    <h2>Tap <select id="tap-direction" title="in: what is sent to the component; out: what it forwards"><option value="">default</option><option value="in">in</option><option value="out">out</option></select> <button id="tap-toggle" disabled>Start</button> <span id="tap-status"></span></h2>
    <pre id="tap"></pre>
  </section>
</main>
<script src="/ui.js"></script>
</body>
</html>
`;

export const UI_JS = `'use strict';
(() => {
  const SVG = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);
  let components = [];
  let selected = null;
  let tap = null;
  const TAP_LINES = 200;

  function el(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** Columns by the longest path from a component nothing references to. */
  function layout(list) {
    const byId = new Map(list.map((c) => [c.id, c]));
    const depth = new Map();
    const visit = (c, trail) => {
      if (depth.has(c.id)) return depth.get(c.id);
      if (trail.has(c.id)) return 0;
      trail.add(c.id);
      let d = 0;
      for (const from of c.referencedBy) if (byId.has(from)) d = Math.max(d, visit(byId.get(from), trail) + 1);
      depth.set(c.id, d);
      return d;
    };
    list.forEach((c) => visit(c, new Set()));
    const columns = [];
    for (const c of list) (columns[depth.get(c.id)] ||= []).push(c);
    const pos = new Map();
    columns.forEach((col, x) => col.forEach((c, y) => pos.set(c.id, { x: 10 + x * 230, y: 10 + y * 60 })));
    return {
      pos,
      width: Math.max(1, columns.length) * 230,
      height: Math.max(1, ...columns.map((c) => (c ? c.length : 0))) * 60 + 20,
    };
  }

  function drawGraph() {
    const { pos, width, height } = layout(components);
    // As wide as its columns: a graph wider than its panel scrolls instead of being cut off.
    $('graph').setAttribute('width', String(width));
    $('graph').setAttribute('height', String(height));
    const edges = $('edges');
    const nodes = $('nodes');
    edges.replaceChildren();
    nodes.replaceChildren();
    for (const c of components) {
      for (const to of c.referencesTo) {
        const a = pos.get(c.id);
        const b = pos.get(to);
        if (!a || !b) continue;
        edges.append(el('path', { class: 'edge', 'data-from': c.id, 'data-to': to, d: 'M' + (a.x + 200) + ',' + (a.y + 20) + ' L' + b.x + ',' + (b.y + 20) }));
      }
      const p = pos.get(c.id);
      const g = el('g', { class: 'node ' + c.health.state + (c.id === selected ? ' selected' : ''), 'data-id': c.id, transform: 'translate(' + p.x + ',' + p.y + ')' });
      g.append(el('rect', { width: 200, height: 40, rx: 6 }));
      g.append(el('text', { x: 8, y: 17 }, c.id));
      g.append(el('text', { x: 8, y: 33, fill: '#6b7280' }, c.health.state));
      g.addEventListener('click', () => select(c.id));
      nodes.append(g);
    }
    const bad = components.filter((c) => c.health.state !== 'healthy').length;
    $('summary').textContent = components.length + ' components, ' + (bad === 0 ? 'all healthy' : bad + ' unhealthy');
  }

  function drawDetails() {
    const c = components.find((x) => x.id === selected);
    if (!c) return;
    $('selected').textContent = c.id + ' (' + c.name + ')';
    $('health').className = 'health-' + c.health.state;
    $('health').textContent = c.health.state + ': ' + c.health.message;
    $('arguments').textContent = JSON.stringify(c.arguments, null, 2);
  }

  const BACKSLASH = String.fromCharCode(92);

  /**
   * One sample line of the Prometheus text form: its name, its labels as [name, escaped value]
   * pairs in order, and its value; null for a line that is not one.
   */
  function parseSample(line) {
    const open = line.indexOf('{');
    const space = line.indexOf(' ');
    if (open < 0 || (space >= 0 && space < open)) {
      return space < 0 ? null : { name: line.slice(0, space), labels: [], value: line.slice(space + 1).trim() };
    }
    const labels = [];
    let i = open + 1;
    while (i < line.length && line[i] !== '}') {
      const eq = line.indexOf('=', i);
      if (eq < 0) return null;
      const name = line.slice(i, eq).trim();
      let j = eq + 2;
      let raw = '';
      while (j < line.length && line[j] !== '"') {
        if (line[j] === BACKSLASH) {
          raw += line[j] + line[j + 1];
          j += 2;
        } else raw += line[j++];
      }
      labels.push([name, raw]);
      i = j + 1;
      if (line[i] === ',') i++;
    }
    return { name: line.slice(0, open), labels, value: line.slice(i + 1).trim() };
  }

  function seriesName(name, labels) {
    return labels.length === 0 ? name : name + '{' + labels.map(([k, v]) => k + '="' + v + '"').join(',') + '}';
  }

  /**
   * Whether a series is the chosen component's. What a component registers names its id within
   * its module and the module's path (\`pipeline.default/logs.process.main\` is
   * \`logs.process.main\` at \`/pipeline.default\`; at \`/\` outside modules); what the runtime
   * counts for it (taps, entries in and out) names its full id alone.
   */
  function ofSelected(labels) {
    const id = labels.find(([k]) => k === 'component_id');
    const path = labels.find(([k]) => k === 'component_path');
    if (!id) return false;
    if (!path) return id[1] === selected;
    const slash = selected.lastIndexOf('/');
    const own = slash < 0 ? { id: selected, path: '/' } : { id: selected.slice(slash + 1), path: '/' + selected.slice(0, slash) };
    return id[1] === own.id && path[1] === own.path;
  }

  /**
   * The series of the chosen component in Prometheus text form, as name{labels} and value, its
   * component_id and component_path left out; a histogram's (or summary's) samples are one row: count and sum.
   */
  function drawCounters(text) {
    const table = $('counters');
    if (!selected) return;
    const types = new Map();
    const rows = new Map();
    for (const line of text.split('\\n')) {
      if (line.startsWith('# TYPE ')) {
        const [name, type] = line.slice(7).split(' ');
        types.set(name, type);
        continue;
      }
      if (line === '' || line.startsWith('#')) continue;
      const sample = parseSample(line);
      if (!sample || !ofSelected(sample.labels)) continue;
      const labels = sample.labels.filter(([k]) => k !== 'component_id' && k !== 'component_path');
      const part = /_(bucket|sum|count)$/.exec(sample.name);
      const family = part && sample.name.slice(0, -part[0].length);
      const type = family && types.get(family);
      if (type === 'histogram' || type === 'summary') {
        const series = seriesName(family, labels.filter(([k]) => k !== 'le' && k !== 'quantile'));
        if (!rows.has(series)) rows.set(series, { kind: type, count: '0', sum: '0' });
        const row = rows.get(series);
        if (part[1] === 'count') row.count = sample.value;
        if (part[1] === 'sum') row.sum = sample.value;
        continue;
      }
      rows.set(seriesName(sample.name, labels), { kind: 'counter', value: sample.value });
    }
    table.replaceChildren();
    for (const [series, row] of rows) {
      const tr = document.createElement('tr');
      const name = document.createElement('td');
      const v = document.createElement('td');
      name.textContent = series;
      v.textContent = row.kind === 'counter' ? row.value : 'count ' + row.count + ', sum ' + row.sum;
      v.className = 'value';
      tr.dataset.series = series;
      tr.dataset.kind = row.kind;
      tr.append(name, v);
      table.append(tr);
    }
  }

  function select(id) {
    if (selected === id) return;
    stopTap();
    selected = id;
    $('tap').textContent = '';
    $('tap-direction').value = '';
    $('tap-toggle').disabled = false;
    drawGraph();
    drawDetails();
    void poll();
  }

  function stopTap() {
    if (tap) tap.abort();
    tap = null;
    $('tap-toggle').textContent = 'Start';
    $('tap-status').textContent = '';
  }

  async function startTap() {
    const id = selected;
    const controller = new AbortController();
    tap = controller;
    $('tap-toggle').textContent = 'Stop';
    $('tap-status').textContent = 'waiting for entries…';
    const out = $('tap');
    try {
      const direction = $('tap-direction').value;
      const query = direction === '' ? '' : '?direction=' + direction;
      const res = await fetch('/api/v0/tap/' + encodeURIComponent(id) + query, { signal: controller.signal });
      if (!res.ok) {
        $('tap-status').textContent = (await res.text()).trim();
        return;
      }
      $('tap-status').textContent = 'streaming (' + res.headers.get('X-Tap-Direction') + ')';
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let rest = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rest += decoder.decode(value, { stream: true });
        const lines = rest.split('\\n');
        rest = lines.pop();
        const shown = out.textContent === '' ? [] : out.textContent.split('\\n');
        out.textContent = shown.concat(lines).slice(-TAP_LINES).join('\\n');
        out.scrollTop = out.scrollHeight;
      }
    } catch (err) {
      if (!controller.signal.aborted) $('tap-status').textContent = String(err);
    } finally {
      if (tap === controller) stopTap();
    }
  }

  $('tap-toggle').addEventListener('click', () => (tap ? stopTap() : void startTap()));
  // Another direction while streaming: the tap restarts on it.
  $('tap-direction').addEventListener('change', () => {
    if (!tap) return;
    stopTap();
    $('tap').textContent = '';
    void startTap();
  });

  async function poll() {
    try {
      const [list, metrics] = await Promise.all([
        fetch('/api/v0/components').then((r) => r.json()),
        fetch('/metrics').then((r) => r.text()),
      ]);
      components = list;
      drawGraph();
      drawDetails();
      drawCounters(metrics);
      document.body.dataset.ready = 'true';
    } catch {
      $('summary').textContent = 'the server does not answer';
    }
  }

  void poll();
  setInterval(poll, 1000);
})();
`;
