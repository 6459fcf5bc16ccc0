// massgen serve, checked with the AI SDK's OpenAI Responses model and the
// OpenAI Agents SDK, each in its default settings, through a tool round
// trip: the team's winner calls the client's get_weather tool, the client
// runs it and sends the result back, and the team answers with it.
// run.sh starts `massgen serve` with a config per test (one agent on a
// simulator scripted by scenario.yaml) and runs `node --test` here with
// MASSGEN_BASE_URL (…/v1) and MASSGEN_API_KEY set.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText, tool as aiTool, stepCountIs } from 'ai';
import OpenAI from 'openai';
import { Agent, run, tool, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';

const baseURL = process.env.MASSGEN_BASE_URL;
const apiKey = process.env.MASSGEN_API_KEY ?? 'none';
assert.ok(baseURL, 'set MASSGEN_BASE_URL, e.g. http://127.0.0.1:4000/v1');
const question = 'Weather in Paris?';
const result = '18°C, sunny';

before(async () => {
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

test('AI SDK: Responses model, default mode, streamed multi-step tool loop', async () => {
  // openai(model) is the Responses API model; by default it stores
  // responses and sends earlier items back as item_reference.
  const openai = createOpenAI({ baseURL, apiKey });
  const calls = [];
  const r = streamText({
    model: openai('massgen/weather-ai-sdk'),
    prompt: question,
    tools: {
      get_weather: aiTool({
        description: 'Current weather for a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          calls.push(city);
          return result;
        },
      }),
    },
    stopWhen: stepCountIs(4),
    maxRetries: 0,
  });
  let text = '';
  let reasoning = '';
  for await (const part of r.fullStream) {
    if (part.type === 'text-delta') text += part.text;
    if (part.type === 'reasoning-delta') reasoning += part.text;
    if (part.type === 'error') throw part.error;
  }
  const steps = await r.steps;
  assert.deepEqual(calls, ['Paris']);
  assert.equal(steps.length, 2, `steps: ${steps.map((s) => s.finishReason)}`);
  assert.equal(steps[0].finishReason, 'tool-calls');
  assert.equal(steps[1].finishReason, 'stop');
  assert.ok(text.includes(result), `the answer does not use the tool's result: ${text}`);
  assert.match(reasoning, /winner/);
  // The second step referred to the first response's items.
  const body = steps[1].request.body;
  const input = typeof body === 'string' ? JSON.parse(body).input : body.input;
  assert.ok(input.some((it) => it.type === 'item_reference'), `no item_reference in ${JSON.stringify(input)}`);
});

function weatherAgent(model, calls) {
  setDefaultOpenAIClient(new OpenAI({ baseURL, apiKey, maxRetries: 0 }));
  setTracingDisabled(true); // no traces sent to OpenAI
  return new Agent({
    name: 'Weather',
    instructions: 'Be brief.',
    model,
    tools: [tool({
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        calls.push(city);
        return result;
      },
    })],
  });
}

test('Agents SDK: run with one function tool', async () => {
  const calls = [];
  const r = await run(weatherAgent('massgen/weather-agents-run', calls), question);
  assert.deepEqual(calls, ['Paris']);
  assert.ok(r.finalOutput.includes(result), `final output: ${r.finalOutput}`);
});

test('Agents SDK: streamed run with one function tool', async () => {
  const calls = [];
  const r = await run(weatherAgent('massgen/weather-agents-stream', calls), question, { stream: true });
  let text = '';
  for await (const ev of r.toTextStream()) text += ev;
  await r.completed;
  assert.deepEqual(calls, ['Paris']);
  assert.ok(text.includes(result), `streamed text: ${text}`);
  assert.ok(r.finalOutput.includes(result), `final output: ${r.finalOutput}`);
});
