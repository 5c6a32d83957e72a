import { runTest, openCalculator, settled } from './lib.mjs';
const dist = process.argv[2];
await runTest('valshot', dist, async ({ server, browser }) => {
  const page = await openCalculator(browser, server.url, server.url, { viewport: { width: 1440, height: 900 } });
  await page.click('#to-validation');
  await page.locator('#validation-rows').waitFor({ timeout: 60000 });
  await settled(page);
  const sum = page.locator('.validation table').first();
  await sum.screenshot({ path: '/tmp/val_summary.png' });
  await page.locator('canvas').first().screenshot({ path: '/tmp/val_chart.png' });
  await page.selectOption('#filter-source', 'NVIDIA FasterTransformer GPT guide');
  await settled(page);
  await page.locator('canvas').first().screenshot({ path: '/tmp/val_chart_ft.png' });
  await page.locator('#validation-rows').screenshot({ path: '/tmp/val_rows_ft.png', clip: undefined }).catch(() => {});
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.locator('#validation-rows tbody tr').first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: '/tmp/val_rows_view.png' });
});
