import { runTest, openCalculator, settled } from './lib.mjs';
const dist = process.argv[2];
await runTest('servshot', dist, async ({ server, browser }) => {
  const page = await openCalculator(browser, server.url, server.url, { viewport: { width: 1440, height: 900 } });
  await page.selectOption('#scenario', 'serve__llama2_70b__h100_sxm_4__fp8');
  await settled(page);
  await page.locator('#runs-like-this').waitFor({ timeout: 30000 });
  await page.locator('#runs-like-this').locator('xpath=..').screenshot({ path: '/tmp/serv_card.png' });
});
