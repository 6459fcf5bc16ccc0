// massgen serve, checked with the official `openai` npm client.
// .ci/run starts `massgen serve --config @examples/sim_three_agents` with an
// API key and runs `node --test` here with MASSGEN_BASE_URL (…/v1) and
// MASSGEN_API_KEY set.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.MASSGEN_BASE_URL;
const apiKey = process.env.MASSGEN_API_KEY ?? 'none';
assert.ok(baseURL, 'set MASSGEN_BASE_URL, e.g. http://127.0.0.1:4000/v1');

const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });
const question = [{ role: 'user', content: 'What is the capital of France?' }];

before(async () => {
  // The server prints its address once it listens; still, wait for /health
  // (bounded: 10 s).
  const health = new URL('../health', baseURL.endsWith('/') ? baseURL : baseURL + '/');
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(health);
      if (r.ok) return;
    } catch {}
    if (i >= 100) throw new Error(`massgen serve is not healthy at ${health}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

test('non-streaming chat completion', async () => {
  const r = await client.chat.completions.create({ model: 'massgen', messages: question });
  assert.equal(r.object, 'chat.completion');
  assert.match(r.id, /^chatcmpl-/);
  const choice = r.choices[0];
  assert.equal(choice.finish_reason, 'stop');
  assert.equal(choice.message.role, 'assistant');
  assert.ok(choice.message.content.length > 0, 'empty content');
  assert.ok(r.usage.total_tokens > 0);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.equal(r.massgen.status, 'completed');
  assert.equal(r.id, `chatcmpl-${r.massgen.run_id}`);
});

test('streaming chat completion with usage', async () => {
  const stream = await client.chat.completions.create({
    model: 'massgen', messages: question, stream: true, stream_options: { include_usage: true },
  });
  let content = '';
  let reasoning = '';
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      content += c.delta.content ?? '';
      reasoning += c.delta.reasoning_content ?? '';
      finish = c.finish_reason ?? finish;
    }
  }
  assert.ok(chunks > 3, `only ${chunks} chunks`);
  assert.ok(content.length > 0, 'empty content');
  assert.equal(finish, 'stop');
  assert.ok(usage && usage.total_tokens > 0, 'no usage chunk');
  assert.match(reasoning, /\[massgen\] winner: /);
});

test('stream helper assembles the final message', async () => {
  const runner = client.chat.completions.stream({ model: 'massgen/sim_single_agent', messages: question });
  const done = await runner.finalChatCompletion();
  assert.ok(done.choices[0].message.content.length > 0);
});

test('models list', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.ok(ids.includes('massgen'));
  assert.ok(ids.includes('massgen/sim_three_agents'));
});

test('errors are OpenAI errors', async () => {
  await assert.rejects(client.chat.completions.create({ model: 'no-such-model', messages: question }),
    (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
  await assert.rejects(client.chat.completions.create({
    model: 'massgen', messages: question,
    tools: [{ type: 'function', function: { name: 'vote', parameters: { type: 'object', properties: {} } } }],
  }), (e) => e instanceof OpenAI.BadRequestError && e.code === 'tool_name_collision');
  const wrong = new OpenAI({ baseURL, apiKey: 'wrong-key', maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (e) => e instanceof OpenAI.AuthenticationError);
});

test('responses API, non-streaming', async () => {
  const r = await client.responses.create({ model: 'massgen', input: 'What is the capital of France?' });
  assert.equal(r.object, 'response');
  assert.equal(r.status, 'completed');
  assert.match(r.id, /^resp_/);
  assert.ok(r.output_text.length > 0, 'empty output_text');
  assert.ok(r.usage.total_tokens > 0);
  assert.equal(r.massgen.status, 'completed');
});

test('responses API, streaming', async () => {
  const stream = await client.responses.create({
    model: 'massgen', stream: true,
    instructions: 'Answer briefly.',
    input: [{ role: 'user', content: 'What is the capital of France?' }],
  });
  let text = '';
  let progress = '';
  let completed = null;
  let seq = -1;
  for await (const ev of stream) {
    assert.equal(ev.sequence_number, seq + 1);
    seq = ev.sequence_number;
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.reasoning_summary_text.delta') progress += ev.delta;
    if (ev.type === 'response.completed') completed = ev.response;
  }
  assert.ok(completed, 'no response.completed');
  assert.ok(text.length > 0, 'no output text');
  assert.equal(completed.output.at(-1).content[0].text, text);
  assert.match(progress, /\[massgen\] winner: /);
});

test('responses API stream helper', async () => {
  const runner = client.responses.stream({ model: 'massgen/sim_single_agent', input: 'What is the capital of France?' });
  const done = await runner.finalResponse();
  assert.ok(done.output_text.length > 0);
});
