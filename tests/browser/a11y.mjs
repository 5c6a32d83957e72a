// Accessibility check with axe-core in headless Chromium: the calculator (training and
// serving), the explorer with results, the lessons and famous runs, the validation page, in light and dark mode. No serious or
// critical WCAG 2 A/AA violation may remain.
//
// Usage: node tests/browser/a11y.mjs [DIST_DIR]
import { check, runTest } from './lib.mjs';

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

await runTest('a11y', dist, async ({ server, browser }) => {
  for (const scheme of ['light', 'dark']) {
    // axe is injected as a script: the test context bypasses the page's CSP for it.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: scheme, bypassCSP: true });
    const page = await ctx.newPage();
    await page.goto(server.url);
    await page.locator('#iteration-time').waitFor({ timeout: 20000 });
    await audit(page, `calculator (${scheme})`);
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
    await page.click('nav >> text=Learn');
    await audit(page, `lessons (${scheme})`);
    await page.click('nav >> text=Validation');
    await page.locator('#validation-rows').waitFor({ timeout: 10000 });
    await audit(page, `validation (${scheme})`);
    await page.click('nav >> text=Findings');
    await page.waitForFunction(() => document.querySelector('#paper-status')?.dataset.finished === 'true', null, { timeout: 600000 });
    await audit(page, `findings (${scheme})`);
    await ctx.close();
  }
});
