// Smoke test of the built site (dist/) in headless Chromium: open the page, read the iteration
// time and throughput it shows, and check them against the CLI: the default model on the
// page's own scenario (from its share link), then MAD-Max paper mode against the golden case.
//
// Usage: node tests/browser/smoke.mjs [DIST_DIR] [MADMAX_BIN]
import { watchedPage, check, shots, cli, scenarioOfLink, close, runTest, settled, serveCompressed } from './lib.mjs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';
const golden = JSON.parse(
  execFileSync(bin, ['eval', '--json', 'tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json']).toString(),
);
await runTest('smoke', dist, async ({ server, browser }) => {
  const page = await watchedPage(await browser.newContext({ viewport: { width: 1100, height: 700 } }), server.url);
  const loaded = [];
  page.on('request', (r) => loaded.push(new URL(r.url()).pathname.slice(1)));
  await page.goto(server.url);
  const it = page.locator('#iteration-time');
  await it.waitFor({ timeout: 20000 });
  await settled(page);
  // A first visit loads the calculator's module only (src/ui/handover.rs).
  check(loaded.some((f) => /^madmax-web-.*_bg\.wasm$/.test(f)) && !loaded.some((f) => f.startsWith('madmax-views')),
    `the calculator loads without the views module (${loaded.filter((f) => f.endsWith('.wasm')).join(', ')})`);
  const shownText = (await it.textContent()).trim();
  const seconds = async () => Number(await it.getAttribute('data-value'));
  const thr = async () => Number(await page.locator('#throughput').getAttribute('data-value'));
  check(await page.locator('#mode-default').isChecked(), 'the page opens on the default model');
  // The browser records when the first result was painted (Element Timing): `make bench`
  // times the first result by that record.
  const painted = await page.evaluate(() => new Promise((resolve) => {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.identifier === 'iteration-time') resolve(e.renderTime); })
      .observe({ type: 'element', buffered: true });
    setTimeout(() => resolve(null), 10000);
  }));
  check(painted > 0 && painted < await page.evaluate(() => performance.now()),
    `the browser records when the first result was painted (${painted?.toFixed(0)} ms after navigation)`);
  // Before the program arrives the page says what it is and that it loads; then that goes.
  const served = readFileSync(join(dist, 'index.html'), 'utf8');
  check(/id="loading"[\s\S]*Loading the calculator/.test(served) && await page.locator('#loading').count() === 0,
    'the page says it is loading until the program runs, then the words go');
  // The loading screen paints with the page's first response: its styles are inline, not a
  // stylesheet fetched after it (one more round trip on a slow link, `make bench`).
  check(/<style>[\s\S]*\.loading/.test(served) && !/<link[^>]*rel="stylesheet"/.test(served),
    'index.html carries its styles inline (no stylesheet to wait for)');
  const link = await page.locator('#share-link').inputValue();
  const want = cli(bin, scenarioOfLink(link));
  console.log(`smoke: page shows iteration time "${shownText}" (${await seconds()} s); CLI says ${want.iteration_ms / 1000} s`);
  check(want.mode === 'default', 'the share link carries the default model');
  check(close(await seconds(), want.iteration_ms / 1000), 'iteration time equals the CLI (default model)');
  check(/^\d+(\.\d+)? (ms|s|min|h)$/.test(shownText), `iteration time "${shownText}" has a unit`);
  check(close(await thr(), want.throughput), 'throughput equals the CLI (default model)');
  // Its own share link, opened afresh, is still the same scenario preset (not "custom").
  const preset = await page.locator('#scenario').inputValue();
  const other = await (await browser.newContext()).newPage();
  await other.goto(link);
  await other.locator('#iteration-time').waitFor({ timeout: 20000 });
  const reopened = await other.locator('#scenario').inputValue();
  check(preset !== '' && reopened === preset, `a shared preset opens as that preset (${reopened})`);
  await other.close();
  // It opens on a model with a published architecture (#20 item 10: it opened on the reference
  // config's LLaMA2-70B, 50.9 B parameters where Llama 2 70B has 69 B).
  const opening = await page.locator('#scenario option:checked').textContent();
  check(opening.startsWith('Llama 2 70B ') && want.fits && /published architecture/.test(await page.locator('#model-preset option:checked').textContent()),
    `the page opens on a published model: ${opening}`);
  // MAD-Max paper mode on the paper's own LLaMA2-70B run: the golden case's numbers.
  await page.selectOption('#scenario', 'llm__llama2_70b__dc_A_2048__llm_train');
  await page.waitForFunction(() => document.getElementById('iteration-time')?.closest('.stale') === null);
  await page.locator('label[for=mode-reference]').click();
  await page.waitForFunction((w) => Math.abs(Number(document.getElementById('iteration-time').dataset.value) - w) < 1e-9 * w,
    golden.iteration_ms / 1000, { timeout: 30000 }).catch(() => {});
  check(close(await seconds(), golden.iteration_ms / 1000), `paper mode shows the golden iteration time ${golden.iteration_ms / 1000} s`);
  check(close(await thr(), golden.throughput), 'paper mode shows the golden throughput');
  check((await page.locator('.crash').count()) === 0, 'no crash notice');
  await page.screenshot({ path: join(shots, 'smoke.png'), fullPage: true });
  for (const p of page.problems) check(false, p);

  // A strict Content-Security-Policy and no inline script.
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
  check(/script-src 'self' 'wasm-unsafe-eval'/.test(csp ?? '') && !/unsafe-inline[^;]*;.*script|script-src[^;]*unsafe-inline/.test(csp ?? ''),
    `CSP allows only the site's scripts and wasm: ${csp}`);
  check(await page.evaluate(() => document.querySelectorAll('script:not([src])').length) === 0, 'no inline script');
  // Network silence: once loaded, using the page requests nothing but its own files (the
  // browser may ask for the favicon again); every request of the whole session stayed on the
  // site (watchedPage reports any other).
  const own = new Set(readdirSync(dist));
  const after = [];
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== new URL(server.url).origin || !own.has(u.pathname.slice(1))) after.push(r.url());
  });
  await page.locator('label[for=mode-default]').click();
  await page.selectOption('#scenario', 'dlrm__dlrm_a__zionex_128__dlrm_train');
  await page.waitForFunction(() => document.getElementById('scenario').value === 'dlrm__dlrm_a__zionex_128__dlrm_train');
  await settled(page);
  const before = [await page.locator('#share-link').inputValue(), await seconds()];
  // Another view brings the views module, which takes the page over on the same scenario;
  // Back returns to the calculator, with the same result.
  await page.click('nav >> text=Explorer');
  await page.locator('#explore-task').waitFor({ timeout: 30000 });
  check(loaded.includes('madmax-views_bg.wasm') && page.url().includes('view=explorer'),
    'the explorer opens with the views module');
  await page.goBack();
  await it.waitFor({ timeout: 20000 });
  check(await page.locator('#scenario').inputValue() === 'dlrm__dlrm_a__zionex_128__dlrm_train' && close(await seconds(), before[1])
    && await page.locator('#share-link').inputValue() === before[0],
    'after the hand-over, Back shows the calculator on the same scenario and result');
  await page.click('nav >> text=Learn');
  await page.click('nav >> text=Calculator');
  await page.locator('#iteration-time').waitFor();
  await settled(page);
  check(after.length === 0, `no request but the site's own files after load (${after.length}: ${after.slice(0, 3).join(', ')})`);

  // Nothing from a link is inserted as HTML: a scenario whose names are markup shows them as text.
  const evil = scenarioOfLink(link);
  evil.model.name = '<img src=x id=injected onerror="window.pwned=1">';
  evil.task.name = '<b id=bold>task</b>';
  const q = Buffer.from(JSON.stringify({ m: evil.model, s: evil.system, t: evil.task })).toString('base64url');
  await page.goto(`${server.url}?v=1&s=${q}`);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  const injected = await page.evaluate(() => [document.querySelectorAll('#injected, #bold').length, window.pwned ?? 0]);
  check(injected[0] === 0 && injected[1] === 0 && (await page.locator('#scenario-summary').textContent()).includes('<img'),
    'markup in a shared scenario is shown as text, never inserted as HTML');

  // The crash notice's test hook is in test builds only (tests/browser/crash.mjs runs it there):
  // the shipped WebAssembly (the page's, its views module's and the explorer's worker's) does
  // not hold it, and `#test-panic` does nothing.
  const wasmFiles = readdirSync(dist).filter((f) => f.endsWith('.wasm'));
  const wasm = wasmFiles.map((f) => readFileSync(join(dist, f)));
  check(wasmFiles.length === 3 && ['madmax-web', 'madmax-views', 'madmax-worker'].every((n) => wasmFiles.some((f) => f.startsWith(n)))
    && wasm.every((w) => !w.includes('test panic requested')),
    `the shipped site has no test hook (${wasmFiles.join(', ')})`);
  // Hosts that read _headers forbid framing; the page refuses to run in a frame anyway.
  const headers = readFileSync(join(dist, '_headers'), 'utf8');
  check(headers.includes(`Content-Security-Policy: ${csp}; frame-ancestors 'none'`) && /X-Frame-Options: DENY/.test(headers),
    `_headers carries the page's CSP with frame-ancestors 'none': ${headers.split('\n')[1]}`);
  // Hosts that serve precompressed files find a gzip and a Brotli copy of each text and
  // WebAssembly file, equal to it once decompressed.
  const compressible = readdirSync(dist).filter((f) => /\.(html|js|css|svg|wasm)$/.test(f));
  const copiesMatch = compressible.every((f) => {
    const data = readFileSync(join(dist, f));
    return gunzipSync(readFileSync(join(dist, `${f}.gz`))).equals(data)
      && brotliDecompressSync(readFileSync(join(dist, `${f}.br`))).equals(data);
  });
  check(compressible.length >= 5 && copiesMatch, `precompressed copies (.gz, .br) of ${compressible.length} files match them`);
  // Served that way (the Brotli copy with Content-Encoding), the page runs and shows the same
  // iteration time.
  const host = await serveCompressed(dist);
  try {
    const served = await (await browser.newContext()).newPage();
    const encodings = [];
    served.on('response', (r) => encodings.push(r.headers()['content-encoding'] ?? 'none'));
    await served.goto(host.url);
    await served.locator('#iteration-time').waitFor({ timeout: 20000 });
    check(await served.locator('#iteration-time').getAttribute('data-value') === String(await seconds())
      && encodings.length >= 4 && encodings.every((e) => e === 'br'),
    `from a host that serves the Brotli copies, the page shows the same result (${encodings.length} responses: ${[...new Set(encodings)].join(', ')})`);
  } finally {
    host.stop();
  }
  const framer = await (await browser.newContext()).newPage();
  await framer.setContent(`<iframe id="f" src="${server.url}" width="800" height="400"></iframe>`);
  const frame = await (await framer.locator('#f').elementHandle()).contentFrame();
  await frame.locator('#framed').waitFor({ timeout: 20000 });
  check((await frame.locator('#iteration-time').count()) === 0, 'in another page\'s frame the calculator does not run, and says so');
});
