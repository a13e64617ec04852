// The Floodgate dashboard page. Plain JavaScript, no framework, no CDN: it draws what the
// server sends over server-sent events (`events`, read with fetch so that a read token can go in
// a header), a page of resources and a page of rules at a time; rule editing is rule-editor.js's.
// Every piece of data is rendered with textContent (never innerHTML): a resource or a rule named
// `<img src=x onerror=alert(1)>` shows as that text.
'use strict';

(function () {
  const state = {
    now: 0,
    historySeconds: 300,
    series: new Map(), // name -> { points: [{t, pass, block, error, rtMs}], concurrency, card }
    hiddenResources: 0,
    rules: [],
    kinds: [],
    blocks: [],
    recentBlocks: 20,
    rejected: undefined,
    breakerCount: 0,
    resourcePage: { page: 0, pages: 1, total: 0 },
    rulePage: { page: 0, pages: 1, total: 0 },
    readToken: '', // kept in memory only, for this page's life
    stream: undefined, // the AbortController of the open event stream
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

  /** How a rule is rolled out, in words: '' for an enforced rule. */
  function rolloutText(rule) {
    if (rule && rule.mode === 'shadow') return 'shadow: watch only';
    if (rule && rule.enforcePercent !== undefined) return `enforces ${rule.enforcePercent}%`;
    return '';
  }

  /** The fields that tell a rule apart, for the breaker and block tables. */
  function ruleSummary(rule) {
    const parts = [];
    for (const key of SUMMARY_KEYS)
      if (rule && rule[key] !== undefined && rule[key] !== 'default')
        parts.push(`${key}: ${JSON.stringify(rule[key])}`);
    return parts.join(', ');
  }

  // ------------------------------------------------------------------ connection

  /** The headers of a read: the read token, when one was given. */
  function readHeaders() {
    return state.readToken === '' ? {} : { authorization: `Bearer ${state.readToken}` };
  }

  /** A read of the dashboard's JSON (`{ body, etag }`); `undefined` (after asking for the token) when it is refused. */
  async function read(path) {
    const response = await fetch(path, { headers: readHeaders(), cache: 'no-store' });
    if (response.status === 401) {
      askReadToken();
      return undefined;
    }
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    const etag = response.headers.get('etag');
    return { body: await response.json(), etag: etag === null ? undefined : etag.replace(/^"|"$/g, '') };
  }

  /** The body of a read; `undefined` when it is refused. */
  async function readJson(path) {
    return (await read(path))?.body;
  }

  const handlers = {
    editor(editor) {
      ruleEditor.setMode(editor);
      void ruleEditor.refresh();
    },
    snapshot(snapshot) {
      state.now = snapshot.now;
      state.historySeconds = snapshot.historySeconds;
      for (const entry of state.series.values()) entry.card.remove();
      state.series.clear();
      mergeResources(snapshot.resources);
      state.resourcePage = snapshot.resourcePage;
      state.hiddenResources = snapshot.hiddenResources;
      state.kinds = snapshot.kinds;
      ruleEditor.setKinds(snapshot.kinds);
      ruleEditor.setPageSize(snapshot.pageSize);
      state.blocks = snapshot.blocks;
      state.recentBlocks = snapshot.recentBlocks;
      state.breakerCount = snapshot.breakerCount;
      setRules(snapshot.rules, snapshot.rulePage, snapshot.rejected);
      renderResources();
      renderBreakers(snapshot.breakers);
      renderBlocks();
    },
    tick(tick) {
      state.now = tick.now;
      mergeResources(tick.resources);
      state.resourcePage = tick.resourcePage;
      state.hiddenResources = tick.hiddenResources;
      state.blocks = state.blocks.concat(tick.blocks).slice(-state.recentBlocks);
      state.breakerCount = tick.breakerCount;
      renderResources();
      renderBreakers(tick.breakers);
      renderBlocks();
    },
    rules(update) {
      // The event carries the first page; another page is read again.
      if (state.rulePage.page === 0) setRules(update.rules, update.rulePage, update.rejected);
      else void showRulePage(state.rulePage.page);
      void ruleEditor.refresh();
    },
  };

  /** Reads the event stream of the page of resources shown; reconnects after 2 s when it drops. */
  async function connect() {
    state.stream?.abort();
    const controller = new AbortController();
    state.stream = controller;
    try {
      const response = await fetch(`events?resources=${state.resourcePage.page}`, {
        headers: readHeaders(),
        cache: 'no-store',
        signal: controller.signal,
      });
      if (response.status === 401) return askReadToken();
      if (!response.ok || response.body === null) throw new Error(String(response.status));
      setConnection('live', 'live');
      $('read-token-form').hidden = true;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          dispatch(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    } catch (error) {
      if (controller.signal.aborted) return;
    }
    if (state.stream !== controller) return;
    setConnection('down', 'reconnecting…');
    setTimeout(() => state.stream === controller && void connect(), 2000);
  }

  /** One server-sent event: `event: <name>` and `data: <json>` lines. */
  function dispatch(block) {
    let name = 'message';
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) name = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    const handler = handlers[name];
    if (handler !== undefined && data !== '') handler(JSON.parse(data));
  }

  function askReadToken() {
    setConnection('down', 'token needed');
    $('read-token-form').hidden = false;
    $('read-token').focus();
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
      entry.blocksByPriority = resource.blocksByPriority;
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
      ['wouldBlock', 'would-block/s'],
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
    const priorities = el('div', 'priorities');
    priorities.hidden = true;
    card.appendChild(priorities);
    const rates = el('canvas', 'rates');
    rates.setAttribute('aria-label', 'pass, block, would-block and error rates');
    const rt = el('canvas', 'rt');
    rt.setAttribute('aria-label', 'average response time');
    card.appendChild(rates);
    card.appendChild(rt);
    return card;
  }

  function renderResources() {
    for (const entry of state.series.values()) {
      const last = entry.points[entry.points.length - 1];
      const latest =
        last !== undefined && state.now - last.t <= 2000
          ? last
          : { pass: 0, block: 0, wouldBlock: 0, error: 0, rtMs: 0 };
      for (const value of entry.card.querySelectorAll('[data-figure]')) {
        const key = value.dataset.figure;
        value.textContent = String(key === 'concurrency' ? entry.concurrency : latest[key]);
      }
      // Blocks by priority since the resource was tracked, once a call claimed a priority.
      const priorities = entry.card.querySelector('.priorities');
      const byPriority = entry.blocksByPriority;
      priorities.hidden = byPriority === undefined;
      if (byPriority !== undefined)
        priorities.textContent = `blocked by priority: critical ${byPriority.critical} · default ${byPriority.default} · sheddable ${byPriority.sheddable}`;
      const [rates, rt] = entry.card.querySelectorAll('canvas');
      draw(rates, entry.points, [
        ['pass', '--pass'],
        ['block', '--block'],
        ['wouldBlock', '--would-block'],
        ['error', '--error'],
      ]);
      draw(rt, entry.points, [['rtMs', '--rt']]);
    }
    $('resources-empty').hidden = state.series.size > 0;
    const charted = state.resourcePage.total;
    const total = charted + state.hiddenResources;
    $('resources-note').textContent =
      state.hiddenResources > 0 ? `(${charted} of ${total} charted)` : total > 0 ? `(${total})` : '';
    renderPager('resources', state.resourcePage);
    renderSummary();
  }

  function renderSummary() {
    $('summary').textContent =
      `${state.resourcePage.total + state.hiddenResources} resources · ${state.rulePage.total} rules`;
  }

  /** The pager of a list: which page of how many, and the buttons to the others. */
  function renderPager(name, info) {
    $(`${name}-pager`).hidden = info.pages <= 1;
    $(`${name}-page`).textContent = `page ${info.page + 1} of ${info.pages}`;
    $(`${name}-prev`).disabled = info.page <= 0;
    $(`${name}-next`).disabled = info.page >= info.pages - 1;
  }

  /** Shows another page of resources: the stream is opened again for it. */
  function showResourcePage(page) {
    if (page < 0 || page >= state.resourcePage.pages) return;
    state.resourcePage = { ...state.resourcePage, page };
    for (const entry of state.series.values()) entry.card.remove();
    state.series.clear();
    void connect();
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
    $('breakers-note').textContent =
      state.breakerCount > breakers.length
        ? `(${breakers.length} of ${state.breakerCount} shown, open ones first)`
        : '';
  }

  // ------------------------------------------------------------------ rules

  function setRules(rules, rulePage, rejected) {
    state.rules = rules;
    state.rulePage = rulePage;
    state.rejected = rejected;
    renderRules();
  }

  /** Shows another page of rules. */
  async function showRulePage(page) {
    if (page < 0 || page >= state.rulePage.pages) return;
    const answer = await readJson(`api/rules?page=${page}`);
    if (answer !== undefined) setRules(answer.rules, answer.rulePage, answer.rejected);
  }

  function renderRules() {
    const body = $('rules').tBodies[0];
    body.replaceChildren();
    for (const d of state.rules) {
      const row = el('tr', d.inForce ? '' : 'shadowed');
      row.dataset.resource = d.resource;
      row.appendChild(el('td', 'kind', d.kind));
      row.appendChild(el('td', 'resource', d.resource));
      const rule = el('td', 'rule', ruleText(d.rule));
      const rollout = rolloutText(d.rule);
      if (rollout !== '') {
        row.classList.add('rollout');
        rule.prepend(el('span', 'badge rollout', rollout), document.createTextNode(' '));
      }
      row.appendChild(rule);
      row.appendChild(
        el('td', 'source', d.layer === 'declared' ? 'declared by code (read-only)' : `loaded (${d.source})`),
      );
      row.appendChild(
        el('td', 'status', d.inForce ? 'in force' : 'shadowed: loaded rules of this kind and resource take precedence'),
      );
      body.appendChild(row);
    }
    $('rules-empty').hidden = state.rules.length > 0;
    renderPager('rules', state.rulePage);
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
    renderSummary();
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

  const ruleEditor = window.floodgateRuleEditor({ $, el, issueList, ruleText, read });

  document.addEventListener('DOMContentLoaded', () => {
    ruleEditor.init();
    $('resources-prev').addEventListener('click', () => showResourcePage(state.resourcePage.page - 1));
    $('resources-next').addEventListener('click', () => showResourcePage(state.resourcePage.page + 1));
    $('rules-prev').addEventListener('click', () => void showRulePage(state.rulePage.page - 1));
    $('rules-next').addEventListener('click', () => void showRulePage(state.rulePage.page + 1));
    $('read-token-form').addEventListener('submit', (event) => {
      event.preventDefault();
      state.readToken = $('read-token').value;
      void connect();
    });
    void connect();
  });
})();
