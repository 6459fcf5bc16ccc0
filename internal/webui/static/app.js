// @ts-check
// The page: three views (a new run, the runs, one run) routed by the URL's
// fragment (#/, #/runs, #/run/ID). Everything shown is built with
// createElement and textContent; nothing from a run is parsed as HTML.
import { apply, newRun } from './state.js';
import { follow } from './sse.js';
import { markdown, toDOM, highlight } from './md.js';

const TOKEN_KEY = 'massgen-token';
const bench = new URLSearchParams(location.search).has('bench');
/** @type {any} */
const W = window;
if (bench) W.__mgLatency = [];

// ---- the token: from the fragment massgen opened (#token=…), then kept for
// this tab only (sessionStorage), never sent anywhere but this server.
(function takeToken() {
  const m = /^#token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search + '#/');
  }
})();
const token = () => sessionStorage.getItem(TOKEN_KEY) || '';

// ---- theme: the system's, unless the user chose one here.
function applyTheme() {
  const t = localStorage.getItem('massgen-theme');
  if (t) document.documentElement.dataset.theme = t;
  else delete document.documentElement.dataset.theme;
}
applyTheme();

/**
 * h builds an element: h('div', {class: 'x', onclick: f}, child, 'text').
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...any} kids
 * @returns {HTMLElement}
 */
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of kids.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return el;
}

/** @param {string} msg */
function toast(msg) {
  const t = document.getElementById('toast');
  if (!t) return;
  t.textContent = msg;
  t.hidden = false;
  clearTimeout(W.__toastTimer);
  W.__toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
}

class Unauthorized extends Error {}

/**
 * api calls a JSON route of the UI's API.
 * @param {string} path
 * @param {any} [body] POSTed as JSON when given
 */
async function api(path, body) {
  const opts = { headers: /** @type {Record<string, string>} */ ({ Authorization: 'Bearer ' + token() }), cache: /** @type {RequestCache} */ ('no-store') };
  if (body !== undefined) {
    Object.assign(opts, { method: 'POST', body: JSON.stringify(body) });
    opts.headers['Content-Type'] = 'application/json';
  }
  const resp = await fetch('api/' + path, opts);
  if (resp.status === 401) throw new Unauthorized();
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error((data.error && data.error.message) || resp.statusText);
  return data;
}

/** @param {string} iso */
function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

/** @param {number} n */
const tokens = (n) => (n >= 10000 ? (n / 1000).toFixed(1) + 'k' : String(n));
/** @param {number} c */
const dollars = (c) => (c ? '$' + (c < 0.01 ? c.toFixed(4) : c.toFixed(3)) : '');

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
/** @type {(() => void) | null} */
let leave = null; // stops what the current view runs (its stream, its timers)

function route() {
  if (leave) leave();
  leave = null;
  main.replaceChildren();
  const hash = location.hash || '#/';
  let m;
  if ((m = /^#\/run\/(.+)$/.exec(hash))) showRun(decodeURIComponent(m[1]));
  else if (hash === '#/runs') showRuns();
  else showHome();
  for (const a of document.querySelectorAll('header nav a')) {
    a.setAttribute('aria-current', a.getAttribute('href') === hash ? 'page' : 'false');
  }
}

/** @param {unknown} err */
function failed(err) {
  if (err instanceof Unauthorized) {
    showLogin();
    return;
  }
  toast(String(err instanceof Error ? err.message : err));
}

// ---- the token form, when the page has none or a wrong one.
function showLogin() {
  if (leave) leave();
  leave = null;
  const input = /** @type {HTMLInputElement} */ (h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true }));
  main.replaceChildren(h('section', { class: 'panel narrow' },
    h('h1', null, 'Sign in'),
    h('p', null, 'Open the address massgen printed when it started (it carries a token), or give the token or the server\'s API key here.'),
    h('form', { onsubmit: (/** @type {Event} */ e) => { e.preventDefault(); sessionStorage.setItem(TOKEN_KEY, input.value.trim()); location.hash = '#/'; route(); } },
      h('label', { for: 'token' }, 'Token or API key'), input, h('button', { type: 'submit' }, 'Continue'))));
  input.focus();
}

// ---- a new run, and the latest runs.
async function showHome() {
  const select = /** @type {HTMLSelectElement} */ (h('select', { id: 'config', name: 'config', required: true }));
  const question = /** @type {HTMLTextAreaElement} */ (h('textarea', { id: 'question', name: 'question', rows: 4, required: true,
    placeholder: 'What should the team answer?' }));
  const button = /** @type {HTMLButtonElement} */ (h('button', { type: 'submit', id: 'start' }, 'Start'));
  const recent = h('div', { id: 'recent' });
  const form = /** @type {HTMLFormElement} */ (h('form', { id: 'start-form', class: 'panel', onsubmit: async (/** @type {Event} */ e) => {
    e.preventDefault();
    button.disabled = true;
    try {
      const run = await api('runs', { config: select.value, question: question.value });
      location.hash = '#/run/' + encodeURIComponent(run.id);
    } catch (err) {
      failed(err);
    } finally {
      button.disabled = false;
    }
  } },
  h('h1', null, 'Ask the team'),
  h('label', { for: 'config' }, 'Config'), select,
  h('label', { for: 'question' }, 'Question'), question,
  h('p', { class: 'hint' }, 'Ctrl+Enter starts the run.'),
  button));
  question.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) form.requestSubmit();
  });
  main.append(form, h('section', { class: 'panel' }, h('h2', null, 'Latest runs'), recent, h('p', null, h('a', { href: '#/runs' }, 'All runs'))));
  try {
    const info = await api('info');
    document.getElementById('version')?.replaceChildren(document.createTextNode('v' + info.version));
    for (const c of info.configs || []) {
      select.append(h('option', { value: c.name, selected: c.name === info.default_config }, c.name === c.source ? c.name : `${c.name} (${c.source})`));
    }
    question.focus();
    const { runs } = await api('runs');
    recent.replaceChildren(runsTable(runs.slice(0, 8)));
  } catch (err) {
    failed(err);
  }
}

/** @param {any[]} runs */
function runsTable(runs) {
  if (!runs.length) return h('p', null, 'No runs yet.');
  return h('div', { class: 'table-wrap' }, h('table', { class: 'runs' },
    h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Question'), h('th', { scope: 'col' }, 'Status'),
      h('th', { scope: 'col' }, 'Started'), h('th', { scope: 'col' }, 'Winner'), h('th', { scope: 'col' }, 'Session'))),
    h('tbody', null, runs.map((r) => h('tr', null,
      h('td', null, h('a', { href: '#/run/' + encodeURIComponent(r.id) }, r.question || '(no question)')),
      h('td', null, h('span', { class: 'chip s-' + r.status }, r.status), r.live ? '' : h('span', { class: 'muted' }, ' log'),
        r.id.startsWith('api:') ? h('span', { class: 'muted' }, ' API') : ''),
      h('td', null, when(r.started)),
      h('td', null, r.winner || ''),
      h('td', null, r.session ? `${r.session}${r.turn ? ' #' + r.turn : ''}` : ''))))));
}

async function showRuns() {
  const box = h('section', { class: 'panel' }, h('h1', null, 'Runs'), h('p', null, 'Loading…'));
  main.append(box);
  try {
    const { runs } = await api('runs');
    box.replaceChildren(h('h1', null, 'Runs'), h('p', { class: 'hint' }, 'Runs of this server, then those of the logs (opened as a replay of their events).'), runsTable(runs));
  } catch (err) {
    failed(err);
  }
}

// ---- one run.
/** @param {string} id */
async function showRun(id) {
  /** @type {any} */
  let meta;
  try {
    meta = await api('run?id=' + encodeURIComponent(id));
  } catch (err) {
    failed(err);
    return;
  }
  const run = newRun();
  const view = buildRunView(id, meta, run);
  main.append(view.root);
  /** @type {any[]} */
  let pending = [];
  const dirty = new Set();
  let frame = 0;
  const flush = () => {
    frame = 0;
    view.render(dirty);
    if (bench) {
      const now = Date.now();
      for (const rec of pending) {
        const at = Date.parse(rec.time);
        W.__mgLatency.push([at, now - at]);
      }
    }
    pending = [];
    dirty.clear();
  };
  const stream = follow({
    url: 'api/events?run=' + encodeURIComponent(id),
    token,
    onEvent: (rec) => {
      for (const k of apply(run, rec)) dirty.add(k);
      if (bench) pending.push(rec);
      if (!frame) frame = requestAnimationFrame(flush);
    },
    onState: (s, detail) => {
      view.setStream(s, detail);
      if (bench && s === 'live' && !W.__mgLive) W.__mgLive = Date.now();
      if (s === 'ended' && bench) W.__mgEnded = true;
    },
    onUnauthorized: showLogin,
  });
  const tick = setInterval(() => view.tick(), 1000);
  leave = () => {
    view.stop();
    stream.stop();
    clearInterval(tick);
    if (frame) cancelAnimationFrame(frame);
  };
}

/**
 * buildRunView lays out a run's page and returns how to redraw it.
 * @param {string} id
 * @param {any} meta
 * @param {ReturnType<typeof newRun>} run
 */
function buildRunView(id, meta, run) {
  const title = h('h1', { class: 'question' }, meta.question || '');
  const chips = h('div', { class: 'chips', role: 'status', 'aria-live': 'polite' });
  const streamChip = h('span', { class: 'chip', id: 'stream-state' }, meta.live ? 'connecting' : 'replay');
  const deadline = h('span', { class: 'chip', id: 'deadline' });
  const totals = h('span', { class: 'chip', id: 'totals' });
  const cancel = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', id: 'cancel', class: 'danger', hidden: !meta.cancellable,
    onclick: async () => {
      cancel.disabled = true;
      try {
        await api('cancel', { run: id });
        toast('Cancelling the run…');
      } catch (err) {
        cancel.disabled = false;
        failed(err);
      }
    } }, 'Cancel run'));
  const head = h('section', { class: 'runhead panel' }, title,
    h('div', { class: 'row' }, chips, streamChip, deadline, totals, cancel),
    h('p', { class: 'muted small' }, [meta.config ? `config ${meta.config}` : '', meta.session ? ` · session ${meta.session}${meta.turn ? ' #' + meta.turn : ''}` : '',
      meta.log ? ` · log ${meta.log}` : ''].join('')));

  const finalBox = h('section', { class: 'final panel', id: 'final', hidden: true, tabindex: -1, 'aria-labelledby': 'final-title' });
  const cards = h('section', { class: 'cards', id: 'cards', 'aria-label': 'Agents' });
  const answers = h('ol', { class: 'answers', id: 'answers' });
  const votes = h('ol', { class: 'votes', id: 'votes' });
  const timeline = h('ol', { class: 'timeline', id: 'timeline' });
  const files = h('div', { id: 'files' });
  const diffs = h('div', { id: 'diffs' });
  const follow = h('section', { class: 'panel', id: 'followup', hidden: true });
  const body = h('div', { class: 'columns' },
    h('section', { class: 'panel', 'aria-labelledby': 'answers-title' }, h('h2', { id: 'answers-title' }, 'Answers'), answers),
    h('section', { class: 'panel', 'aria-labelledby': 'votes-title' }, h('h2', { id: 'votes-title' }, 'Votes'), votes));
  const more = h('div', { class: 'columns' },
    h('section', { class: 'panel', 'aria-labelledby': 'timeline-title' }, h('h2', { id: 'timeline-title' }, 'Timeline'), timeline),
    h('section', { class: 'panel', 'aria-labelledby': 'files-title' }, h('h2', { id: 'files-title' }, 'Files (read-only)'),
      h('p', { class: 'hint' }, 'The run\'s log directory: each agent\'s workspace with each answer, the winner\'s final workspace and what it changed.'), files, diffs));
  const root = h('div', { class: 'run' }, head, finalBox, cards, body, more, follow);

  // Arrow keys move between the cards, f goes to the final answer.
  cards.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const list = [...cards.querySelectorAll('.card')];
    const i = list.indexOf(/** @type {Element} */ (document.activeElement));
    if (i < 0) return;
    e.preventDefault();
    /** @type {HTMLElement} */ (list[(i + (e.key === 'ArrowRight' ? 1 : list.length - 1)) % list.length]).focus();
  });
  const onKey = (/** @type {KeyboardEvent} */ e) => {
    const t = /** @type {HTMLElement} */ (e.target);
    if (e.key === 'f' && !e.ctrlKey && !e.metaKey && !e.altKey && !/INPUT|TEXTAREA|SELECT/.test(t.tagName) && !finalBox.hidden) finalBox.focus();
  };
  document.addEventListener('keydown', onKey);

  /** @type {Record<string, {root: HTMLElement, status: HTMLElement, stats: HTMLElement, vote: HTMLElement, text: HTMLElement, tools: HTMLElement, model: HTMLElement, toolsShown: number, textShown: string, stick: boolean}>} */
  const cardEls = {};
  let answersShown = 0;
  let timelineShown = 0;
  let streamState = '';
  let filesLoaded = false;

  /** @param {string} aid */
  const card = (aid) => {
    let c = cardEls[aid];
    if (c) return c;
    const status = h('span', { class: 'status' });
    const model = h('p', { class: 'model muted small' });
    const stats = h('p', { class: 'stats small' });
    const vote = h('p', { class: 'vote small', hidden: true });
    const text = h('pre', { class: 'stream', 'aria-label': `${aid}'s streamed text` });
    const tools = h('ul', { class: 'tools small' });
    const el = h('article', { class: 'card', tabindex: 0, 'data-agent': aid, 'aria-label': `agent ${aid}` },
      h('header', null, h('h3', null, aid), status), model, stats, vote, text, tools);
    cards.append(el);
    c = { root: el, status, stats, vote, text, tools, model, toolsShown: 0, textShown: '', stick: true };
    cardEls[aid] = c;
    return c;
  };

  const renderAgent = (/** @type {string} */ aid) => {
    const a = run.agents[aid];
    if (!a) return;
    const c = card(aid);
    c.status.textContent = a.status;
    c.status.className = 'status st-' + a.status.replace(/[^a-z]/g, '');
    c.root.classList.toggle('winner', run.winner === aid);
    c.model.textContent = [a.model, a.backend ? `(${a.backend})` : '', a.simulated ? '· simulated' : ''].filter(Boolean).join(' ');
    c.stats.textContent = `${tokens(a.inTok)} in · ${tokens(a.outTok)} out${a.cost ? ' · ' + dollars(a.cost) : ''} · ${a.answers} answer${a.answers === 1 ? '' : 's'}` +
      (a.restarts ? ` · ${a.restarts} restart${a.restarts === 1 ? '' : 's'}` : '') + (a.error ? ` · ${a.error}` : '');
    if (a.vote) {
      c.vote.hidden = false;
      c.vote.textContent = `voted for ${a.vote.target}${a.vote.label ? ' (' + a.vote.label + ')' : ''}: ${a.vote.reason}`;
    } else c.vote.hidden = true;
    const shown = a.text.length > 4000 ? a.text.slice(-4000) : a.text;
    if (shown !== c.textShown) {
      // Appended text is added as a node (the common case: a token); a
      // new turn or a cut tail replaces the whole.
      if (c.textShown && shown.startsWith(c.textShown)) c.text.append(shown.slice(c.textShown.length));
      else c.text.textContent = shown;
      c.textShown = shown;
      if (c.stick) c.text.scrollTop = 1e9; // clamped to the end, without reading the layout
    }
    if (a.tools.length < c.toolsShown) {
      c.tools.replaceChildren();
      c.toolsShown = 0;
    }
    for (; c.toolsShown < a.tools.length; c.toolsShown++) {
      const t = a.tools[c.toolsShown];
      c.tools.append(h('li', { class: t.error ? 'err' : '' },
        h('details', null, h('summary', null, `${t.name}${t.error ? ' (failed)' : ''}${t.ms ? ` · ${Math.round(t.ms)} ms` : ''}`),
          h('pre', null, 'args: ' + t.args + '\nresult: ' + t.result))));
    }
  };

  const renderAnswers = () => {
    for (; answersShown < run.answers.length; answersShown++) {
      const a = run.answers[answersShown];
      const body = h('div', { class: 'md' });
      toDOM(markdown(a.text), body);
      answers.append(h('li', { 'data-label': a.label },
        h('details', { open: answersShown === run.answers.length - 1 || undefined },
          h('summary', null, h('strong', null, a.label), ` by ${a.agent}`, a.anon ? ` (shown as ${a.anon})` : '', run.attempt > 1 ? ` · attempt ${a.attempt}` : ''),
          body)));
    }
    // Older answers fold away as newer ones come.
    const items = answers.querySelectorAll('details');
    items.forEach((d, i) => { if (i < items.length - 1 && !d.dataset.touched) d.open = false; });
  };

  const renderVotes = () => {
    votes.replaceChildren(...run.votes.map((v) => {
      const stale = v.attempt < run.attempt || v.epoch < run.epoch;
      return h('li', { class: stale ? 'stale' : '' },
        h('strong', null, v.agent), ' → ', h('strong', null, v.target), v.targetAnswer ? ` (${v.targetAnswer})` : '',
        stale ? h('span', { class: 'muted' }, ' superseded by a newer answer') : '',
        h('div', { class: 'reason' }, v.reason));
    }));
    if (!run.votes.length) votes.replaceChildren(h('li', { class: 'muted none' }, 'No votes yet.'));
  };

  const t0 = () => Date.parse(run.startTime || meta.started);
  const renderTimeline = () => {
    for (; timelineShown < run.timeline.length; timelineShown++) {
      const m = run.timeline[timelineShown];
      const dt = ((Date.parse(m.time) - t0()) / 1000).toFixed(2);
      timeline.append(h('li', { class: 'ev-' + m.type }, h('span', { class: 'at' }, `+${dt}s`), ' ', m.text));
    }
  };

  let finalRendered = '';
  const renderFinal = () => {
    if (!run.winner && !run.final) {
      finalBox.hidden = true;
      finalRendered = '';
      return;
    }
    finalBox.hidden = false;
    const key = `${run.winner}|${run.finalDone}|${run.final.length}|${run.status}`;
    if (key === finalRendered) return;
    finalRendered = key;
    const tally = Object.entries(run.tally).map(([k, v]) => `${k} ${v}`).join(', ');
    const body = h('div', { class: 'md', id: 'final-answer' });
    if (run.finalDone) toDOM(markdown(run.final), body);
    else body.append(h('pre', { class: 'stream' }, run.final || 'The winner is writing the final answer…'));
    finalBox.replaceChildren(
      h('h2', { id: 'final-title' }, run.winner ? `Winner: ${run.winner}` : 'Final answer', run.winnerLabel ? ` (${run.winnerLabel})` : ''),
      h('p', { class: 'muted small' }, [run.how, tally ? `votes: ${tally}` : '', run.fallback ? `the stored answer stands: ${run.fallback}` : ''].filter(Boolean).join(' · ')),
      body);
  };

  const renderHead = () => {
    if (run.question && title.textContent !== run.question) title.textContent = run.question;
    const status = run.status || (run.phase === 'starting' ? (meta.live ? 'starting' : meta.status) : 'running');
    chips.replaceChildren(h('span', { class: 'chip s-' + status, id: 'run-status' }, status),
      run.phase !== 'done' && run.phase !== 'starting' ? h('span', { class: 'chip' }, run.phase) : '',
      run.attempt > 1 ? h('span', { class: 'chip' }, `attempt ${run.attempt}`) : '',
      h('span', { class: 'chip' }, `${run.answers.length} answers`),
      run.lost ? h('span', { class: 'chip', title: 'streamed text dropped for a slow page' }, `${run.lost} deltas skipped`) : '');
    totals.textContent = `${tokens(run.totals.inTok)} in · ${tokens(run.totals.outTok)} out${run.totals.cost ? ' · ' + dollars(run.totals.cost) : ''}`;
    const running = meta.cancellable && !run.status;
    cancel.hidden = !running;
    if (run.status) deadline.hidden = true;
    if (!run.answers.length && !answers.firstChild) answers.append(h('li', { class: 'muted none' }, 'No answers yet.'));
    if (run.answers.length) answers.querySelector('.none')?.remove();
    if (run.status && meta.session && follow.hidden) showFollowUp();
    if (run.status && !filesLoaded) {
      loadFiles('/');
      loadDiffs();
    }
    if (run.error) error.textContent = run.error;
  };
  const error = h('p', { class: 'error', role: 'alert' });
  head.append(error);

  const showFollowUp = () => {
    const q = /** @type {HTMLTextAreaElement} */ (h('textarea', { id: 'followup-question', rows: 2, required: true, placeholder: 'A follow-up question; the team sees this conversation' }));
    const b = /** @type {HTMLButtonElement} */ (h('button', { type: 'submit' }, 'Ask'));
    const f = /** @type {HTMLFormElement} */ (h('form', { onsubmit: async (/** @type {Event} */ e) => {
      e.preventDefault();
      b.disabled = true;
      try {
        const r = await api('runs', { question: q.value, session: meta.session });
        location.hash = '#/run/' + encodeURIComponent(r.id);
      } catch (err) {
        failed(err);
      } finally {
        b.disabled = false;
      }
    } }, h('label', { for: 'followup-question' }, 'Follow-up in this session'), q, b));
    q.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) f.requestSubmit();
    });
    follow.replaceChildren(h('h2', null, 'Ask a follow-up'), f);
    follow.hidden = false;
  };

  /** @param {string} path */
  const loadFiles = async (path) => {
    filesLoaded = true;
    try {
      const d = await api(`files?run=${encodeURIComponent(id)}&path=${encodeURIComponent(path)}`);
      const parts = path.split('/').filter(Boolean);
      const crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Folder' },
        h('button', { type: 'button', class: 'link', onclick: () => loadFiles('/') }, 'log'),
        parts.map((p, i) => ['/', h('button', { type: 'button', class: 'link', onclick: () => loadFiles('/' + parts.slice(0, i + 1).join('/')) }, p)]));
      if (d.dir) {
        files.replaceChildren(crumbs, h('ul', { class: 'entries' }, d.entries.map((/** @type {any} */ e) => h('li', null,
          h('button', { type: 'button', class: 'link', onclick: () => loadFiles((path === '/' ? '' : path) + '/' + e.name) }, e.name + (e.dir ? '/' : '')),
          e.dir ? '' : h('span', { class: 'muted small' }, ` ${e.size} B`)))));
      } else {
        const ext = (/\.([A-Za-z0-9]+)$/.exec(path) || ['', ''])[1];
        const pre = h('pre', { class: 'file' });
        const code = h('code', null);
        if (d.text !== undefined) toDOM(ext ? highlight(d.text, ext) : [d.text], code);
        else code.textContent = `(${d.size} bytes, not text)`;
        pre.append(code);
        files.replaceChildren(crumbs, d.truncated ? h('p', { class: 'muted small' }, 'Only the first 256 KiB are shown.') : '', pre);
      }
    } catch (err) {
      files.replaceChildren(h('p', { class: 'muted' }, String(err instanceof Error ? err.message : err)));
      if (err instanceof Unauthorized) failed(err);
    }
  };
  files.append(h('button', { type: 'button', onclick: () => loadFiles('/') }, 'Browse the log directory'));
  // What the winner changed in write context paths: each file's original
  // (kept in the log directory) against what it holds now.
  const loadDiffs = async () => {
    try {
      const d = await api(`diff?run=${encodeURIComponent(id)}`);
      if (!d.files.length) return;
      diffs.replaceChildren(h('h3', null, 'Changes to context paths'),
        ...d.files.map((/** @type {any} */ f) => h('div', { class: 'diff' },
          h('p', null, h('strong', null, f.change), ' ', h('code', null, f.path)),
          f.diff ? h('pre', { class: 'file' }, f.diff.split('\n').filter(Boolean).map((/** @type {string} */ l) =>
            h('span', { class: l[0] === '+' ? 'diff-add' : l[0] === '-' ? 'diff-del' : l[0] === '…' ? 'diff-gap' : '' }, l + '\n'))) : '',
          f.note ? h('p', { class: 'muted small' }, f.note) : '')));
    } catch (err) {
      if (err instanceof Unauthorized) failed(err);
    }
  };
  // An answer the user opened or closed stays so; the others fold away as
  // newer ones come. (A click on a summary, by mouse or Enter/Space; the
  // toggle event would also count the page's own folding.)
  answers.addEventListener('click', (e) => {
    const d = /** @type {HTMLElement} */ (e.target).closest('details');
    if (d) d.dataset.touched = '1';
  });

  renderHead();
  renderVotes();
  queueMicrotask(() => result.tick());
  const result = {
    root,
    /** @param {Set<string>} dirty */
    render(dirty) {
      const ids = [...dirty].filter((k) => k.startsWith('agent:')).map((k) => k.slice(6));
      // Read every card's scroll position first, then write: reading after
      // a write would lay the page out once per card.
      for (const aid of ids) {
        const c = cardEls[aid];
        if (c) c.stick = c.text.scrollTop + c.text.clientHeight >= c.text.scrollHeight - 8;
      }
      for (const aid of ids) renderAgent(aid);
      if (dirty.has('answers')) renderAnswers();
      if (dirty.has('votes')) renderVotes();
      if (dirty.has('timeline')) renderTimeline();
      if (dirty.has('final')) renderFinal();
      if (dirty.has('head') || dirty.has('answers') || dirty.has('final')) renderHead();
    },
    /** @param {string} s @param {string} [detail] */
    setStream(s, detail) {
      streamState = s;
      streamChip.textContent = meta.live ? (s === 'ended' ? 'stream ended' : s) : (s === 'ended' ? 'replayed from the log' : 'replay: ' + s);
      if (s === 'error' && detail) error.textContent = detail;
    },
    tick() {
      if (!meta.deadline || run.status) {
        deadline.hidden = !meta.deadline || !!run.status;
        return;
      }
      const left = Math.max(0, Math.round((Date.parse(meta.deadline) - Date.now()) / 1000));
      deadline.hidden = false;
      deadline.textContent = `deadline in ${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
      void streamState;
    },
    stop() {
      document.removeEventListener('keydown', onKey);
    },
  };
  return result;
}

document.getElementById('theme')?.addEventListener('click', () => {
  const cur = document.documentElement.dataset.theme || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  localStorage.setItem('massgen-theme', cur === 'dark' ? 'light' : 'dark');
  applyTheme();
});
addEventListener('hashchange', route);
route();
