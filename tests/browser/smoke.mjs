// Smoke test of the built site (dist/) in headless Chromium: open the page, read the iteration
// time and throughput it shows, and check them against the CLI on the same preset.
//
// Usage: node tests/browser/smoke.mjs [DIST_DIR] [MADMAX_BIN]
import { serve, launch, watchedPage, check, failed, shots } from './lib.mjs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const cli = process.argv[3] ?? 'target/release/madmax';
const expected = JSON.parse(
  execFileSync(cli, ['eval', '--json', 'tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json']).toString(),
);
const server = await serve(dist);
const browser = await launch();
try {
  const page = await watchedPage(await browser.newContext({ viewport: { width: 1100, height: 700 } }), server.url);
  await page.goto(server.url);
  const it = page.locator('#iteration-time');
  await it.waitFor({ timeout: 20000 });
  const shownText = (await it.textContent()).trim();
  const shownSeconds = Number(await it.getAttribute('data-value'));
  const wantSeconds = expected.iteration_ms / 1000;
  console.log(`smoke: page shows iteration time "${shownText}" (${shownSeconds} s); CLI says ${wantSeconds} s`);
  check(Math.abs(shownSeconds - wantSeconds) <= 1e-9 * wantSeconds, 'iteration time equals the CLI');
  check(/^\d+(\.\d+)? (ms|s|min|h)$/.test(shownText), `iteration time "${shownText}" has a unit`);
  const thr = Number(await page.locator('#throughput').getAttribute('data-value'));
  check(Math.abs(thr - expected.throughput) <= 1e-9 * expected.throughput, 'throughput equals the CLI');
  check((await page.locator('.crash').count()) === 0, 'no crash notice');
  await page.screenshot({ path: join(shots, 'smoke.png'), fullPage: true });
  for (const p of page.problems) check(false, p);
} catch (e) {
  check(false, e.message);
} finally {
  await browser.close();
  server.stop();
}
if (failed()) {
  console.error(`smoke: ${failed()} failure(s)`);
  process.exit(1);
}
console.log('smoke: ok');
