// The crash notice, on the test build (target/dist-test: `#test-panic` in the address makes the
// page panic once it is up; the shipped site has no such hook, smoke.mjs checks). A panic shows
// a notice with a way back to the last scenario the user made valid and the failing one's link.
//
// Usage: node tests/browser/crash.mjs [TEST_DIST_DIR]
import { check, shots, runTest, settled } from './lib.mjs';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'target/dist-test';

await runTest('crash', dist, async ({ server, browser }) => {
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 700 } })).newPage();
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  // The user's own edit: kept in this browser.
  const nodes = page.locator('#f-system-num_nodes');
  await nodes.fill('16');
  await nodes.press('Tab');
  await page.waitForFunction(() => (localStorage.getItem('madmax.scenario') ?? '').startsWith('v=1&s='));
  await settled(page);
  const kept = await page.evaluate(() => localStorage.getItem('madmax.scenario'));
  const good = new URL(page.url()).search;
  await page.goto('about:blank');
  await page.goto(`${server.url}?${good.slice(1)}#test-panic`);
  await page.locator('#crash').waitFor({ timeout: 20000 });
  const reset = await page.locator('#crash-reset').getAttribute('href');
  const failing = await page.locator('#crash-scenario').inputValue();
  check(reset === `${server.url}?${kept}`, `the crash notice's reset link opens the kept scenario: ${reset?.slice(0, 60)}`);
  check(/\?v=1&s=/.test(failing), 'the crash notice gives the failing scenario\'s link');
  await page.screenshot({ path: join(shots, 'crash.png') });
  await page.locator('#crash-reset').click();
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  check((await page.locator('#crash').count()) === 0, 'reset reloads a working page');
  check(await page.evaluate(() => localStorage.getItem('madmax.scenario')) === kept, 'the kept scenario survived the crash');
});
