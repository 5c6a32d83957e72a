// End-to-end test of the library of famous runs (headless Chromium): every story opens,
// computes and shows the source's figure with its citation, the model's figure and the
// difference; each opens in the calculator (or the explorer) with the CLI's numbers; scaling
// charts are drawn; a story's link scrolls to it; a phone shows it without sideways scrolling.
// Screenshots of every story go to target/screenshots/story-<id>.png.
//
// Usage: node tests/browser/stories.mjs [DIST_DIR] [MADMAX_BIN]
import { watchedPage, check, shots, scenarioOfLink, cli, close, canvasInked, openCalculator, runTest, pointAt, steps } from './lib.mjs';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';
const specs = JSON.parse(readFileSync('src/presets/data/stories.json', 'utf8'));
const fromCli = JSON.parse(execFileSync(bin, ['stories', '--json']).toString());


async function openLearn(page, url) {
  await page.goto(url);
  await page.locator('.story').first().waitFor({ timeout: 20000 });
}

await runTest('stories', dist, async ({ server, browser }) => {
  const page = await openCalculator(browser, server.url, server.url);
  await page.getByRole('button', { name: 'Learn' }).click();
  await page.locator('.story').first().waitFor({ timeout: 20000 });
  check(await page.locator('.story').count() === specs.length && specs.length >= 10, `all ${specs.length} stories are listed`);

  for (const spec of specs) {
    const card = page.locator(`#story-${spec.id}`);
    const text = await card.innerText();
    const predicted = Number(await card.getAttribute('data-predicted'));
    check(Number.isFinite(predicted) && predicted > 0, `${spec.id}: the model computes a figure (${predicted})`);
    const cliStory = fromCli.find((s) => s.id === spec.id);
    check(cliStory && close(cliStory.predicted, predicted), `${spec.id}: the page's figure equals \`madmax stories\`'s (${cliStory?.predicted})`);
    check(await card.locator('.error-msg').count() === 0, `${spec.id}: no error`);
    const figures = `${await card.locator('.reported').innerText()} ${await card.locator('.predicted').innerText()}`;
    check(!/(^|[^.\d])\d{5,}/.test(figures), `${spec.id}: large figures carry a prefix, not a run of digits (${figures})`);
    check(/The source reported/.test(text) && /The model predicts/.test(text) && /[+-]\d+\.\d %/.test(await card.locator('.difference').innerText()),
      `${spec.id}: source, prediction and difference are shown (${(await card.locator('.difference').innerText()).trim()})`);
    const want = (predicted - spec.reported.value) / spec.reported.value;
    const shown = Number((await card.locator('.difference').innerText()).replace(/[^0-9.+-]/g, '')) / 100;
    check(Math.abs(shown - want) < 0.0006, `${spec.id}: the difference is (predicted - reported) / reported = ${(want * 100).toFixed(1)} %`);
    if (spec.reported.citation !== null) {
      const href = await card.locator('.comparison sup a').getAttribute('href');
      check(href === spec.citations[spec.reported.citation].url, `${spec.id}: the source's number carries its citation (${href})`);
    } else {
      check(/assumption/.test(text), `${spec.id}: a number without a source says it is an assumption`);
    }
    if (spec.scaling) {
      check(await canvasInked(page, `chart-scaling-${spec.id}`) > 1500, `${spec.id}: the scaling chart is drawn`);
      const [scaleTip = ''] = await pointAt(page, `chart-scaling-${spec.id}`, { xs: steps(0.05, 0.98, 0.01), ys: steps(0.1, 0.9, 0.05), first: true });
      check(/^(weak|strong) scaling, \d+ GPUs: .*samples\/s, [\d.]+ % efficiency$/.test(scaleTip), `${spec.id}: pointing at a point gives its figures: ${scaleTip}`);
    }
    await card.screenshot({ path: join(shots, `story-${spec.id}.png`) });
  }

  // Each story opens with the numbers the CLI gives for its scenario.
  for (const spec of specs) {
    await page.getByRole('button', { name: 'Learn' }).click();
    const card = page.locator(`#story-${spec.id}`);
    await card.waitFor({ timeout: 10000 });
    const link = await card.getByRole('link', { name: 'Link to the scenario' }).getAttribute('href');
    const reported = (await card.locator('.reported').innerText()).trim();
    await card.locator('.story-actions button').click();
    if (spec.open_in === 'explorer') {
      await page.locator('#explore-start').waitFor({ timeout: 5000 });
      check(page.url().includes('view=explorer'), `${spec.id}: opens in the explorer`);
      await page.getByRole('button', { name: 'Calculator' }).click();
    }
    await page.locator('#iteration-time').waitFor({ timeout: 5000 });
    const it = Number(await page.locator('#iteration-time').getAttribute('data-value'));
    const want = cli(bin, scenarioOfLink(link)).iteration_ms / 1000;
    check(close(it, want), `${spec.id}: the calculator shows ${it} s, the CLI ${want} s`);
    check(await page.locator('#problems').count() === 0, `${spec.id}: the scenario has no problems`);
    check((await page.locator('#yardstick-measured').innerText()).trim() === reported,
      `${spec.id}: the calculator shows what the source reported (${reported}) beside the model`);
  }

  // A story's link scrolls to it.
  const fresh = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await openLearn(fresh, `${server.url}?view=learn#story-firecaffe`);
  // The page scrolls to the story once it is drawn: wait for that state, not for a time.
  await fresh.waitForFunction(() => {
    const r = document.getElementById('story-firecaffe')?.getBoundingClientRect();
    return r && r.top >= -5 && r.top < 300;
  }, null, { timeout: 30000 }).catch(() => {});
  const box = await fresh.locator('#story-firecaffe').boundingBox();
  check(box && box.y >= -5 && box.y < 300, `a story's link shows that story (top at ${Math.round(box?.y)} px)`);

  // On a phone: the library is readable without sideways scrolling; charts fit.
  const phone = await watchedPage(await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 }), server.url);
  await openLearn(phone, `${server.url}?view=learn#story-megascale-175b`);
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `on a phone the page does not scroll sideways (${overflow} px)`);
  const chart = await phone.locator('#chart-scaling-megascale-175b').boundingBox();
  check(chart && chart.width <= 390 && chart.width >= 280, `on a phone the scaling chart is ${Math.round(chart?.width)} px wide`);
  await phone.locator('#story-megascale-175b').screenshot({ path: join(shots, 'story-phone.png') });

  for (const p of [page, fresh, phone]) check(p.problems.length === 0, `no console errors or outside requests: ${p.problems}`);
});
