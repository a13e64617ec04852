// Rule editing on the Floodgate dashboard page. The loaded rules (the whole loaded layer,
// `api/rules/loaded`, and its version, the ETag) listed with an edit and a delete per rule; a form
// per rule kind built from the field specification the server sends (`rule-forms.json`: the
// dashboard describes rule fields there only), or the JSON of one rule for a kind it has no form
// for; a picker of the resources the engine has seen (`api/resources`, searched and paged); and the
// JSON of the whole layer. Every edit names the version it was made on (refused with 409 when the
// rules changed since). Every piece of data is rendered with textContent or as an input's value,
// never as HTML.
'use strict';

/**
 * Makes the editor of one page. `page` gives what the page shares: `$(id)`, `el(tag, class, text)`,
 * `issueList(issues, list)`, `ruleText(rule)`, and `read(path)`, a read with the read token
 * (`{ body, etag }`, or `undefined` when the token is refused).
 */
window.floodgateRuleEditor = function floodgateRuleEditor(page) {
  const { $, el } = page;
  const state = {
    readOnly: true,
    target: 'engine',
    forms: undefined, // a promise of { kind: { fields: [spec] } }, from rule-forms.json
    kinds: [],
    pageSize: 50,
    layer: undefined, // { kind: [rule] }
    version: undefined,
    loadedPage: 0,
    rawDirty: false,
    rawVersion: undefined,
    form: undefined, // the open form: { kind, index, version, rule, fields: [{ spec, input, row, issue }], json }
    confirming: undefined, // the delete button waiting for its confirmation
  };

  // ---------------------------------------------------------------- reading

  /** Reads the loaded layer and its version; the JSON view too, unless it is being edited. */
  async function refresh() {
    const answer = await page.read('api/rules/loaded').catch(() => undefined);
    if (answer === undefined) return;
    state.layer = answer.body;
    state.version = answer.etag;
    renderLoaded();
    if (!state.rawDirty) {
      $('rules-json').value = JSON.stringify(answer.body, null, 2);
      state.rawVersion = answer.etag;
    }
  }

  /** Every loaded rule with its kind and position, in the layer's order. */
  function loadedRules() {
    const rules = [];
    for (const [kind, list] of Object.entries(state.layer || {}))
      if (Array.isArray(list)) list.forEach((rule, index) => rules.push({ kind, index, rule }));
    return rules;
  }

  function renderLoaded() {
    const rules = loadedRules();
    const pages = Math.max(1, Math.ceil(rules.length / state.pageSize));
    state.loadedPage = Math.min(state.loadedPage, pages - 1);
    const body = $('loaded-rules').tBodies[0];
    body.replaceChildren();
    state.confirming = undefined;
    for (const { kind, index, rule } of rules.slice(
      state.loadedPage * state.pageSize,
      (state.loadedPage + 1) * state.pageSize,
    )) {
      const row = el('tr');
      row.dataset.kind = kind;
      row.dataset.index = String(index);
      row.appendChild(el('td', 'kind', kind));
      row.appendChild(el('td', 'index', index));
      row.appendChild(el('td', 'resource', typeof rule?.resource === 'string' ? rule.resource : ''));
      row.appendChild(el('td', 'rule', page.ruleText(rule)));
      const actions = el('td', 'actions');
      const edit = el('button', 'edit', 'Edit');
      edit.type = 'button';
      edit.disabled = state.readOnly;
      edit.addEventListener('click', () => void openForm(kind, index));
      const remove = el('button', 'delete', 'Delete');
      remove.type = 'button';
      remove.disabled = state.readOnly;
      remove.addEventListener('click', () => removeRule(remove, kind, index));
      actions.append(edit, remove);
      row.appendChild(actions);
      body.appendChild(row);
    }
    $('loaded-empty').hidden = rules.length > 0;
    $('loaded-rules').hidden = rules.length === 0;
    $('loaded-pager').hidden = pages <= 1;
    $('loaded-page').textContent = `page ${state.loadedPage + 1} of ${pages}`;
    $('loaded-prev').disabled = state.loadedPage <= 0;
    $('loaded-next').disabled = state.loadedPage >= pages - 1;
  }

  // ---------------------------------------------------------------- sending

  function status(text, ok) {
    const node = $('edit-status');
    node.className = ok ? 'ok' : 'fail';
    node.textContent = text;
  }

  /** Sends an edit with the token; resolves with `{ status, body }`, or `undefined` when the server cannot be reached. */
  async function send(method, path, body) {
    const headers = { authorization: `Bearer ${$('token').value}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(path, { method, headers, body, cache: 'no-store' });
      const text = await response.text();
      let parsed = {};
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = { message: text };
      }
      return { status: response.status, body: parsed };
    } catch (error) {
      status(`Could not reach the server: ${error}`, false);
      return undefined;
    }
  }

  /** The sentence of an answer: its message, or a problem's detail (the dashboard's own limits answer problems). */
  function sentence(answer) {
    const body = answer.body || {};
    return body.message || body.detail || body.title || `HTTP ${answer.status}`;
  }

  function editPath(kind, index, version) {
    const at = index === undefined ? '' : `/${index}`;
    return `api/rules/loaded/${encodeURIComponent(kind)}${at}?version=${encodeURIComponent(version || '')}`;
  }

  /** Deletes a rule on the second click of its button. */
  async function removeRule(button, kind, index) {
    if (state.confirming !== button) {
      if (state.confirming !== undefined) state.confirming.textContent = 'Delete';
      state.confirming = button;
      button.textContent = 'Confirm delete';
      return;
    }
    state.confirming = undefined;
    status('Deleting…', true);
    const answer = await send('DELETE', editPath(kind, index, state.version));
    if (answer === undefined) return;
    status(sentence(answer), answer.status === 200);
    if (state.form !== undefined && state.form.kind === kind && answer.status === 200) closeForm();
    await refresh();
  }

  // ---------------------------------------------------------------- forms

  /** Opens the form of a new rule of `kind`, or of the loaded rule at `index`. */
  async function openForm(kind, index) {
    const rule = index === undefined ? {} : state.layer[kind][index];
    const version = state.version;
    const spec = (await state.forms)[kind];
    const form = { kind, index, version, rule, fields: [], json: undefined };
    state.form = form;
    $('rule-form-title').textContent = index === undefined ? `Add a ${kind} rule` : `Edit ${kind}[${index}]`;
    const fields = $('rule-fields');
    fields.replaceChildren();
    $('rule-issues').replaceChildren();
    if (spec === undefined) {
      // A kind the dashboard has no form for: the rule's JSON.
      const row = el('div', 'field json-rule');
      const label = el('label', undefined, `the ${kind} rule, as JSON`);
      const input = el('textarea');
      input.spellcheck = false;
      input.name = 'rule-json';
      input.value = JSON.stringify(rule, null, 2);
      label.appendChild(input);
      row.appendChild(label);
      fields.appendChild(row);
      form.json = input;
    } else {
      for (const field of spec.fields) form.fields.push(fieldRow(field, valueAt(rule, field.name)));
      for (const f of form.fields) fields.appendChild(f.row);
      updateVisibility();
    }
    $('rule-save').disabled = state.readOnly;
    $('rule-form').hidden = false;
    (form.json || form.fields[0]?.input)?.focus();
  }

  function closeForm() {
    state.form = undefined;
    $('rule-form').hidden = true;
    $('rule-fields').replaceChildren();
    $('rule-issues').replaceChildren();
  }

  /** One field: its name, its input filled from `value` (empty where it is the default), its help, its problems. */
  function fieldRow(field, value) {
    const row = el('div', 'field');
    row.dataset.field = field.name;
    const label = el('label');
    const title = el('span', 'title');
    title.appendChild(el('span', 'name', field.name));
    if (field.required) title.appendChild(el('span', 'required', ' *'));
    label.appendChild(title);
    let input;
    const shown = value === undefined || sameValue(value, field.default) ? undefined : value;
    if (field.type === 'select') {
      input = el('select');
      const empty = el(
        'option',
        undefined,
        field.default !== undefined
          ? `(default: ${field.default})`
          : field.placeholder !== undefined
            ? `(default: ${field.placeholder})`
            : field.required
              ? '(choose)'
              : '(none)',
      );
      empty.value = '';
      input.appendChild(empty);
      for (const option of field.options || []) {
        const node = el('option', undefined, option);
        node.value = option;
        input.appendChild(node);
      }
      input.value = shown === undefined ? '' : String(shown);
      if (shown !== undefined && input.value !== String(shown)) {
        // A value the form does not list: kept, for the engine to judge.
        const node = el('option', undefined, String(shown));
        node.value = String(shown);
        input.appendChild(node);
        input.value = String(shown);
      }
    } else if (field.type === 'boolean') {
      input = el('input');
      input.type = 'checkbox';
      input.checked = shown === true;
    } else if (field.type === 'list') {
      input = el('textarea');
      input.rows = 3;
      input.value = Array.isArray(shown)
        ? shown.map((item) => (typeof item === 'string' ? item : JSON.stringify(item))).join('\n')
        : shown === undefined
          ? ''
          : JSON.stringify(shown);
    } else {
      input = el('input');
      input.type = 'text';
      if (field.type === 'number') input.inputMode = 'decimal';
      input.value =
        shown === undefined
          ? ''
          : field.type === 'json' || typeof shown === 'object'
            ? JSON.stringify(shown)
            : String(shown);
      if (field.placeholder !== undefined) input.placeholder = field.placeholder;
    }
    input.name = field.name;
    input.addEventListener('input', updateVisibility);
    input.addEventListener('change', updateVisibility);
    label.appendChild(input);
    row.appendChild(label);
    row.appendChild(el('span', 'help', field.help || ''));
    const issue = el('div', 'field-issue');
    issue.setAttribute('role', 'alert');
    issue.hidden = true;
    row.appendChild(issue);
    const entry = { spec: field, input, row, issue };
    if (field.type === 'resource') row.appendChild(picker(input));
    return entry;
  }

  /** What a field holds, as `when` compares it: its text, or its default when empty. */
  function conditionValue(entry) {
    if (entry.row.hidden) return '';
    const text = entry.spec.type === 'boolean' ? (entry.input.checked ? 'true' : '') : entry.input.value;
    if (text === '' && entry.spec.default !== undefined) return String(entry.spec.default);
    return text;
  }

  /** Shows the fields whose `when` holds, hides the others (in order: a field depends on those before it). */
  function updateVisibility() {
    const form = state.form;
    if (form === undefined || form.json !== undefined) return;
    const byName = new Map(form.fields.map((f) => [f.spec.name, f]));
    for (const entry of form.fields) {
      const when = entry.spec.when || {};
      entry.row.hidden = !Object.entries(when).every(([name, values]) => {
        const other = byName.get(name);
        return values.includes(other === undefined ? '' : conditionValue(other));
      });
    }
  }

  /** The rule the form makes: the rule edited, with every field of the form as the form holds it (hidden ones removed). */
  function readForm() {
    const form = state.form;
    const rule = JSON.parse(JSON.stringify(form.rule || {}));
    for (const entry of form.fields) deleteAt(rule, entry.spec.name);
    for (const entry of form.fields) {
      if (entry.row.hidden) continue;
      const value = readField(entry);
      if (value !== undefined) setAt(rule, entry.spec.name, value);
    }
    for (const entry of form.fields) prune(rule, entry.spec.name);
    return rule;
  }

  function readField({ spec, input }) {
    if (spec.type === 'boolean') return input.checked ? true : undefined;
    const text = input.value;
    if (spec.type === 'list') {
      const lines = text
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '');
      if (lines.length === 0) return undefined;
      return lines.map((line) => (line.startsWith('{') ? parseOr(line, line) : line));
    }
    if (text.trim() === '') return undefined;
    if (spec.type === 'number') return /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(text) ? Number(text) : text;
    if (spec.type === 'json') return parseOr(text, text);
    return text;
  }

  function parseOr(text, fallback) {
    try {
      return JSON.parse(text);
    } catch {
      return fallback;
    }
  }

  async function saveForm() {
    const form = state.form;
    if (form === undefined) return;
    for (const entry of form.fields) {
      entry.issue.hidden = true;
      entry.issue.replaceChildren();
    }
    $('rule-issues').replaceChildren();
    const body = form.json !== undefined ? form.json.value : JSON.stringify(readForm());
    status('Saving…', true);
    const answer = await send(
      form.index === undefined ? 'POST' : 'PUT',
      editPath(form.kind, form.index, form.version),
      body,
    );
    if (answer === undefined) return;
    status(sentence(answer), answer.status === 200);
    if (answer.status === 200) {
      closeForm();
      await refresh();
      return;
    }
    if (Array.isArray(answer.body.issues)) showIssues(answer.body.issues);
    if (answer.status === 409) await refresh();
  }

  /** Each problem next to its field (the longest field path it lies under), the others in the form's list. */
  function showIssues(issues) {
    const general = [];
    const fields = state.form.fields.filter((entry) => !entry.row.hidden);
    for (const issue of issues) {
      const entry =
        typeof issue.field === 'string'
          ? fields
              .filter(({ spec }) => isUnder(issue.field, spec.name))
              .sort((a, b) => b.spec.name.length - a.spec.name.length)[0]
          : undefined;
      if (entry === undefined) {
        general.push(issue);
        continue;
      }
      const rest = issue.field.slice(entry.spec.name.length).replace(/^\./, '');
      entry.issue.appendChild(el('div', undefined, rest === '' ? issue.message : `${rest}: ${issue.message}`));
      entry.issue.hidden = false;
    }
    page.issueList(general, $('rule-issues'));
  }

  function isUnder(path, name) {
    return path === name || path.startsWith(`${name}.`) || path.startsWith(`${name}[`);
  }

  // ---------------------------------------------------------------- the resource picker

  /** The resources the engine has seen, searched as `input` is typed, a page at a time; a click takes one. */
  function picker(input) {
    const box = el('div', 'picker');
    const list = el('ul', 'picker-list');
    const pager = el('p', 'pager');
    const prev = el('button', 'picker-prev', '‹');
    const next = el('button', 'picker-next', '›');
    const where = el('span', 'picker-page');
    prev.type = next.type = 'button';
    pager.append(prev, where, next);
    box.append(list, pager);
    let pageNumber = 0;
    let timer;
    let asked = 0;
    async function show(pageWanted) {
      const ask = ++asked;
      const query = encodeURIComponent(input.value);
      const answer = await page.read(`api/resources?q=${query}&page=${pageWanted}`).catch(() => undefined);
      if (answer === undefined || ask !== asked) return;
      const { resources, resourcePage } = answer.body;
      pageNumber = resourcePage.page;
      list.replaceChildren();
      for (const name of resources) {
        const item = el('li');
        const pick = el('button', 'pick', name);
        pick.type = 'button';
        pick.addEventListener('click', () => {
          input.value = name;
          input.dispatchEvent(new Event('input'));
        });
        item.appendChild(pick);
        list.appendChild(item);
      }
      if (resources.length === 0)
        list.appendChild(el('li', 'empty', 'No resource seen matches: a rule for a new name applies once it is.'));
      where.textContent = `${resourcePage.total} seen · page ${resourcePage.page + 1} of ${resourcePage.pages}`;
      prev.disabled = resourcePage.page <= 0;
      next.disabled = resourcePage.page >= resourcePage.pages - 1;
    }
    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => void show(0), 150);
    });
    prev.addEventListener('click', () => void show(pageNumber - 1));
    next.addEventListener('click', () => void show(pageNumber + 1));
    void show(0);
    return box;
  }

  // ---------------------------------------------------------------- the JSON of the whole layer

  async function applyRaw() {
    const issues = $('issues');
    issues.replaceChildren();
    status('Applying…', true);
    const version = state.rawVersion === undefined ? '' : `?version=${encodeURIComponent(state.rawVersion)}`;
    const answer = await send('PUT', `api/rules${version}`, $('rules-json').value);
    if (answer === undefined) return;
    status(sentence(answer), answer.status === 200);
    if (answer.status === 200) {
      state.rawDirty = false;
      state.rawVersion = answer.body.version;
      await refresh();
      return;
    }
    if (Array.isArray(answer.body.issues)) page.issueList(answer.body.issues, issues);
  }

  function revertRaw() {
    state.rawDirty = false;
    $('issues').replaceChildren();
    status('', true);
    void refresh();
  }

  // ---------------------------------------------------------------- paths in a rule

  function valueAt(rule, path) {
    let at = rule;
    for (const part of path.split('.')) {
      if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return undefined;
      at = at[part];
    }
    return at;
  }

  function setAt(rule, path, value) {
    const parts = path.split('.');
    let at = rule;
    for (const part of parts.slice(0, -1)) {
      if (at[part] === null || typeof at[part] !== 'object' || Array.isArray(at[part])) at[part] = {};
      at = at[part];
    }
    at[parts[parts.length - 1]] = value;
  }

  function deleteAt(rule, path) {
    const parts = path.split('.');
    let at = rule;
    for (const part of parts.slice(0, -1)) {
      if (at === null || typeof at !== 'object' || !Object.hasOwn(at, part)) return;
      at = at[part];
    }
    if (at !== null && typeof at === 'object') delete at[parts[parts.length - 1]];
  }

  /** Removes the objects on `path` that the form emptied (`key: {}` once its fields are cleared). */
  function prune(rule, path) {
    const parts = path.split('.');
    for (let depth = parts.length - 1; depth >= 1; depth--) {
      const prefix = parts.slice(0, depth).join('.');
      const value = valueAt(rule, prefix);
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)
        deleteAt(rule, prefix);
    }
  }

  function sameValue(a, b) {
    return b !== undefined && JSON.stringify(a) === JSON.stringify(b);
  }

  // ---------------------------------------------------------------- the page's calls

  return {
    /** Binds the controls and reads the forms' specification. */
    init() {
      $('rules-json').addEventListener('input', () => (state.rawDirty = true));
      $('edit-form').addEventListener('submit', (event) => {
        event.preventDefault();
        void applyRaw();
      });
      $('token-form').addEventListener('submit', (event) => event.preventDefault());
      $('revert').addEventListener('click', revertRaw);
      $('add-rule').addEventListener('click', () => {
        if ($('add-kind').value !== '') void openForm($('add-kind').value, undefined);
      });
      $('rule-form').addEventListener('submit', (event) => {
        event.preventDefault();
        void saveForm();
      });
      $('rule-cancel').addEventListener('click', closeForm);
      $('loaded-prev').addEventListener('click', () => {
        state.loadedPage = Math.max(0, state.loadedPage - 1);
        renderLoaded();
      });
      $('loaded-next').addEventListener('click', () => {
        state.loadedPage++;
        renderLoaded();
      });
      this.setMode({ readOnly: true, editTarget: 'engine' });
      // A kind missing here (or all, if this cannot be read) is edited as the JSON of one rule.
      state.forms = fetch('rule-forms.json', { cache: 'no-store' }).then(
        (response) => (response.ok ? response.json() : {}),
        () => ({}),
      );
    },
    /** Whether edits are possible, and where they go (the `editor` event). */
    setMode(editor) {
      state.readOnly = editor.readOnly;
      state.target = editor.editTarget;
      document.body.classList.toggle('readonly', state.readOnly);
      for (const id of ['apply', 'token', 'add-rule', 'rule-save']) $(id).disabled = state.readOnly;
      $('edit-mode').textContent = state.readOnly
        ? 'Read-only: this dashboard has no token configured, so rules cannot be edited here.'
        : state.target === 'engine'
          ? 'Edits apply to this instance through loadRules (source "dashboard") and last until it restarts; attach a durable store (fileRuleSource, Redis) to keep them.'
          : `Edits are written through the ${state.target} store, so every instance and every restart gets them.`;
      renderLoaded();
    },
    /** The engine's rule kinds (the keys of the layer), offered to add a rule of. */
    setKinds(kinds) {
      if (JSON.stringify(kinds) === JSON.stringify(state.kinds)) return;
      state.kinds = kinds;
      const select = $('add-kind');
      select.replaceChildren();
      for (const kind of kinds) {
        const option = el('option', undefined, kind);
        option.value = kind;
        select.appendChild(option);
      }
    },
    /** How many loaded rules are listed at a time. */
    setPageSize(size) {
      state.pageSize = size;
    },
    refresh,
  };
};
