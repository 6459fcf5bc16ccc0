// The Web UI's figures (bench.sh starts the server): two runs of a 16-agent
// simulated team, watched by one browser page that records, for every event
// it draws live, the time from the event's stamp in the orchestrator (its "time",
// set when the broker publishes it) to the moment the page has applied it to
// the DOM (before paint); the second run has VIEWERS more viewers reading the
// whole event stream. The server's CPU (utime+stime of its process, from
// /proc) over each run gives the CPU per connected viewer.
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const url = process.env.MASSGEN_WEB_URL;
const pid = process.env.MASSGEN_WEB_PID;
const extra = Number(process.env.VIEWERS || 8);
const base = url.slice(0, url.indexOf('#'));
const token = url.slice(url.indexOf('#token=') + 7);
const TICK = 100; // USER_HZ on Linux

function cpuSeconds() {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICK; // utime, stime
}

/** A viewer that reads the whole event stream, as the page does; the first
 * one also notes when each event that was published after it connected
 * reached it (the server's and the network's share of the time). */
async function viewer(runId, signal, lat, countEvents) {
  let n = 0;
  let events = 0;
  const connected = Date.now();
  const resp = await fetch(`${base}api/events?run=${encodeURIComponent(runId)}&from=1`, { headers: { Authorization: `Bearer ${token}` }, signal });
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return countEvents ? events : n;
    n += value.length;
    if (countEvents) events += value.split('\nid: ').length - 1 + (value.startsWith('id: ') ? 1 : 0);
    if (!lat) continue;
    const now = Date.now();
    buf += value;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const m = /^data: .*"time":"([^"]+)"/.exec(line);
      if (m) {
        const at = Date.parse(m[1]);
        if (at >= connected) lat.push(now - at);
      }
    }
  }
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });

async function oneRun(viewers) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}?bench#token=${token}`);
  await page.waitForSelector('#start-form');
  await page.selectOption('#config', 'bench16');
  await page.fill('#question', 'How should a team of sixteen split a hard problem?');
  const cpu0 = cpuSeconds();
  const t0 = Date.now();
  await page.click('#start');
  await page.waitForURL(/#\/run\//);
  const runId = decodeURIComponent(new URL(page.url()).hash.replace('#/run/', ''));
  const ctl = new AbortController();
  const wire = [];
  const bytes = Promise.all(Array.from({ length: viewers }, (_, i) => viewer(runId, ctl.signal, i === 0 ? wire : null)));
  await page.waitForFunction(() => window.__mgEnded === true, null, { timeout: 300_000 });
  const got = await bytes;
  const secs = (Date.now() - t0) / 1000;
  const cpu = cpuSeconds() - cpu0;
  // Events published before the page's stream was open reach it as a
  // replay: their wait is the page's own start-up, not the stream's.
  const { pairs, live } = await page.evaluate(() => ({ pairs: window.__mgLatency, live: window.__mgLive }));
  const lat = pairs.filter(([at]) => at >= live).map(([, ms]) => ms);
  const agents = await page.locator('.card').count();
  await page.close();
  return { runId, lat, viewers: viewers + 1, agents, events: lat.length, secs, cpu, p50: pct(lat, 50), p99: pct(lat, 99), max: Math.max(...lat), bytes: got[0] || 0,
    wire: wire.length ? `; event→stream reader p50 ${pct(wire, 50)} ms, p99 ${pct(wire, 99)} ms` : '' };
}

// Alternate runs without and with the extra viewers (the run's own CPU
// varies from run to run on a shared machine; medians of three each).
const plain = [];
const loaded = [];
for (let i = 0; i < 3; i++) {
  plain.push(await oneRun(0));
  loaded.push(await oneRun(extra));
}
// Then the cost of streaming alone: as many viewers read a finished run's
// events (kept by the server) at once, with no run going on.
const last = loaded[loaded.length - 1];
const cpu0 = cpuSeconds();
const sizes = await Promise.all(Array.from({ length: extra }, () => viewer(last.runId, undefined, null, true)));
const replayCPU = cpuSeconds() - cpu0;
await browser.close();

const med = (xs) => pct(xs, 50);
for (const r of [...plain, ...loaded]) {
  console.log(`run with ${r.viewers} viewer(s): ${r.agents} agents, ${r.events} events drawn live in ${r.secs.toFixed(1)} s; ` +
    `event→DOM p50 ${r.p50} ms, p99 ${r.p99} ms; server CPU ${r.cpu.toFixed(2)} s (${((100 * r.cpu) / r.secs).toFixed(1)}% of a core)` +
    (r.bytes ? `; each extra viewer read ${(r.bytes / 1024).toFixed(0)} KiB` : '') + r.wire);
}
const all = plain.flatMap((r) => r.lat);
console.log(`event→DOM with one viewer, ${all.length} events over 3 runs: p50 ${pct(all, 50)} ms, p99 ${pct(all, 99)} ms`);
const rate = (rs) => med(rs.map((r) => r.cpu / r.secs));
const per = (rate(loaded) - rate(plain)) / extra;
console.log(`server CPU per connected viewer, live (median of 3 runs with ${extra} extra viewers minus 3 without): ` +
  `${(100 * per).toFixed(2)}% of a core (${(1000 * per).toFixed(1)} ms of CPU per second of run)`);
const events = sizes.reduce((a, b) => a + b, 0) / extra;
console.log(`server CPU per viewer, streaming a finished run's ${events.toFixed(0)} kept events to ${extra} viewers at once: ` +
  `${((1e6 * replayCPU) / extra / events).toFixed(1)} µs per event per viewer (${((1000 * replayCPU) / extra).toFixed(1)} ms per viewer)`);
