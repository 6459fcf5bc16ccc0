// The page's modules without a browser: the run state built from events, the
// markdown and the highlighter, the SSE parser. They are the files the binary
// embeds (internal/webui/static), imported as they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apply, newRun, MAX_TEXT, describe } from '../../internal/webui/static/state.js';
import { markdown, inline, highlight, safeHref, toText } from '../../internal/webui/static/md.js';
import { sseParser } from '../../internal/webui/static/sse.js';

const t = (s) => `2026-01-01T00:00:${String(s).padStart(2, '0')}Z`;

test('a run built from its events: cards, answers, votes cleared by a new answer, winner, final', () => {
  const run = newRun();
  const evs = [
    { seq: 1, type: 'run_started', time: t(0), text: 'q?', agents: ['a', 'b'], team: [{ id: 'a', backend: 'sim', model: 'm-a', simulated: true }, { id: 'b', backend: 'openai', model: 'gpt' }] },
    { seq: 2, type: 'turn_started', time: t(1), agent: 'a' },
    { seq: 3, type: 'text_delta', time: t(1), agent: 'a', text: 'Hel' },
    { seq: 4, type: 'text_delta', time: t(1), agent: 'a', text: 'lo' },
    { seq: 5, type: 'new_answer', time: t(2), agent: 'a', text: 'Hello', label: 'agent1.1', anon_label: 'agent1', epoch: 0 },
    { seq: 6, type: 'vote_cast', time: t(3), agent: 'b', target: 'a', target_answer: 'agent1.1', reason: 'good', epoch: 1 },
    { seq: 8, type: 'new_answer', time: t(4), agent: 'b', text: 'Better', label: 'agent2.1', epoch: 1 },
    { seq: 9, type: 'turn_ended', time: t(4), agent: 'b', input_tokens: 10, output_tokens: 5, cost_usd: 0.5 },
    { seq: 10, type: 'winner_selected', time: t(5), agent: 'b', label: 'agent2.1', votes: { b: 2 }, reason: 'plurality' },
    { seq: 11, type: 'final_delta', time: t(5), agent: 'b', text: '# Fin' },
    { seq: 12, type: 'final_answer', time: t(6), agent: 'b', text: '# Final', reason: 'presentation' },
    { seq: 13, type: 'run_finished', time: t(6), agent: 'b', status: 'completed' },
  ];
  const dirty = evs.map((e) => apply(run, e));
  assert.deepEqual(run.order, ['a', 'b']);
  assert.equal(run.agents.a.model, 'm-a');
  assert.equal(run.agents.a.simulated, true);
  assert.equal(run.agents.a.text, 'Hello');
  assert.equal(run.answers.length, 2);
  assert.equal(run.votes.length, 1);
  assert.equal(run.agents.b.vote, null, 'a new answer clears the votes');
  assert.equal(run.lost, 1, 'seq 7 is missing: one streamed event lost');
  assert.equal(run.winner, 'b');
  assert.equal(run.final, '# Final');
  assert.equal(run.finalDone, true);
  assert.equal(run.status, 'completed');
  assert.equal(run.agents.b.status, 'winner');
  assert.equal(run.totals.cost, 0.5);
  assert.ok(dirty[5].has('votes') && dirty[5].has('agent:b'));
  assert.ok(!run.timeline.some((m) => m.type === 'text_delta'), 'deltas stay off the timeline');
  // A replayed event (seq already seen) changes nothing.
  assert.equal(apply(run, evs[4]).size, 0);
  assert.equal(run.answers.length, 2);
});

test('streamed text keeps its tail', () => {
  const run = newRun();
  apply(run, { seq: 1, type: 'text_delta', agent: 'a', text: 'x'.repeat(MAX_TEXT) });
  apply(run, { seq: 2, type: 'text_delta', agent: 'a', text: 'END' });
  assert.equal(run.agents.a.text.length, MAX_TEXT);
  assert.ok(run.agents.a.text.endsWith('END'));
});

test('markdown: headings, lists, fenced code highlighted, tables, inline', () => {
  const nodes = markdown('# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n\n```go\nfunc f() int { return 1 // c\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
  assert.deepEqual(nodes.map((n) => n[0]), ['h1', 'p', 'ul', 'pre', 'div']);
  const pre = nodes[3];
  const code = pre[2];
  assert.equal(code[1].class, 'lang-go');
  const kinds = code.slice(2).filter((n) => typeof n !== 'string').map((n) => n[1].class);
  assert.ok(kinds.includes('tok-kw') && kinds.includes('tok-num') && kinds.includes('tok-com'), kinds.join(','));
  assert.equal(toText([code]), 'func f() int { return 1 // c\n}');
  assert.deepEqual(inline('a **b** c')[1], ['strong', {}, 'b']);
});

test('markdown never makes markup or script links of an answer', () => {
  const nodes = markdown('<img src=x onerror=alert(1)> [x](javascript:alert(1)) [ok](https://example.com)');
  const flat = JSON.stringify(nodes);
  assert.ok(!flat.includes('"img"'));
  assert.ok(!flat.includes('"href":"javascript'));
  assert.ok(flat.includes('"href":"https://example.com"'));
  assert.equal(safeHref('javascript:alert(1)'), '');
  assert.equal(safeHref(' https://a.b/c '), 'https://a.b/c');
});

test('highlight: python comments, strings, numbers', () => {
  const toks = highlight('x = "a#b"  # note\nreturn 0x1F', 'python');
  const cls = toks.filter((n) => typeof n !== 'string').map((n) => `${n[1].class}:${n[2]}`);
  assert.deepEqual(cls, ['tok-str:"a#b"', 'tok-com:# note', 'tok-kw:return', 'tok-num:0x1F']);
});

test('the SSE parser joins chunks split anywhere', () => {
  const got = [];
  const feed = sseParser((m) => got.push(m));
  const text = 'id: 1\nevent: run_started\ndata: {"seq":1}\n\n: comment\n\nid: 2\r\nevent: end\r\ndata: {}\r\n\r\n';
  for (let i = 0; i < text.length; i += 3) feed(text.slice(i, i + 3));
  assert.deepEqual(got, [{ id: '1', event: 'run_started', data: '{"seq":1}' }, { id: '2', event: 'end', data: '{}' }]);
});

test('a warning reads as the command line prints it, with its config position', () => {
  assert.equal(describe({ type: 'warning', where: 'c.yaml:2:1', text: 'unknown_key: ignored' }), 'c.yaml:2:1: warning: unknown_key: ignored');
  assert.equal(describe({ type: 'warning', text: 'writing logs: disk full' }), 'warning: writing logs: disk full');
  const run = newRun();
  apply(run, { seq: 1, type: 'warning', time: t(0), text: 'writing logs: disk full' });
  apply(run, { seq: 2, type: 'run_started', time: t(0), text: 'q?', agents: ['a'] });
  assert.equal(run.seq, 2);
  assert.equal(run.lost, 0);
  assert.deepEqual(run.order, ['a']);
});
