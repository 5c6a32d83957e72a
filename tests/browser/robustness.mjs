// What a link, a file or a field can do to the page, tried as a careful user and as an attacker
// would: nothing replaces the scenario the user made valid (each path that used to), Nodes = 0
// is an error under the field, outsized imports and links are refused with a short message,
// long work stays responsive. The same corpus (tests/data/adversarial/) is timed by
// site_bench.mjs.
//
// Usage: node tests/browser/robustness.mjs [DIST_DIR] [MADMAX_BIN]
import { watchedPage, check, shots, cli, close, runTest, settled, linkOf } from './lib.mjs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';
const adversarial = (f) => JSON.parse(readFileSync(join('tests/data/adversarial', f), 'utf8'));
const KEY = 'madmax.scenario';

/// Types into a text field and leaves it (the page recomputes on change).
async function type(page, selector, text) {
  await page.fill(selector, text);
  await page.press(selector, 'Tab');
}

const iteration = async (page) => Number(await page.locator('#iteration-time').getAttribute('data-value'));
const kept = (page) => page.evaluate((k) => localStorage.getItem(k), KEY);

/// Pastes text into the import box and imports it.
async function importText(page, text) {
  const card = page.locator('details.card', { hasText: 'Share, import, export' });
  if (!(await card.evaluate((d) => d.open))) await card.locator('summary').click();
  await page.fill('#import-text', text);
  await page.click('#import-button');
}

await runTest('robustness', dist, async ({ server, browser }) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await watchedPage(context, server.url);
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  await settled(page);
  check((await kept(page)) === null, 'opening the page keeps nothing');

  // The user's own work: 16 nodes, kept in this browser.
  await type(page, '#f-system-num_nodes', '16');
  await page.waitForFunction((k) => localStorage.getItem(k) !== null, KEY);
  const mine = await kept(page);
  const mineIteration = await iteration(page);
  const mineScenario = cli(bin, adversarialScenarioOf(mine)).iteration_ms / 1000;
  check(close(mineIteration, mineScenario), `the kept scenario is what the page shows (${mineIteration} s)`);

  // 1. A link that is valid JSON but an invalid scenario (layers: 0): its problems are listed,
  // the results are the kept scenario's, marked stale, and nothing is replaced.
  const zero = JSON.parse(readFileSync('tests/data/invalid/layers_zero.json', 'utf8'));
  await page.goto(`${server.url}${linkOf(zero)}`);
  await page.locator('#problems').waitFor({ timeout: 20000 });
  check((await page.locator('#problems').textContent()).includes('model.num_transformer_layers'), 'an invalid link lists its problems');
  const named = page.locator('#problems a[href="#f-model-num_transformer_layers"]');
  check((await named.count()) === 1 && (await named.textContent()) === 'Transformer layers',
    'the problem names the field as the form does and links to it');
  check(close(await iteration(page), mineIteration) && (await page.locator('.stale-banner').count()) === 1,
    'an invalid link shows the kept scenario\'s results, marked stale, not the default\'s');
  check((await kept(page)) === mine, 'an invalid link replaces nothing');
  await page.screenshot({ path: join(shots, 'invalid-link.png') });

  // 2. An invalid import, then a reload.
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  check(close(await iteration(page), mineIteration), 'the bare address reopens the kept scenario');
  await importText(page, JSON.stringify(zero));
  await page.locator('#problems').waitFor();
  await page.reload();
  await page.locator('#problems').waitFor({ timeout: 20000 });
  check((await kept(page)) === mine && close(await iteration(page), mineIteration), 'an invalid import, then a reload, replaces nothing');

  // 3. An invalid edit, then a reload.
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  await type(page, '#f-system-bw_per_nvlink', 'fast');
  await page.locator('#problems').waitFor();
  await page.reload();
  await page.locator('#problems').waitFor({ timeout: 20000 });
  check((await kept(page)) === mine, 'an invalid edit, then a reload, replaces nothing');

  // 4, 5. The bare address and a view alone.
  for (const q of ['', '?view=explorer', '?view=validation', '?view=learn']) {
    await page.goto(`${server.url}${q}`);
    await page.locator('main').first().waitFor({ timeout: 20000 });
    await settled(page);
    check((await kept(page)) === mine, `opening "${q || '/'}" replaces nothing`);
  }

  // Nodes = 0: an error under the field, the page alive; fixing it recomputes.
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  await type(page, '#f-system-num_nodes', '0');
  await page.locator('#problems').waitFor();
  check((await page.locator('#problems').textContent()).includes('system.num_nodes'), 'Nodes = 0 is named as a problem');
  await type(page, '#f-system-gpus_per_node', '4');
  await type(page, '#f-system-num_nodes', '2');
  await page.waitForFunction(() => document.querySelector('#problems') === null);
  check((await page.locator('#f-system-gpus_per_node').inputValue()) === '4' && (await page.locator('.crash').count()) === 0,
    'after Nodes = 0 the hardware can be fixed; no crash');

  // Imports beyond bounds: refused at once, with a short message naming the problem.
  const before = await kept(page);
  await importText(page, `{"task": {"transformer_parallel": [${'1,'.repeat(5_000_000)}1]}}`);
  const big = await page.locator('.notice.is-error').textContent();
  check(/more than the 1\.05 MB/.test(big) && big.length < 300, `a 10 MB import is refused in a short message: ${big.slice(0, 120)}`);
  await importText(page, readFileSync('tests/data/adversarial/duplicate_keys.json', 'utf8'));
  await page.locator('.notice.is-error', { hasText: 'appears twice' }).waitFor();
  await importText(page, JSON.stringify(adversarial('thousand_levels.json')));
  await page.locator('#problems').waitFor();
  const levels = await page.locator('#problems').textContent();
  check(/at most 8 are supported/.test(levels) && levels.length < 2000, 'a list of 1,000 levels is named, in a short message');
  check((await kept(page)) === before, 'refused and invalid imports replace nothing');

  // A scenario too long for an address: a notice, the address keeps only the view, and the
  // browser keeps it (a reload reopens it).
  const long = JSON.parse(JSON.stringify(adversarial('training_1m_ops.json')));
  long.task.local_transformer_bs = 1;
  long.task.local_emb_bs = 1;
  long.model.name = 'n'.repeat(20000);
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  await importText(page, JSON.stringify(long));
  await page.locator('.notice.is-error', { hasText: 'too long to travel in a link' }).waitFor();
  check(!new URL(page.url()).search.includes('s='), `the address keeps no scenario (${page.url().length} characters)`);
  await page.waitForFunction((k) => (localStorage.getItem(k) ?? '').length > 20000, KEY);
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  check((await page.locator('#scenario-summary').textContent()).includes('nnnnnnnn'), 'a reload reopens it from this browser');

  // Links beyond bounds or damaged: a notice, the kept scenario.
  for (const [what, query] of [
    ['a 60 KB link of garbage', `?v=1&s=${'A'.repeat(60_000)}`],
    ['a damaged link', '?v=1&s=not-a-scenario'],
  ]) {
    await page.goto(`${server.url}${query}`);
    const n = await page.locator('.notice.is-error').textContent({ timeout: 20000 });
    check(/could not be opened/.test(n) && n.length < 300, `${what}: ${n.slice(0, 110)}`);
  }

  // Long work from a link: a million generated tokens, a timeline near the op limit, an MoE on
  // 2^40 GPUs: computed, drawn, the page responsive (site_bench.mjs times the longest block).
  for (const f of ['serving_1m_tokens.json', 'training_1m_ops.json', 'moe_2e40_gpus.json']) {
    const sc = adversarial(f);
    await page.goto(`${server.url}${linkOf(sc)}`);
    await page.locator('#iteration-time').waitFor({ timeout: 30000 });
    await settled(page);
    const want = cli(bin, sc).iteration_ms / 1000;
    check(close(await iteration(page), want), `${f}: the page shows the CLI's ${want} s`);
  }
  await page.screenshot({ path: join(shots, 'moe-2e40.png') });
  for (const p of page.problems) check(false, p);

  // A browser whose storage is full says so instead of losing the scenario silently.
  const full = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await full.addInitScript(() => {
    Storage.prototype.setItem = () => { throw new DOMException('quota', 'QuotaExceededError'); };
  });
  const q = await full.newPage();
  await q.goto(server.url);
  await q.locator('#iteration-time').waitFor({ timeout: 20000 });
  await type(q, '#f-system-num_nodes', '16');
  const said = await q.locator('.notice.is-error').textContent({ timeout: 10000 });
  check(/did not keep the scenario/.test(said) && /export it/.test(said), `a full storage is said: ${said.slice(0, 100)}`);

  // An invalid edit, then another view: the views module takes the page over (src/ui/handover.rs)
  // with the edit, its problem and the last valid result, and says nothing of a link.
  const h = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await h.goto(server.url);
  await h.locator('#iteration-time').waitFor({ timeout: 20000 });
  await settled(h);
  const valid = await iteration(h);
  await type(h, '#f-model-num_transformer_layers', '0');
  await h.locator('#problems').waitFor({ timeout: 20000 });
  await h.click('nav >> text=Explorer');
  await h.locator('#explore-task').waitFor({ timeout: 30000 });
  await h.click('nav >> text=Calculator');
  await h.locator('#problems').waitFor({ timeout: 20000 });
  const notice = await h.locator('.notice').count() ? await h.locator('.notice').textContent() : '';
  check(await h.locator('#f-model-num_transformer_layers').inputValue() === '0'
    && (await h.locator('#problems').textContent()).includes('model.num_transformer_layers')
    && await iteration(h) === valid && !/link/.test(notice),
    `the hand-over to the views module keeps an invalid edit, its problem and the last valid result, and no link notice appears (notice: "${notice}")`);
  for (const p of h.problems) check(false, p);

  // The views module cannot be fetched (offline): the view says so, the calculator still works,
  // and opening the view again, once it can be fetched, brings it.
  const off = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await off.route('**/madmax-views.js', (route) => route.abort());
  await off.goto(server.url);
  await off.locator('#iteration-time').waitFor({ timeout: 20000 });
  await off.click('nav >> text=Explorer');
  await off.locator('#view-loading', { hasText: 'could not be loaded' }).waitFor({ timeout: 20000 });
  const saidOff = await off.locator('#view-loading').textContent();
  await off.click('nav >> text=Calculator');
  const calculatorBack = await off.locator('#iteration-time').waitFor({ timeout: 20000 }).then(() => true, () => false);
  await off.unroute('**/madmax-views.js');
  await off.click('nav >> text=Explorer');
  const explorerCame = await off.locator('#explore-task').waitFor({ timeout: 30000 }).then(() => true, () => false);
  check(/Check the connection, then open the view again/.test(saidOff) && calculatorBack && explorerCame,
    `a views module that could not be fetched is said ("${saidOff}"), the calculator still works (${calculatorBack}), and a second try brings the view (${explorerCame})`);
});

/// The scenario a kept share query encodes.
function adversarialScenarioOf(query) {
  const doc = JSON.parse(Buffer.from(new URLSearchParams(query).get('s'), 'base64url').toString('utf8'));
  return { model: doc.m, system: doc.s, task: doc.t };
}
