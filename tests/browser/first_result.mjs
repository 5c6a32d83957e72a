// Benchmark of the built site: time from navigation to the first results on screen, over
// several fresh loads (median printed), and the size of what a visitor downloads.
//
// Usage: node tests/browser/first_result.mjs [DIST_DIR]
import { serve, launch } from './lib.mjs';
import { readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const kb = (n) => `${(n / 1024).toFixed(0)} KB`;
let raw = 0;
let gz = 0;
for (const f of readdirSync(dist)) {
  const data = readFileSync(join(dist, f));
  raw += data.length;
  gz += gzipSync(data, { level: 9 }).length;
  if (f.endsWith('.wasm')) {
    console.log(`wasm: ${kb(data.length)} raw, ${kb(gzipSync(data, { level: 9 }).length)} gzip (target <= 400 KB gzip)`);
  }
}
console.log(`whole site: ${kb(raw)} raw, ${kb(gz)} gzip`);

const server = await serve(dist);
const browser = await launch();
const times = [];
try {
  for (let i = 0; i < 7; i++) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    await page.goto(server.url);
    await page.locator('#iteration-time').waitFor({ timeout: 20000 });
    // Milliseconds since navigation start, as the page saw it.
    times.push(await page.evaluate(() => performance.now()));
    await ctx.close();
  }
} finally {
  await browser.close();
  server.stop();
}
times.sort((a, b) => a - b);
console.log(`time to first result (localhost, headless Chromium, 7 fresh loads): median ${times[3].toFixed(0)} ms, best ${times[0].toFixed(0)} ms, worst ${times[6].toFixed(0)} ms (target < 1000 ms)`);
