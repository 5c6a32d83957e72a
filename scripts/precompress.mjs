// Precompressed copies for static hosts that serve them (nginx's gzip_static and brotli_static,
// Caddy's `precompressed`): a gzip (.gz) and a Brotli (.br) copy of every text file (the
// measured runs' CSVs and the stories' JSON included) and WebAssembly file of the site, at the
// highest levels, so visitors download the smallest form without the host compressing on each
// request. Hosts that compress on their own ignore the copies.
//
// Called by the Trunk post-build hook (csp.mjs) once the site's files are final: as a second
// hook of the same stage it was not ordered after csp.mjs (tried: it copied an index.html
// without its policy and missed the loader file).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { join } from 'node:path';

/// Writes `F.gz` and `F.br` beside every compressible file `F` of `dir`.
export function precompress(dir) {
  for (const f of readdirSync(dir)) {
    if (!/\.(html|js|css|svg|wasm|csv|json)$/.test(f)) continue;
    const data = readFileSync(join(dir, f));
    writeFileSync(join(dir, `${f}.gz`), gzipSync(data, { level: 9 }));
    writeFileSync(join(dir, `${f}.br`), brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
    }));
  }
}
