import { runTest, openCalculator, settled } from './lib.mjs';
const dist = process.argv[2];
await runTest('legshot', dist, async ({ server, browser }) => {
  const page = await openCalculator(browser, server.url, server.url, { viewport: { width: 1440, height: 900 } });
  await page.click('#to-validation');
  await page.locator('#validation-rows').waitFor({ timeout: 60000 });
  await settled(page);
  const fig = page.locator('figure', { has: page.locator('#chart-validation') });
  await fig.screenshot({ path: '/tmp/val_fig.png' });
  await page.click('#to-paper').catch(() => {});
});
