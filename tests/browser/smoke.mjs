// Smoke test of the built site (dist/) in headless Chromium: open the page, read the iteration
// time and throughput it shows, and check them against the CLI: the default model on the
// page's own scenario (from its share link), then MAD-Max paper mode against the golden case.
//
// Usage: node tests/browser/smoke.mjs [DIST_DIR] [MADMAX_BIN]
import { serve, launch, watchedPage, check, failed, shots, cli, scenarioOfLink, close } from './lib.mjs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';
const golden = JSON.parse(
  execFileSync(bin, ['eval', '--json', 'tests/data/reference/cases/llm__llama2_70b__dc_A_2048__llm_train.json']).toString(),
);
const server = await serve(dist);
const browser = await launch();
try {
  const page = await watchedPage(await browser.newContext({ viewport: { width: 1100, height: 700 } }), server.url);
  await page.goto(server.url);
  const it = page.locator('#iteration-time');
  await it.waitFor({ timeout: 20000 });
  const shownText = (await it.textContent()).trim();
  const seconds = async () => Number(await it.getAttribute('data-value'));
  const thr = async () => Number(await page.locator('#throughput').getAttribute('data-value'));
  check(await page.locator('#mode-default').isChecked(), 'the page opens on the default model');
  const link = await page.locator('#share-link').inputValue();
  const want = cli(bin, scenarioOfLink(link));
  console.log(`smoke: page shows iteration time "${shownText}" (${await seconds()} s); CLI says ${want.iteration_ms / 1000} s`);
  check(want.mode === 'default', 'the share link carries the default model');
  check(close(await seconds(), want.iteration_ms / 1000), 'iteration time equals the CLI (default model)');
  check(/^\d+(\.\d+)? (ms|s|min|h)$/.test(shownText), `iteration time "${shownText}" has a unit`);
  check(close(await thr(), want.throughput), 'throughput equals the CLI (default model)');
  // MAD-Max paper mode: the golden case's numbers.
  await page.locator('label[for=mode-reference]').click();
  await page.waitForFunction((w) => Math.abs(Number(document.getElementById('iteration-time').dataset.value) - w) < 1e-9 * w,
    golden.iteration_ms / 1000, { timeout: 5000 }).catch(() => {});
  check(close(await seconds(), golden.iteration_ms / 1000), `paper mode shows the golden iteration time ${golden.iteration_ms / 1000} s`);
  check(close(await thr(), golden.throughput), 'paper mode shows the golden throughput');
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
