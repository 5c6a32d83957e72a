// Trunk post-build hook: moves Trunk's inline module loader into its own file and adds a strict
// Content-Security-Policy, so the page runs no inline script and loads nothing but its own files.
// It also writes `_headers` (read by Netlify, Cloudflare Pages and hosts that copy them) with the
// same policy plus what only a header can say: no other site may frame the page. Last, the
// precompressed copies of the final files (precompress.mjs).
//
// Runs in Trunk's staging directory (TRUNK_STAGING_DIR) for `trunk build` and `trunk serve`.
import { readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { precompress } from './precompress.mjs';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('csp.mjs: TRUNK_STAGING_DIR is not set (run it as a Trunk hook)');
  process.exit(1);
}
const file = join(dir, 'index.html');
let html = readFileSync(file, 'utf8');
const inline = /<script type="module">([\s\S]*?)<\/script>/;
const m = html.match(inline);
if (!m) {
  console.error('csp.mjs: no inline module loader found in index.html');
  process.exit(1);
}
const code = m[1].trim() + '\n';
const hash = createHash('sha256').update(code).digest('hex').slice(0, 16);
const loader = `loader-${hash}.js`;
writeFileSync(join(dir, loader), code);
html = html.replace(inline, `<script type="module" src="./${loader}"></script>`);
// Scripts: only the site's own, and WebAssembly compilation. Styles: the site's own, inline in
// index.html so that the loading screen needs no second request, plus the style attributes the
// page sets on elements (colour swatches). Nothing may be fetched, framed
// or posted anywhere else.
const policy = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
html = html.replace('<meta charset="utf-8" />', `<meta charset="utf-8" />\n    <meta http-equiv="Content-Security-Policy" content="${policy}" />`);
if (/<script(?![^>]*\bsrc=)[^>]*>/.test(html)) {
  console.error('csp.mjs: an inline script is left in index.html');
  process.exit(1);
}
writeFileSync(file, html);
writeFileSync(join(dir, '_headers'), [
  '/*',
  `  Content-Security-Policy: ${policy}; frame-ancestors 'none'`,
  '  X-Frame-Options: DENY',
  '  X-Content-Type-Options: nosniff',
  '  Referrer-Policy: no-referrer',
  '',
].join('\n'));
precompress(dir);
