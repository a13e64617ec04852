// The Floodgate dashboard page. Plain JavaScript, no framework, no CDN: it draws what the
// server sends over server-sent events (`events`), and sends rule edits to `api/rules`.
// Every piece of data is rendered with textContent (never innerHTML): a resource or a rule
// named `<img src=x onerror=alert(1)>` shows as that text.
'use strict';

(function () {
  const state = {
    readOnly: true,
    editTarget: 'engine',
    now: 0,
    historySeconds: 300,
    series: new Map(), // name -> { points: [{t, pass, block, error, rtMs}], concurrency, card }
    hiddenResources: 0,
    rules: [],
    kinds: [],
    blocks: [],
    recentBlocks: 20,
    rejected: undefined,
    editorDirty: false,
  };

  const $ = (id) => document.getElementById(id);

  /** Makes an element; `text` goes through textContent. */
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function ago(at) {
    const seconds = Math.max(0, Math.round((state.now - at) / 1000));
    return seconds < 1 ? 'now' : `${seconds} s ago`;
  }

  function ruleText(rule) {
    const { resource, ...rest } = rule || {};
    return JSON.stringify(rest);
  }

  const SUMMARY_KEYS = [
    'strategy',
    'metric',
    'behavior',
    'threshold',
    'maxAllowedRtMs',
    'paramIndex',
    'paramKey',
    'limitOrigin',
    'origins',
    'retryTimeoutMs',
  ];

  /** The fields that tell a rule apart, for the breaker and block tables. */
  function ruleSummary(rule) {
    const parts = [];
    for (const key of SUMMARY_KEYS)
      if (rule && rule[key] !== undefined && rule[key] !== 'default')
        parts.push(`${key}: ${JSON.stringify(rule[key])}`);
    return parts.join(', ');
  }

  // ------------------------------------------------------------------ connection

  function connect() {
    const source = new EventSource('events');
    source.addEventListener('open', () => setConnection('live', 'live'));
    source.addEventListener('error', () => setConnection('down', 'reconnecting…'));
    source.addEventListener('editor', (event) => {
      const editor = JSON.parse(event.data);
      state.readOnly = editor.readOnly;
      state.editTarget = editor.editTarget;
      renderEditMode();
    });
    source.addEventListener('snapshot', (event) => {
      const snapshot = JSON.parse(event.data);
      state.now = snapshot.now;
      state.historySeconds = snapshot.historySeconds;
      for (const entry of state.series.values()) entry.card.remove();
      state.series.clear();
      mergeResources(snapshot.resources);
      state.hiddenResources = snapshot.hiddenResources;
      state.kinds = snapshot.kinds;
      state.blocks = snapshot.blocks;
      state.recentBlocks = snapshot.recentBlocks;
      setRules(snapshot.rules, snapshot.rejected);
      renderResources();
      renderBreakers(snapshot.breakers);
      renderBlocks();
    });
    source.addEventListener('tick', (event) => {
      const tick = JSON.parse(event.data);
      state.now = tick.now;
      mergeResources(tick.resources);
      state.hiddenResources = tick.hiddenResources;
      state.blocks = state.blocks.concat(tick.blocks).slice(-state.recentBlocks);
      renderResources();
      renderBreakers(tick.breakers);
      renderBlocks();
    });
    source.addEventListener('rules', (event) => {
      const update = JSON.parse(event.data);
      setRules(update.rules, update.rejected);
    });
  }

  function setConnection(kind, text) {
    const badge = $('connection');
    badge.className = `badge ${kind}`;
    badge.textContent = text;
  }

  // ------------------------------------------------------------------ resources

  function mergeResources(resources) {
    const oldest = state.now - state.historySeconds * 1000;
    for (const resource of resources) {
      let entry = state.series.get(resource.name);
      if (entry === undefined) {
        entry = { points: [], concurrency: 0, card: makeCard(resource.name) };
        state.series.set(resource.name, entry);
        $('resources').appendChild(entry.card);
      }
      entry.concurrency = resource.concurrency;
      for (const point of resource.points) entry.points.push(point);
      while (entry.points.length > 0 && entry.points[0].t < oldest) entry.points.shift();
    }
  }

  function makeCard(name) {
    const card = el('div', 'card');
    card.dataset.resource = name;
    card.appendChild(el('div', 'name', name));
    const figures = el('div', 'figures');
    for (const [key, label] of [
      ['pass', 'pass/s'],
      ['block', 'block/s'],
      ['error', 'error/s'],
      ['rtMs', 'RT ms'],
      ['concurrency', 'in flight'],
    ]) {
      const figure = el('span', `figure ${key}`);
      const value = el('b', undefined, '0');
      value.dataset.figure = key;
      figure.appendChild(value);
      figure.appendChild(document.createTextNode(` ${label}`));
      figures.appendChild(figure);
    }
    card.appendChild(figures);
    const rates = el('canvas', 'rates');
    rates.setAttribute('aria-label', 'pass, block and error rates');
    const rt = el('canvas', 'rt');
    rt.setAttribute('aria-label', 'average response time');
    card.appendChild(rates);
    card.appendChild(rt);
    return card;
  }

  function renderResources() {
    for (const entry of state.series.values()) {
      const last = entry.points[entry.points.length - 1];
      const latest = last !== undefined && state.now - last.t <= 2000 ? last : { pass: 0, block: 0, error: 0, rtMs: 0 };
      for (const value of entry.card.querySelectorAll('[data-figure]')) {
        const key = value.dataset.figure;
        value.textContent = String(key === 'concurrency' ? entry.concurrency : latest[key]);
      }
      const [rates, rt] = entry.card.querySelectorAll('canvas');
      draw(rates, entry.points, [
        ['pass', '--pass'],
        ['block', '--block'],
        ['error', '--error'],
      ]);
      draw(rt, entry.points, [['rtMs', '--rt']]);
    }
    $('resources-empty').hidden = state.series.size > 0;
    const total = state.series.size + state.hiddenResources;
    $('resources-note').textContent =
      state.hiddenResources > 0 ? `(${state.series.size} of ${total} shown)` : total > 0 ? `(${total})` : '';
    $('summary').textContent = `${total} resources · ${state.rules.length} rules`;
  }

  /** A small line chart of `fields` over the history window; a missing second counts as 0. */
  function draw(canvas, points, fields) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 280;
    const height = canvas.clientHeight || 44;
    if (canvas.width !== Math.round(width * ratio)) canvas.width = Math.round(width * ratio);
    if (canvas.height !== Math.round(height * ratio)) canvas.height = Math.round(height * ratio);
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    g.strokeStyle = '#eee';
    g.beginPath();
    g.moveTo(0, height - 0.5);
    g.lineTo(width, height - 0.5);
    g.stroke();
    // The window grows with the data, from one minute up to the history kept.
    const first = points.length > 0 ? points[0].t : state.now;
    const span = Math.min(state.historySeconds * 1000, Math.max(60_000, state.now - first));
    const start = state.now - span;
    let max = 1;
    for (const point of points) for (const [field] of fields) max = Math.max(max, point[field]);
    const styles = getComputedStyle(document.documentElement);
    for (const [field, color] of fields) {
      g.strokeStyle = styles.getPropertyValue(color).trim();
      g.lineWidth = 1.5;
      g.beginPath();
      let previousT;
      for (const point of points) {
        const x = ((point.t - start) / span) * width;
        const y = height - 2 - (point[field] / max) * (height - 6);
        if (previousT === undefined || point.t - previousT > 1000) {
          if (previousT !== undefined) g.lineTo(((previousT + 1000 - start) / span) * width, height - 2);
          g.moveTo(x, previousT === undefined ? y : height - 2);
        }
        g.lineTo(x, y);
        previousT = point.t;
      }
      g.stroke();
    }
    g.fillStyle = '#999';
    g.font = '10px sans-serif';
    g.fillText(String(Math.round(max * 10) / 10), 2, 10);
  }

  // ------------------------------------------------------------------ breakers

  function renderBreakers(breakers) {
    const body = $('breakers').tBodies[0];
    body.replaceChildren();
    for (const breaker of breakers) {
      const row = el('tr');
      row.dataset.resource = breaker.resource;
      row.appendChild(el('td', 'resource', breaker.resource));
      row.appendChild(el('td', 'rule', ruleSummary(breaker.rule)));
      const cell = el('td');
      cell.appendChild(el('span', `state ${breaker.state}`, breaker.state));
      if (breaker.retryAfterMs !== undefined)
        cell.appendChild(document.createTextNode(` (probing in ${Math.ceil(breaker.retryAfterMs / 1000)} s)`));
      row.appendChild(cell);
      const transitions = el('td');
      const list = el('ul', 'transitions');
      for (const t of breaker.transitions.slice().reverse()) {
        const value = t.value === undefined || t.value === null ? '' : ` (${Math.round(t.value * 1000) / 1000})`;
        list.appendChild(el('li', undefined, `${t.from} → ${t.to}${value}, ${ago(t.at)}`));
      }
      transitions.appendChild(list);
      row.appendChild(transitions);
      body.appendChild(row);
    }
    $('breakers-empty').hidden = breakers.length > 0;
  }

  // ------------------------------------------------------------------ rules

  function setRules(rules, rejected) {
    state.rules = rules;
    state.rejected = rejected;
    renderRules();
    if (!state.editorDirty) $('rules-json').value = loadedJson();
  }

  function loadedJson() {
    const layer = {};
    for (const kind of state.kinds) layer[kind] = [];
    for (const d of state.rules) if (d.layer === 'loaded') (layer[d.kind] = layer[d.kind] || []).push(d.rule);
    return JSON.stringify(layer, null, 2);
  }

  function renderRules() {
    const body = $('rules').tBodies[0];
    body.replaceChildren();
    for (const d of state.rules) {
      const row = el('tr', d.inForce ? '' : 'shadowed');
      row.dataset.resource = d.resource;
      row.appendChild(el('td', 'kind', d.kind));
      row.appendChild(el('td', 'resource', d.resource));
      row.appendChild(el('td', 'rule', ruleText(d.rule)));
      row.appendChild(
        el('td', 'source', d.layer === 'declared' ? 'declared by code (read-only)' : `loaded (${d.source})`),
      );
      row.appendChild(
        el('td', 'status', d.inForce ? 'in force' : 'shadowed: loaded rules of this kind and resource take precedence'),
      );
      body.appendChild(row);
    }
    $('rules-empty').hidden = state.rules.length > 0;
    const box = $('rejected');
    box.hidden = state.rejected === undefined || state.rejected === null;
    box.replaceChildren();
    if (!box.hidden) {
      box.appendChild(
        el(
          'div',
          undefined,
          `Rules from ${state.rejected.source} were rejected ${ago(state.rejected.at)}; the rules in force stayed:`,
        ),
      );
      box.appendChild(issueList(state.rejected.issues));
    }
    $('summary').textContent = `${state.series.size + state.hiddenResources} resources · ${state.rules.length} rules`;
  }

  function issueList(issues, list) {
    const target = list || el('ul');
    target.replaceChildren();
    for (const issue of issues) {
      const item = el('li');
      item.appendChild(el('span', 'path', issue.path === '' ? '(whole rule set)' : issue.path));
      item.appendChild(document.createTextNode(`: ${issue.message}`));
      target.appendChild(item);
    }
    return target;
  }

  // ------------------------------------------------------------------ editing

  function renderEditMode() {
    document.body.classList.toggle('readonly', state.readOnly);
    $('apply').disabled = state.readOnly;
    $('token').disabled = state.readOnly;
    $('edit-mode').textContent = state.readOnly
      ? 'Read-only: this dashboard has no token configured, so rules cannot be edited here.'
      : state.editTarget === 'engine'
        ? 'Edits apply to this instance through loadRules (source "dashboard") and last until it restarts; attach a durable store (fileRuleSource, Redis) to keep them.'
        : `Edits are written through the ${state.editTarget} store, so every instance and every restart gets them.`;
  }

  function status(text, ok) {
    const node = $('edit-status');
    node.className = ok ? 'ok' : 'fail';
    node.textContent = text;
  }

  async function apply() {
    const issues = $('issues');
    issues.replaceChildren();
    status('Applying…', true);
    let answer;
    try {
      const response = await fetch('api/rules', {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${$('token').value}` },
        body: $('rules-json').value,
      });
      answer = { status: response.status, body: await response.json() };
    } catch (error) {
      status(`Could not reach the server: ${error}`, false);
      return;
    }
    if (answer.status === 200) {
      state.editorDirty = false;
      status(answer.body.message, true);
      $('rules-json').value = loadedJson();
      return;
    }
    status(answer.body.message, false);
    if (Array.isArray(answer.body.issues)) issueList(answer.body.issues, issues);
  }

  function revert() {
    state.editorDirty = false;
    $('issues').replaceChildren();
    status('', true);
    $('rules-json').value = loadedJson();
  }

  // ------------------------------------------------------------------ blocks

  function renderBlocks() {
    const body = $('blocks').tBodies[0];
    body.replaceChildren();
    for (const block of state.blocks.slice().reverse()) {
      const row = el('tr');
      row.dataset.resource = block.resource;
      row.appendChild(el('td', undefined, ago(block.at)));
      row.appendChild(el('td', 'resource', block.resource));
      row.appendChild(el('td', 'kind', block.kind));
      row.appendChild(el('td', 'code', block.code));
      row.appendChild(el('td', undefined, block.origin));
      row.appendChild(el('td', 'rule', ruleSummary(block.rule)));
      body.appendChild(row);
    }
    $('blocks-empty').hidden = state.blocks.length > 0;
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('rules-json').addEventListener('input', () => (state.editorDirty = true));
    $('edit-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void apply();
    });
    $('revert').addEventListener('click', revert);
    renderEditMode();
    connect();
  });
})();
