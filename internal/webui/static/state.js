// @ts-check
// The state of one run, built from its events (event schema 2, docs/events.md)
// by apply(). Pure: no DOM, no network, so node's test runner checks it
// (tests/webui/unit.test.mjs) and a replay of a log builds exactly what the
// live stream built.

/** How much streamed text a card keeps (the tail). */
export const MAX_TEXT = 20000;

/**
 * @typedef {{id: string, model: string, backend: string, simulated: boolean,
 *   status: string, text: string, reasoning: string, tools: Array<{name: string, args: string, result: string, error: boolean, ms: number}>,
 *   inTok: number, outTok: number, cost: number, answers: number, restarts: number,
 *   vote: null | {target: string, label: string, reason: string}, error: string, turns: number}} Agent
 * @typedef {{label: string, anon: string, agent: string, text: string, time: string, epoch: number, attempt: number}} Answer
 * @typedef {{agent: string, target: string, targetLabel: string, targetAnswer: string, reason: string, time: string, epoch: number, attempt: number}} Vote
 * @typedef {{seq: number, time: string, type: string, agent: string, text: string}} Moment
 */

export function newRun() {
  return {
    seq: 0,
    question: '',
    /** @type {string[]} */ order: [],
    /** @type {Record<string, Agent>} */ agents: {},
    /** @type {Answer[]} */ answers: [],
    /** @type {Vote[]} */ votes: [],
    /** @type {Moment[]} */ timeline: [],
    attempt: 1,
    epoch: 0,
    phase: 'starting', // coordinating | presenting | evaluating | done
    winner: '',
    winnerLabel: '',
    /** @type {Record<string, number>} */ tally: {},
    how: '',
    final: '',
    finalDone: false,
    finalReason: '',
    status: '', // the run's end: completed | timeout | failed | interrupted
    error: '',
    fallback: '',
    startTime: '',
    endTime: '',
    lost: 0, // streamed events missing from the sequence (dropped for a slow page)
    totals: { inTok: 0, outTok: 0, cost: 0 },
  };
}

/** @typedef {ReturnType<typeof newRun>} Run */

/** @param {Run} run @param {string} id */
function agent(run, id) {
  let a = run.agents[id];
  if (!a) {
    a = {
      id, model: '', backend: '', simulated: false, status: 'idle', text: '', reasoning: '', tools: [],
      inTok: 0, outTok: 0, cost: 0, answers: 0, restarts: 0, vote: null, error: '', turns: 0,
    };
    run.agents[id] = a;
    run.order.push(id);
  }
  return a;
}

/** @param {string} s */
function tail(s) {
  return s.length > MAX_TEXT ? s.slice(s.length - MAX_TEXT) : s;
}

/** Types that are only streamed text or bookkeeping: not on the timeline. */
const QUIET = new Set(['text_delta', 'reasoning_delta', 'final_delta', 'tool_progress', 'turn_ended', 'model_called']);

/**
 * apply folds one event record into run and returns what changed, as a set of
 * keys the display redraws: "agent:<id>", "answers", "votes", "timeline",
 * "final", "head".
 * @param {Run} run
 * @param {any} r an event record
 * @returns {Set<string>}
 */
export function apply(run, r) {
  const dirty = new Set();
  if (!r || typeof r.seq !== 'number') return dirty;
  if (r.seq <= run.seq) return dirty; // seen already (a resumed stream never repeats, a replay might)
  if (run.seq > 0 && r.seq > run.seq + 1) run.lost += r.seq - run.seq - 1;
  run.seq = r.seq;
  if (r.attempt) run.attempt = r.attempt;
  if (typeof r.epoch === 'number') run.epoch = r.epoch;
  const id = r.agent || '';
  const a = id ? agent(run, id) : null;
  if (a) dirty.add('agent:' + id);
  switch (r.type) {
    case 'run_started':
      run.question = r.text || '';
      run.startTime = r.time;
      run.phase = 'coordinating';
      for (const t of r.team || []) {
        const x = agent(run, t.id);
        x.model = t.model || '';
        x.backend = t.backend || '';
        x.simulated = !!t.simulated;
        dirty.add('agent:' + t.id);
      }
      for (const aid of r.agents || []) agent(run, aid);
      dirty.add('head');
      break;
    case 'turn_started':
      if (a) {
        a.status = 'working';
        a.text = '';
        a.reasoning = '';
        a.tools = [];
        a.turns++;
      }
      break;
    case 'text_delta':
      if (a) {
        a.text = tail(a.text + (r.text || ''));
        if (a.status === 'working') a.status = 'streaming';
      }
      break;
    case 'reasoning_delta':
      if (a) a.reasoning = tail(a.reasoning + (r.text || ''));
      break;
    case 'tool_called':
      if (a) a.tools.push({ name: r.text || '', args: r.args || '', result: r.result || '', error: !!r.is_error, ms: r.duration_ms || 0 });
      break;
    case 'tool_progress':
      if (a) a.status = 'tool: ' + (r.text || '');
      break;
    case 'new_answer':
      if (a) {
        a.answers++;
        a.status = 'answered';
      }
      run.answers.push({ label: r.label || '', anon: r.anon_label || '', agent: id, text: r.text || '', time: r.time, epoch: r.epoch || 0, attempt: r.attempt || 1 });
      // A new answer clears every vote of the attempt.
      for (const x of Object.values(run.agents)) {
        if (x.vote) {
          x.vote = null;
          dirty.add('agent:' + x.id);
        }
      }
      run.tally = {};
      dirty.add('answers').add('votes');
      break;
    case 'vote_cast':
      if (a) {
        a.status = 'voted';
        a.vote = { target: r.target || '', label: r.target_answer || r.target_label || '', reason: r.reason || '' };
      }
      run.votes.push({ agent: id, target: r.target || '', targetLabel: r.target_label || '', targetAnswer: r.target_answer || '',
        reason: r.reason || '', time: r.time, epoch: r.epoch || 0, attempt: r.attempt || 1 });
      run.tally[r.target] = (run.tally[r.target] || 0) + 1;
      dirty.add('votes');
      break;
    case 'action_rejected':
      if (a) a.status = 'rejected, retrying';
      break;
    case 'restart':
      if (a) {
        a.restarts++;
        a.status = 'restarted';
      }
      break;
    case 'turn_failed':
      if (a) {
        a.status = 'error';
        a.error = r.error || '';
      }
      break;
    case 'turn_ended':
      if (a) {
        a.inTok += r.input_tokens || 0;
        a.outTok += r.output_tokens || 0;
        a.cost += r.cost_usd || 0;
      }
      run.totals.inTok += r.input_tokens || 0;
      run.totals.outTok += r.output_tokens || 0;
      run.totals.cost += r.cost_usd || 0;
      dirty.add('head');
      break;
    case 'agent_failed':
      if (a) {
        a.status = 'failed';
        a.error = r.error || r.reason || '';
      }
      break;
    case 'timeout':
      if (a) a.status = 'timed out';
      else dirty.add('head');
      break;
    case 'budget_exceeded':
      dirty.add('head');
      break;
    case 'winner_selected':
      run.winner = id;
      run.winnerLabel = r.label || '';
      run.tally = r.votes || {};
      run.how = r.reason || '';
      run.phase = 'presenting';
      dirty.add('votes').add('final').add('head');
      for (const x of run.order) dirty.add('agent:' + x);
      break;
    case 'final_started':
      if (a) a.status = 'presenting';
      run.final = '';
      run.finalDone = false;
      dirty.add('final');
      break;
    case 'final_delta':
      run.final = run.final + (r.text || '');
      dirty.add('final');
      break;
    case 'final_answer':
      run.final = r.text || '';
      run.finalDone = true;
      run.finalReason = r.reason || '';
      if (a) {
        a.status = 'done';
        a.inTok += r.input_tokens || 0;
        a.outTok += r.output_tokens || 0;
        a.cost += r.cost_usd || 0;
      }
      run.totals.inTok += r.input_tokens || 0;
      run.totals.outTok += r.output_tokens || 0;
      run.totals.cost += r.cost_usd || 0;
      dirty.add('final').add('head');
      break;
    case 'post_evaluation':
      run.phase = 'evaluating';
      if (a) {
        a.inTok += r.input_tokens || 0;
        a.outTok += r.output_tokens || 0;
        a.cost += r.cost_usd || 0;
      }
      run.totals.inTok += r.input_tokens || 0;
      run.totals.outTok += r.output_tokens || 0;
      run.totals.cost += r.cost_usd || 0;
      dirty.add('head');
      break;
    case 'orchestration_restart':
      // Another attempt: answers and votes of the last one stay listed,
      // marked with their attempt; the winner is chosen again.
      run.winner = '';
      run.winnerLabel = '';
      run.final = '';
      run.finalDone = false;
      run.tally = {};
      run.phase = 'coordinating';
      for (const x of Object.values(run.agents)) x.vote = null;
      dirty.add('final').add('votes').add('head');
      for (const x of run.order) dirty.add('agent:' + x);
      break;
    case 'run_finished':
      run.status = r.status || '';
      run.error = r.error || '';
      run.fallback = r.fallback || '';
      run.endTime = r.time;
      run.phase = 'done';
      if (r.agent && !run.winner) run.winner = r.agent;
      for (const x of Object.values(run.agents)) {
        if (run.status !== 'completed' && x.status !== 'failed') x.status = run.status || 'ended';
        else if (x.status !== 'failed') x.status = x.id === run.winner ? 'winner' : 'done';
        dirty.add('agent:' + x.id);
      }
      dirty.add('head').add('final');
      break;
  }
  if (!QUIET.has(r.type)) {
    run.timeline.push({ seq: r.seq, time: r.time, type: r.type, agent: id, text: describe(r) });
    dirty.add('timeline');
  }
  return dirty;
}

/** @param {string} s @param {number} n */
function clip(s, n) {
  s = (s || '').replace(/\s+/g, ' ').trim();
  return s.length > n ? s.slice(0, n - 1) + '…' : s;
}

/**
 * describe is one event in words, for the timeline.
 * @param {any} r
 */
export function describe(r) {
  const who = r.agent || '';
  switch (r.type) {
    case 'run_started': {
      const n = (r.agents || []).length;
      return `run started: ${n} agent${n === 1 ? '' : 's'}`;
    }
    case 'turn_started': return `${who} started a turn` + (r.labels && r.labels.length ? ` seeing ${r.labels.join(', ')}` : '') + (r.reason ? ` (${r.reason})` : '');
    case 'tool_called': return `${who} called ${r.text}${r.is_error ? ' (failed)' : ''}`;
    case 'new_answer': return `${who} answered: ${r.label}${r.anon_label ? ` (shown as ${r.anon_label})` : ''}`;
    case 'vote_cast': return `${who} voted for ${r.target}${r.target_answer ? ` (${r.target_answer})` : ''}: ${clip(r.reason, 120)}`;
    case 'action_rejected': return `${who}: action rejected: ${clip(r.reason, 120)}`;
    case 'warning': return (r.where ? `${r.where}: ` : '') + `warning: ${clip(r.text, 200)}`;
    case 'restart': return `${who} restarted: ${clip(r.reason, 120)}`;
    case 'turn_failed': return `${who}: turn failed: ${clip(r.error, 160)}`;
    case 'agent_failed': return `${who} left the run: ${clip(r.error || r.reason, 160)}`;
    case 'timeout': return who ? `${who}: turn timed out` : `run deadline passed: ${clip(r.reason, 120)}`;
    case 'budget_exceeded': return `budget exceeded: ${clip(r.reason, 120)}`;
    case 'winner_selected': return `winner: ${who} (${r.label || ''}; ${clip(r.reason, 80)})`;
    case 'final_started': return `${who} writes the final answer`;
    case 'final_answer': return `final answer (${r.reason || 'presentation'})`;
    case 'post_evaluation': return `${who} checked the final answer: ${r.text}${r.reason ? ': ' + clip(r.reason, 100) : ''}`;
    case 'orchestration_restart': return `another attempt: ${clip(r.reason, 120)}`;
    case 'run_finished': return `run ${r.status}${r.error ? ': ' + clip(r.error, 160) : ''}`;
    default: return r.type;
  }
}
