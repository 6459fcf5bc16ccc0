// massgen mcp, checked with the official MCP TypeScript client
// (@modelcontextprotocol/sdk) over stdio and streamable HTTP. run.sh sets
// MASSGEN_BIN (the binary), HANG_CONFIG (a team whose model requests hang,
// on a `massgen sim serve` started for the test; its directory is the
// server's --config-dir) and SIM_LOG (that simulator's log, one line per
// request with its outcome). Over HTTP the client sends the API key that
// massgen mcp made at its start ($XDG_STATE_HOME/massgen/mcp_api_key).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const bin = process.env.MASSGEN_BIN;
const hangConfig = process.env.HANG_CONFIG;
const simLog = process.env.SIM_LOG;
assert.ok(bin && hangConfig && simLog, 'set MASSGEN_BIN, HANG_CONFIG and SIM_LOG (run.sh does)');
const work = mkdtempSync(join(tmpdir(), 'massgen-mcp-'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// waitFor polls cond every 50 ms, 15 s at most.
async function waitFor(what, cond) {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cancelled = () => (readFileSync(simLog, 'utf8').match(/outcome=cancelled/g) ?? []).length;

async function connectStdio() {
  const client = new Client({ name: 'massgen-npm-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: bin, args: ['mcp', '--config', '@examples/sim_three_agents', '--log-dir', join(work, 'logs'),
      '--config-dir', dirname(hangConfig)],
    cwd: work, stderr: 'inherit',
  }));
  return client;
}

// massgen mcp --http on a free loopback port; resolves once it listens,
// with its URL and the API key it made.
let httpServer;
async function startHTTP() {
  if (!httpServer) {
    const state = join(work, 'state');
    const child = spawn(bin, ['mcp', '--http', '127.0.0.1:0', '--config', '@examples/sim_three_agents', '--no-logs',
      '--config-dir', dirname(hangConfig)],
    { cwd: work, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, XDG_STATE_HOME: state } });
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; process.stderr.write(d.toString().replace(/Bearer \S+/, 'Bearer ***')); });
    await waitFor('massgen mcp --http to listen', () => /listening on http:\/\/\S+\/mcp/.test(stderr));
    const key = readFileSync(join(state, 'massgen', 'mcp_api_key'), 'utf8').trim();
    assert.ok(stderr.includes(`Authorization: Bearer ${key}`), 'the first start does not print the key');
    httpServer = { child, key, url: new URL(stderr.match(/listening on (http:\/\/\S+\/mcp)/)[1]) };
  }
  return httpServer;
}

async function connectHTTP(key) {
  const { url, key: madeKey } = await startHTTP();
  const client = new Client({ name: 'massgen-npm-test', version: '1.0.0' });
  const headers = { Authorization: `Bearer ${key ?? madeKey}` };
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
  return client;
}

test('streamable HTTP: a client without the key, or with another, is refused (401)', async () => {
  const { url } = await startHTTP();
  for (const requestInit of [undefined, { headers: { Authorization: 'Bearer not-the-key' } }]) {
    const client = new Client({ name: 'massgen-npm-test', version: '1.0.0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(url, { requestInit })), /_api_key|401|nauthorized/);
  }
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
  assert.equal(res.status, 401);
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
});

after(async () => {
  if (httpServer) {
    const exited = new Promise((resolve) => httpServer.child.on('exit', resolve));
    httpServer.child.kill('SIGTERM');
    assert.equal(await exited, 0, 'massgen mcp --http did not exit cleanly on SIGTERM');
  }
});

for (const [name, connect] of [['stdio', connectStdio], ['streamable HTTP', () => connectHTTP()]]) {
  test(`${name}: lists the tools`, async () => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      const run = tools.find((t) => t.name === 'massgen_run');
      assert.ok(run, 'no massgen_run');
      assert.deepEqual(run.inputSchema.required, ['question']);
      assert.ok(tools.some((t) => t.name === 'massgen_examples'));
    } finally {
      await client.close();
    }
  });

  test(`${name}: massgen_run answers, with progress`, async () => {
    const client = await connect();
    try {
      const progress = [];
      const res = await client.callTool(
        { name: 'massgen_run', arguments: { question: 'What is the capital of France?' } },
        undefined, { onprogress: (p) => progress.push(p), timeout: 120_000 });
      assert.ok(!res.isError, JSON.stringify(res.content));
      const out = res.structuredContent;
      assert.equal(out.status, 'completed');
      assert.ok(['researcher', 'critic', 'writer'].includes(out.winner), out.winner);
      assert.equal(res.content[0].text, out.final_answer);
      assert.ok(out.final_answer.length > 0);
      if (name === 'stdio') assert.ok(out.log_dir.startsWith(join(work, 'logs')), out.log_dir);
      assert.ok(progress.length > 5, `only ${progress.length} progress notifications`);
      progress.forEach((p, i) => assert.equal(p.progress, i + 1));
      assert.ok(progress.some((p) => p.message.startsWith('winner: ')), 'no progress names the winner');
    } finally {
      await client.close();
    }
  });

  test(`${name}: a config beyond the examples, --config-dir and inline YAML is refused, quoting nothing`, async () => {
    const client = await connect();
    try {
      for (const config of ['no_such_file.yaml', '/proc/self/environ', '../../etc/passwd', hangConfig.replace(/\/[^/]+$/, '/../x.yaml')]) {
        const res = await client.callTool({ name: 'massgen_run', arguments: { question: 'q', config } });
        assert.equal(res.isError, true, config);
        assert.match(res.content[0].text, /is refused.*--allow-config-paths/, config);
        assert.ok(!res.content[0].text.includes('PATH='), res.content[0].text);
      }
      const inline = await client.callTool({ name: 'massgen_run',
        arguments: { question: 'q', config: 'agent: {id: a, backend: {type: sim, mcp_servers: [{name: m, command: touch, args: [x]}]}}\n' } });
      assert.equal(inline.isError, true);
      assert.match(inline.content[0].text, /mcp_servers/);
      const solo = await client.callTool({ name: 'massgen_run', arguments: { question: 'q', config: '{agent: {id: solo, backend: {type: sim}}}' } });
      assert.ok(!solo.isError, JSON.stringify(solo.content));
      assert.equal(solo.structuredContent.winner, 'solo');
    } finally {
      await client.close();
    }
  });

  test(`${name}: aborting the call stops the team's requests`, async () => {
    const client = await connect();
    try {
      const before = cancelled();
      const abort = new AbortController();
      let working = false;
      const call = client.callTool({ name: 'massgen_run', arguments: { question: 'hang', config: basename(hangConfig) } },
        undefined, { signal: abort.signal, onprogress: (p) => { working ||= p.message.includes('working'); } });
      await waitFor('the team to start working', () => working);
      await sleep(200); // the request reaches the simulator
      abort.abort('the user changed their mind');
      await assert.rejects(call);
      // The hanging team has two agents: both requests end cancelled.
      await waitFor('the simulator to see both requests cancelled', () => cancelled() >= before + 2);
    } finally {
      await client.close();
    }
  });
}
