// Shared helpers of the browser tests: a static server for dist/, headless Chromium through
// playwright-core, the CLI for reference numbers, and failure bookkeeping.
import { chromium } from 'playwright-core';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, existsSync, readFileSync, statSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, extname, normalize } from 'node:path';
import http from 'node:http';
import net from 'node:net';

export const shots = process.env.SHOTS ?? 'target/screenshots';
mkdirSync(shots, { recursive: true });

let failures = 0;
export function check(ok, msg) {
  if (ok) {
    console.log(`  ok: ${msg}`);
  } else {
    failures += 1;
    console.error(`  FAIL: ${msg}`);
  }
}
export function failed() {
  return failures;
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
  for (let i = 0; i < 600; i++) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => { c.end(); resolve(true); });
      c.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the static server did not start');
}

/// Serves `dist` on a free local port; returns { url, stop }.
export async function serve(dist) {
  const port = await freePort();
  const server = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', dist], {
    stdio: 'ignore',
  });
  await waitForServer(port);
  return { url: `http://127.0.0.1:${port}/`, port, stop: () => server.kill() };
}

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml', '.json': 'application/json', '.csv': 'text/csv; charset=utf-8',
};

/// Serves `dist` as a static host that serves precompressed copies does: a file's `.br` copy
/// (or `.gz`) when the browser accepts that encoding, with `Content-Encoding`; returns
/// { url, stop }.
export async function serveCompressed(dist) {
  const server = http.createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^\/+/, '');
    let file = join(dist, path === '' || path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(normalize(dist)) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    const accepts = req.headers['accept-encoding'] ?? '';
    const headers = { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' };
    for (const [enc, ext] of [['br', '.br'], ['gzip', '.gz']]) {
      if (accepts.includes(enc) && existsSync(`${file}${ext}`)) {
        file = `${file}${ext}`;
        headers['Content-Encoding'] = enc;
        break;
      }
    }
    res.writeHead(200, headers).end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, port, stop: () => server.close() };
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    // Playwright runs headless with a fresh profile of its own.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/// A page that records console errors, page errors and any request leaving the local server.
export async function watchedPage(context, base) {
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) {
      page.problems.push(`request leaves the page: ${r.url()}`);
    }
  });
  return page;
}

/// What `madmax` prints for `args` followed by a file holding a scenario object ({model,
/// system, task}); the file's folder is removed afterwards, so runs leave nothing behind.
export function cliOutput(bin, args, scenario) {
  const dir = mkdtempSync(join(tmpdir(), 'madmax-e2e-'));
  try {
    const file = join(dir, 'scenario.json');
    writeFileSync(file, JSON.stringify(scenario));
    return execFileSync(bin, [...args, file]).toString();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/// `madmax eval --json` on a scenario object ({model, system, task}).
export function cli(bin, scenario) {
  return JSON.parse(cliOutput(bin, ['eval', '--json'], scenario));
}

/// The text after `label` on the line of `madmax eval` (text report) that starts with it, or
/// null when the report has no such line.
export function cliLine(bin, scenario, label) {
  const line = cliOutput(bin, ['eval'], scenario).split('\n').find((l) => l.startsWith(label));
  return line === undefined ? null : line.slice(label.length).trim();
}

/// The query of a share link (`?v=1&s=...`) for a scenario object ({model, system, task}).
export function linkOf(scenario) {
  const doc = { m: scenario.model, s: scenario.system, t: scenario.task };
  return `?v=1&s=${Buffer.from(JSON.stringify(doc)).toString('base64url')}`;
}

/// The scenario a share link encodes.
export function scenarioOfLink(link) {
  const q = new URL(link).searchParams;
  const doc = JSON.parse(Buffer.from(q.get('s'), 'base64url').toString('utf8'));
  return { model: doc.m, system: doc.s, task: doc.t };
}

export const close = (a, b, rel = 1e-9) => Math.abs(a - b) <= rel * Math.max(Math.abs(a), Math.abs(b));

/// How many sampled pixels of a canvas are drawn (0 when it is missing): a chart nobody drew
/// stays at 0.
export async function canvasInked(page, id) {
  return page.evaluate((id) => {
    const c = document.getElementById(id);
    if (!c) return 0;
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 28) if (d[i] > 0) n++;
    return n;
  }, id);
}

/// Waits until the page has nothing left to compute in the background (charts of other sizes,
/// what published runs say): `<html data-pending="0">`.
export async function settled(page, timeout = 60000) {
  await page.waitForFunction(() => document.documentElement.dataset.pending === '0', null, { timeout });
}

/// A fresh watched page of the calculator at `url`, once its first result is shown and its
/// background work is done.
export async function openCalculator(browser, url, base, options = { viewport: { width: 1280, height: 900 } }) {
  const page = await watchedPage(await browser.newContext(options), base);
  await page.goto(url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  await settled(page);
  return page;
}

/// Runs a browser test: serves `dist`, launches Chromium, runs `body({ server, browser })`,
/// counts an exception as a failure, closes everything, and exits 1 on any failure.
export async function runTest(name, dist, body) {
  const server = await serve(dist);
  const browser = await launch();
  try {
    await body({ server, browser });
  } catch (e) {
    check(false, e.stack ?? e.message);
  } finally {
    await browser.close();
    server.stop();
  }
  if (failed()) {
    console.error(`${name}: ${failed()} failure(s)`);
    process.exit(1);
  }
  console.log(`${name}: ok`);
}

/// `from`, `from + by`, ... below `to`: fractions of a chart's box to point at.
export function steps(from, to, by) {
  const out = [];
  for (let i = 0; from + i * by < to - 1e-9; i++) out.push(from + i * by);
  return out;
}

/// Points at chart `id` over a grid of fractions of its box (each of `ys` down, each of `xs`
/// across) and returns what its tip (`#<id>-tip`) says, each text once, in the order met; with
/// `first`, stops at the first answer. The chart is scrolled into view first, and the pointer
/// leaves it at the end.
export async function pointAt(page, id, { xs, ys, first = false }) {
  const chart = page.locator(`#${id}`);
  await chart.scrollIntoViewIfNeeded();
  const box = await chart.boundingBox();
  const tip = page.locator(`#${id}-tip`);
  const said = [];
  for (const gy of ys) {
    for (const gx of xs) {
      await page.mouse.move(box.x + gx * box.width, box.y + gy * box.height);
      if (await tip.count()) {
        const t = await tip.innerText();
        if (!said.includes(t)) said.push(t);
        if (first) return said;
      }
    }
  }
  return said;
}
