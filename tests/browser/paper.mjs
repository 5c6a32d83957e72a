// End-to-end test of the findings view (headless Chromium): opened by its address, it computes
// the MAD-Max paper's findings on the workload suite in both models and shows the same numbers
// as `madmax paper --json`; it says what the paper reported next to each; a phone shows it
// without sideways scrolling of the page. Screenshots: paper-desktop.png, paper-phone.png.
//
// Usage: node tests/browser/paper.mjs [DIST_DIR] [MADMAX_BIN]
import { watchedPage, check, shots, close, runTest, canvasInked, pointAt } from './lib.mjs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';
const fromCli = JSON.parse(execFileSync(bin, ['paper', '--json'], { maxBuffer: 1 << 26 }).toString());

await runTest('paper', dist, async ({ server, browser }) => {
  const page = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await page.goto(`${server.url}?view=paper`);
  await page.locator('#paper-status').waitFor({ timeout: 20000 });
  check(await page.locator('nav button.current').textContent() === 'Findings', 'the address opens the findings view');
  // The searches run in slices; the view says how far they are until they end.
  await page.waitForFunction(() => document.querySelector('#paper-status')?.dataset.finished === 'true', null, { timeout: 600000 });
  const status = await page.locator('#paper-status').textContent();
  check(/^Computed on \d+ workload runs/.test(status), `the view says what it computed: ${status}`);
  const median = async (id) => Number(await page.locator(`#${id}`).getAttribute('data-median'));
  for (const f of fromCli) {
    const m = f.mode;
    const exposed = await median(`exposed-${m}-all`);
    check(close(exposed, f.exposed.all.median), `${m}: exposed share ${exposed} as the CLI's ${f.exposed.all.median}`);
    for (const g of f.exposed.by_family) {
      const got = await median(`exposed-${m}-${g.name}`);
      check(close(got, g.spread.median), `${m}: ${g.name} exposed share ${got} as the CLI's ${g.spread.median}`);
    }
    const weighted = Number(await page.locator(`#exposed-${m}-weighted`).getAttribute('data-value'));
    check(close(weighted, f.exposed.gpu_weighted), `${m}: exposed share weighted by GPUs ${weighted} as the CLI's ${f.exposed.gpu_weighted}`);
    const training = await median(`speedup-${m}-training`);
    check(close(training, f.speedups.training.median), `${m}: training speed-up ${training} as the CLI's ${f.speedups.training.median}`);
    const gains = await page.locator(`#gains-${m} li`).evaluateAll((li) => li.map((x) => Number(x.dataset.speedup)));
    check(gains.length === f.speedups.largest.length && gains.every((g, i) => close(g, f.speedups.largest[i].speedup)),
      `${m}: the largest gains as the CLI's: ${gains.map((g) => g.toFixed(2)).join(', ')}`);
    const fits = await Promise.all(f.capacity.map((_, k) => page.locator(`#capacity-${m}-${k}`).getAttribute('data-fit')));
    check(fits.every((x, k) => Number(x) === f.capacity[k].fit), `${m}: own plans that fit with HBM scaled as the CLI's: ${fits.join(', ')}`);
    for (const [k, w] of f.codesign.entries()) {
      const got = await median(`codesign-${m}-${k}`);
      check(close(got, w.speedup.median), `${m}: ${w.resource} x${w.factor} ${got} as the CLI's ${w.speedup.median}`);
    }
  }
  // The figures: every workload's exposed share by family, and the co-design lines per model;
  // pointing at a mark names it.
  for (const id of ['chart-paper-exposed', ...fromCli.map((f) => `chart-paper-codesign-${f.mode}`)]) {
    check(await canvasInked(page, id) > 500, `figure ${id} is drawn`);
  }
  const grid = (n) => Array.from({ length: n }, (_, i) => 0.08 + (0.9 * i) / n);
  const marks = await pointAt(page, 'chart-paper-exposed', { xs: grid(60), ys: grid(30), first: true });
  check(marks.length === 1 && / of iteration time exposed \((MAD-Max paper mode|default model)\)$/.test(marks[0]),
    `pointing at a mark names its workload and share: ${marks[0]}`);
  const lines = await pointAt(page, `chart-paper-codesign-${fromCli[0].mode}`, { xs: grid(50), ys: grid(30), first: true });
  check(lines.length === 1 && /^(compute|HBM bandwidth|NVLink bandwidth|NIC bandwidth) x[\d.]+: (median|each workload)/.test(lines[0]),
    `pointing at a co-design point gives its figures: ${lines[0]}`);
  const text = await page.locator('main').textContent();
  check(/The paper: 14.0 % to 32.0 % of GPU hours/.test(text) && /up to 2.24x/.test(text) && /up to 5.27x/.test(text),
    'each analysis says what the paper reported');
  const refused = await page.locator('.refused').allTextContents();
  const cliRefused = fromCli.flatMap((f) => f.refused);
  check(refused.length === cliRefused.length && cliRefused.every((r, i) => refused[i].includes(r.workload) && refused[i].includes(r.why)),
    `the workloads a model refuses are named with why, as the CLI's: ${refused.join(' | ')}`);
  const whys = await page.locator('.why').allTextContents();
  const cliText = execFileSync(bin, ['paper', '--mode', 'default']).toString();
  check(whys.length === 3 && whys.every((w) => w.startsWith('Why') || w.startsWith('Each workload')) && whys.every((w) => cliText.includes(w)),
    `each analysis says why it differs from the paper, as the CLI does: ${whys.map((w) => w.slice(0, 40)).join(' | ')}`);
  check(page.problems.length === 0, `no console errors or outside requests: ${page.problems.join('; ')}`);
  await page.screenshot({ path: join(shots, 'paper-desktop.png'), fullPage: true });

  // A phone: the tables scroll inside their card, the page does not.
  const phone = await (await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' })).newPage();
  await phone.goto(`${server.url}?view=paper`);
  await phone.waitForFunction(() => document.querySelector('#paper-status')?.dataset.finished === 'true', null, { timeout: 600000 });
  const wide = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check(wide <= 1, `on a phone the page does not scroll sideways (${wide} px)`);
  await phone.screenshot({ path: join(shots, 'paper-phone.png'), fullPage: true });
});
