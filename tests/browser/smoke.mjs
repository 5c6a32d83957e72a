// Smoke test of the built site (dist/) in headless Chromium: open the page, read the iteration
// time and throughput it shows, and check them against the CLI on the same preset.
//
// Usage: node tests/browser/smoke.mjs [DIST_DIR] [MADMAX_BIN]
// Needs: playwright-core (npm), Chromium at $CHROMIUM or /usr/bin/chromium, python3.
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';

const dist = process.argv[2] ?? 'dist';
const cli = process.argv[3] ?? 'target/release/madmax';
const shots = 'target/screenshots';
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';

function fail(msg) {
  console.error(`smoke: FAIL: ${msg}`);
  process.exitCode = 1;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function waitForServer(port) {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => { c.end(); resolve(true); });
      c.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the static server did not start');
}

const expected = JSON.parse(
  execFileSync(cli, ['eval', '--json', 'tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json']).toString(),
);

const problems = [];
const port = await freePort();
const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dist], {
  stdio: 'ignore',
});
let browser;
try {
  await waitForServer(port);
  browser = await chromium.launch({
    executablePath,
    // Playwright runs headless with a fresh profile of its own.
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(`http://127.0.0.1:${port}/`)) problems.push(`request leaves the page: ${r.url()}`);
  });
  await page.goto(`http://127.0.0.1:${port}/`);
  const it = page.locator('#iteration-time');
  await it.waitFor({ timeout: 20000 });
  const shownText = (await it.textContent()).trim();
  const shownSeconds = Number(await it.getAttribute('data-value'));
  const shownThroughput = Number(await page.locator('#throughput').getAttribute('data-value'));
  const wantSeconds = expected.iteration_ms / 1000;
  console.log(`smoke: page shows iteration time "${shownText}" (${shownSeconds} s); CLI says ${wantSeconds} s`);
  if (Math.abs(shownSeconds - wantSeconds) > 1e-9 * wantSeconds) fail('iteration time differs from the CLI');
  if (!/^\d+(\.\d+)? (ms|s|min|h)$/.test(shownText)) fail(`iteration time "${shownText}" lacks a unit`);
  if (Math.abs(shownThroughput - expected.throughput) > 1e-9 * expected.throughput) fail('throughput differs from the CLI');
  if ((await page.locator('.crash').count()) > 0) fail('the page shows a crash notice');
  mkdirSync(shots, { recursive: true });
  await page.screenshot({ path: join(shots, 'smoke.png'), fullPage: true });
  for (const p of problems) fail(p);
  if (!process.exitCode) console.log('smoke: ok');
} catch (e) {
  fail(e.message);
  for (const p of problems) fail(p);
} finally {
  if (browser) await browser.close();
  server.kill();
}
