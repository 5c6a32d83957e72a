// Accessibility check with axe-core in headless Chromium: the calculator (training and
// serving), the explorer with results, the lessons and famous runs, the validation page, in light and dark mode. No serious or
// critical WCAG 2 A/AA violation may remain. Each view is saved as a screenshot at desktop and
// phone width in both schemes (target/screenshots/a11y-<view>-<width>-<scheme>.png), to look at.
//
// Usage: node tests/browser/a11y.mjs [DIST_DIR]
import { check, runTest, shots } from './lib.mjs';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const axePath = 'node_modules/axe-core/axe.min.js';

async function audit(page, what) {
  await page.addScriptTag({ path: axePath });
  const result = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  const bad = result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  for (const v of bad) console.error(`  ${what}: ${v.impact} ${v.id}: ${v.help} at ${v.nodes.join(' | ')}`);
  check(bad.length === 0, `${what}: no serious or critical accessibility violation (${result.length} minor)`);
}

/// What a person sees of a view: the window's first screenful.
const shoot = (page, view, width, scheme) => page.screenshot({ path: join(shots, `a11y-${view}-${width}-${scheme}.png`) });

/// Each view's first element worth waiting for, by its address.
const VIEWS = [
  ['calculator', '', '#iteration-time'],
  ['explorer', '?view=explorer', '#explore-task'],
  ['learn', '?view=learn', 'article.lesson'],
  ['validation', '?view=validation', '#validation-rows'],
  ['findings', '?view=paper', '#paper-status'],
];

await runTest('a11y', dist, async ({ server, browser }) => {
  for (const scheme of ['light', 'dark']) {
    // axe is injected as a script: the test context bypasses the page's CSP for it.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: scheme, bypassCSP: true });
    const page = await ctx.newPage();
    await page.goto(server.url);
    await page.locator('#iteration-time').waitFor({ timeout: 20000 });
    await audit(page, `calculator (${scheme})`);
    await shoot(page, 'calculator', 'desktop', scheme);
    // Every chart has its numbers as a table.
    const charts = await page.locator('figure.chart canvas').count();
    const tables = await page.locator('figure.chart details.chart-data table').count();
    check(charts > 0 && tables >= charts - 1, `charts have a table of their numbers (${tables} tables for ${charts} charts, the timeline lists its longest ops)`);
    await page.selectOption('#scenario', 'serve__llama2_70b__h100_sxm_4__fp8');
    await page.locator('#ttft').waitFor({ timeout: 5000 });
    await audit(page, `serving (${scheme})`);
    await page.click('nav >> text=Explorer');
    await page.uncheck('#explore-codesign');
    await page.click('#explore-start');
    await page.waitForFunction(() => document.querySelector('#explore-status')?.dataset.finished === 'true', null, { timeout: 60000 });
    await audit(page, `explorer (${scheme})`);
    await shoot(page, 'explorer', 'desktop', scheme);
    await page.click('nav >> text=Learn');
    await page.locator('article.lesson').first().waitFor({ timeout: 10000 });
    await audit(page, `lessons (${scheme})`);
    await shoot(page, 'learn', 'desktop', scheme);
    await page.click('nav >> text=Validation');
    await page.locator('#validation-rows').waitFor({ timeout: 10000 });
    await audit(page, `validation (${scheme})`);
    await shoot(page, 'validation', 'desktop', scheme);
    await page.click('nav >> text=Findings');
    await page.waitForFunction(() => document.querySelector('#paper-status')?.dataset.finished === 'true', null, { timeout: 600000 });
    await audit(page, `findings (${scheme})`);
    await shoot(page, 'findings', 'desktop', scheme);
    await ctx.close();
    // On a phone: each view as it opens from its address.
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: scheme });
    const p = await phone.newPage();
    for (const [view, query, first] of VIEWS) {
      await p.goto(`${server.url}${query}`);
      await p.locator(first).first().waitFor({ timeout: 60000 });
      await shoot(p, view, 'phone', scheme);
    }
    await phone.close();
  }
});
