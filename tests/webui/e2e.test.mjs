// massgen's Web UI in a real browser: Playwright (playwright-core) driving
// Debian's Chromium headless against `massgen --web` (run.sh starts it and
// sets MASSGEN_WEB_URL, the address it printed, with its token). The teams
// are the simulated ones of configs/. Screenshots are saved at the key
// moments into a folder this test prints.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const url = process.env.MASSGEN_WEB_URL;
assert.ok(url, 'set MASSGEN_WEB_URL (run.sh does)');
const base = url.slice(0, url.indexOf('#'));
const shots = process.env.MASSGEN_SCREENSHOTS || mkdtempSync(join(tmpdir(), 'massgen-webui-shots-'));
mkdirSync(shots, { recursive: true });
console.log(`screenshots: ${shots}`);

let browser;
before(async () => {
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // As root (CI), Chromium's own sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
});
after(async () => {
  await browser?.close();
});

/** A page at 1280×800 (or as given), signed in through the printed address. */
async function open(opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...opts });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(url);
  await page.waitForSelector('#start-form');
  return page;
}

/** Starts a run from the home page with the keyboard only; returns its id. */
async function startRun(page, config, question) {
  await page.focus('#config');
  await page.selectOption('#config', config);
  await page.keyboard.press('Tab');
  await page.keyboard.type(question);
  await page.keyboard.press('Control+Enter');
  await page.waitForURL(/#\/run\//, { timeout: 30_000 });
  return decodeURIComponent(new URL(page.url()).hash.replace('#/run/', ''));
}

/** What the page shows of a run, to compare two views of it. */
async function shown(page) {
  return page.evaluate(() => ({
    cards: [...document.querySelectorAll('.card')].map((c) => c.getAttribute('data-agent')),
    answers: [...document.querySelectorAll('#answers > li[data-label]')].map((l) => l.getAttribute('data-label')),
    votes: [...document.querySelectorAll('#votes > li:not(.none)')].map((l) => l.textContent),
    timeline: [...document.querySelectorAll('#timeline > li')].map((l) => l.textContent),
    winner: document.querySelector('#final-title')?.textContent || '',
    final: document.querySelector('#final-answer')?.textContent || '',
    status: document.querySelector('#run-status')?.textContent || '',
  }));
}

const runDone = (page) => page.waitForFunction(() => /completed|failed|timeout|interrupted/.test(document.querySelector('#run-status')?.textContent || ''), null, { timeout: 60_000 });

test('a run live: cards stream, votes appear, a reload mid-run shows the same state, the winner and its final answer', async () => {
  const page = await open();
  const id = await startRun(page, 'e2e_team', 'How do I find a value in a sorted slice?');

  // One card per agent, with its model, and streamed text arriving.
  await page.waitForFunction(() => document.querySelectorAll('.card').length === 3);
  await page.waitForFunction(() => [...document.querySelectorAll('.card pre.stream')].some((p) => p.textContent.length > 20), null, { timeout: 20_000 });
  const models = await page.locator('.card .model').allTextContents();
  assert.ok(models.some((m) => m.includes('sim-planner') && m.includes('simulated')), models.join(' | '));
  await page.screenshot({ path: join(shots, '01-streaming.png') });

  // A reload mid-run: the page replays the run from its first event and
  // shows what it showed before, then goes on.
  await page.waitForSelector('#answers > li[data-label]');
  const before = await shown(page);
  assert.equal(before.status, 'running');
  await page.screenshot({ path: join(shots, '01-midrun-answers.png') });
  await page.reload();
  await page.waitForFunction((n) => document.querySelectorAll('#timeline > li').length >= n, before.timeline.length, { timeout: 20_000 });
  const again = await shown(page);
  assert.deepEqual(again.cards, before.cards);
  assert.deepEqual(again.answers.slice(0, before.answers.length), before.answers);
  assert.deepEqual(again.timeline.slice(0, before.timeline.length), before.timeline);

  // Votes with their reasons, then the winner and its final answer as
  // markdown with the code highlighted.
  await page.waitForFunction(() => document.querySelectorAll('#votes > li:not(.muted)').length >= 3, null, { timeout: 30_000 });
  const votes = await page.locator('#votes > li').allTextContents();
  for (const r of ['planner-reason', 'checker-reason', 'writer-reason']) assert.ok(votes.some((v) => v.includes(r)), `${r} in ${votes}`);
  await runDone(page);
  await page.waitForSelector('#final-answer h2');
  const end = await shown(page);
  assert.equal(end.status, 'completed');
  assert.match(end.winner, /Winner: planner/);
  assert.match(end.final, /Binary search/);
  assert.ok(await page.locator('#final-answer pre code .tok-kw').count() > 0, 'the code is highlighted');
  assert.ok(await page.locator('#final-answer li strong').count() > 0, 'lists and bold are rendered');
  assert.equal(await page.locator('.card.winner').getAttribute('data-agent'), 'planner');
  assert.equal(await page.locator('#cancel').isHidden(), true, 'no cancel once the run ended');
  await page.screenshot({ path: join(shots, '02-final.png'), fullPage: true });

  // The same run opened afresh after its end shows the same answers,
  // votes, winner and final answer.
  const page2 = await open();
  await page2.goto(`${base}#/run/${encodeURIComponent(id)}`);
  await runDone(page2);
  await page2.waitForSelector('#final-answer h2');
  const fresh = await shown(page2);
  assert.deepEqual({ ...fresh, timeline: fresh.timeline.length }, { ...end, timeline: end.timeline.length });

  // The log directory, read-only: the event log is there, and a file opens.
  await page.click('#files button');
  await page.waitForSelector('#files .entries');
  const entries = await page.locator('#files .entries li').allTextContents();
  assert.ok(entries.some((e) => e.startsWith('coordination_events.jsonl')), entries.join(' | '));
  await page.locator('#files .entries button', { hasText: 'execution_metadata.yaml' }).click();
  await page.waitForSelector('#files pre.file');

  // A follow-up in the same session: turn 2 sees the first.
  const session = await page.evaluate(() => document.querySelector('.runhead .muted')?.textContent || '');
  assert.match(session, /session session_\S+ #1/);
  await page.fill('#followup-question', 'And if the slice is not sorted?');
  await page.keyboard.press('Control+Enter');
  await page.waitForURL((u) => !u.hash.includes(id), { timeout: 30_000 });
  await runDone(page);
  const turn2 = await page.evaluate(() => document.querySelector('.runhead .muted')?.textContent || '');
  assert.equal(turn2.match(/session (\S+)/)[1], session.match(/session (\S+)/)[1]);
  assert.match(turn2, /#2/);
  await page2.context().close();
  await page.context().close();
});

test('a past run from the logs reopens as a replay of its events', async () => {
  const page = await open();
  await page.click('header nav a[href="#/runs"]');
  await page.waitForSelector('table.runs');
  // The logs' entries have ids log:…; open the newest completed one.
  const href = await page.evaluate(() => [...document.querySelectorAll('table.runs a')].map((a) => a.getAttribute('href')).find((h) => h.includes('log%3A')));
  assert.ok(href, 'a run from the logs is listed');
  await page.goto(base + href);
  await runDone(page);
  await page.waitForFunction(() => /replayed from the log/.test(document.querySelector('#stream-state')?.textContent || ''));
  const s = await shown(page);
  assert.ok(s.answers.length >= 3 && s.votes.length >= 3, JSON.stringify(s));
  await page.context().close();
});

test('the winner\'s changes to a write context path are shown as a diff', async () => {
  const page = await open();
  await startRun(page, 'e2e_patch', 'Add a version comment to main.go.');
  await runDone(page);
  await page.waitForSelector('#diffs .diff-add', { timeout: 20_000 });
  assert.equal(await page.locator('#diffs .diff-del').textContent(), '-package main\n');
  assert.equal(await page.locator('#diffs .diff-add').textContent(), '+package main // v2\n');
  assert.match(await page.locator('#diffs .diff code').textContent(), /project\/main\.go$/);
  await page.locator('#diffs').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, '05-context-diff.png') });
  await page.context().close();
});

test('cancel stops a run mid-way', async () => {
  const page = await open();
  await startRun(page, 'e2e_slow', 'Write a long essay.');
  await page.waitForFunction(() => [...document.querySelectorAll('.card pre.stream')].some((p) => p.textContent.length > 5), null, { timeout: 20_000 });
  await page.focus('#cancel');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#run-status')?.textContent === 'interrupted', null, { timeout: 15_000 });
  assert.equal(await page.locator('#cancel').isHidden(), true);
  await page.screenshot({ path: join(shots, '03-cancelled.png') });
  await page.context().close();
});

test('phone width, dark: one column, nothing wider than the screen', async () => {
  const page = await open({ viewport: { width: 390, height: 844 }, colorScheme: 'dark', isMobile: true, hasTouch: true });
  await page.click('header nav a[href="#/runs"]');
  await page.waitForSelector('table.runs a');
  // The first run of the session that answered the search question.
  await page.locator('table.runs a', { hasText: 'How do I find a value' }).first().click();
  await runDone(page);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `the page is ${wide}px wider than the screen`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(15, 18, 22)', 'dark background');
  await page.screenshot({ path: join(shots, '04-phone-dark.png'), fullPage: true });
  await page.context().close();
});

test('without the token the page asks for one and shows no run', async () => {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await ctx.newPage();
  await page.goto(base);
  await page.waitForSelector('#token');
  assert.equal(await page.locator('.card').count(), 0);
  await ctx.close();
});
