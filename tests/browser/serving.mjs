// End-to-end test of LLM serving in the calculator (headless Chromium): a serving preset's
// latency and throughput figures against the CLI, the throughput-latency chart drawn, a
// change of weight format that moves them the right way, in-flight batching's steady state and
// a burst of requests sent at once.
//
// Usage: node tests/browser/serving.mjs [DIST_DIR] [MADMAX_BIN]
import { check, shots, cli, scenarioOfLink, close, canvasInked, openCalculator, runTest, settled, pointAt, steps, cliLine } from './lib.mjs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';

async function figures(page) {
  const v = async (id) => Number(await page.locator(`#${id}`).getAttribute('data-value'));
  // A static batch shows the largest batch that fits; in flight, the requests the engine keeps.
  const inflight = await page.locator('#in-flight').count() > 0;
  return { ttft: await v('ttft'), tpot: await v('tpot'), tokens: await v('output-tokens'), maxBatch: inflight ? null : await v('max-batch'), inFlight: inflight ? await v('in-flight') : null };
}

/// Types `text` into the field `selector` and leaves it, as a person does.
async function enter(page, selector, text) {
  await page.fill(selector, text);
  await page.press(selector, 'Tab');
}

/// Starts the explorer's search and waits until it has finished.
async function searchAll(page) {
  await page.click('#explore-start');
  await page.waitForFunction(() => document.querySelector('#explore-status')?.dataset.finished === 'true', null, { timeout: 60000 });
}

async function matchesCli(page, what) {
  const want = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue())).serving;
  const got = await figures(page);
  const batch = got.inFlight === null ? got.maxBatch === want.max_batch : got.inFlight === want.in_flight && want.batching === 'inflight';
  check(want && close(got.ttft, want.ttft_ms / 1e3) && close(got.tpot, want.tpot_ms / 1e3) && close(got.tokens, want.output_tokens_per_s) && batch,
    `${what}: page TTFT ${got.ttft} s, TPOT ${got.tpot} s, ${got.tokens} tokens/s, ${got.inFlight === null ? `max batch ${got.maxBatch}` : `${got.inFlight} in flight`} equal the CLI's`);
  return got;
}

await runTest('serving', dist, async ({ server, browser }) => {
  const page = await openCalculator(browser, server.url, server.url);
  await page.selectOption('#scenario', 'serve__llama2_70b__h100_sxm_4__fp8');
  await page.locator('#ttft').waitFor({ timeout: 5000 });
  check(await page.locator('#mode-default').isChecked(), 'serving runs on the default model');
  const fp8 = await matchesCli(page, 'LLaMA-2-70B on 4 x H100, FP8');
  check(fp8.ttft > 0.05 && fp8.ttft < 5 && fp8.tpot > 0.002 && fp8.tpot < 0.1, `plausible latencies: TTFT ${fp8.ttft} s, TPOT ${fp8.tpot} s`);
  check(await page.locator('#f-task-input_tokens').isVisible() && await page.locator('#f-task-kv_format').isVisible(), 'the serving settings are in the form');
  await settled(page);
  const inked = await canvasInked(page, 'chart-serving');
  check(inked > 500, `the throughput-latency chart is drawn (${inked} inked samples)`);
  // Pointing at a point of the trade-off says its batch, tokens/s and time per token.
  const [serveTip = ''] = await pointAt(page, 'chart-serving', { xs: steps(0.1, 0.98, 0.01), ys: steps(0.1, 0.9, 0.03), first: true });
  check(/^batch \d+( \(this scenario\))?: [\d.]+ (\S+ )?tokens\/s, [\d.]+ ms per output token/.test(serveTip), `pointing at a serving point says its figures: ${serveTip}`);
  await page.locator('#serving').screenshot({ path: join(shots, 'serving-chart.png') });
  await page.mouse.move(0, 0);
  await page.locator('.headline').first().screenshot({ path: join(shots, 'serving-headline.png') });
  // FP16 weights: twice the weight bytes per decode step (latency floors of kernel launches and
  // all-reduces stay), a slower token; a twice-as-big KV cache: a smaller batch fits.
  await page.selectOption('#f-task-weight_format', 'fp16');
  await page.selectOption('#f-task-kv_format', 'fp16');
  const fp16 = await matchesCli(page, 'the same in FP16');
  check(fp16.tpot > 1.2 * fp8.tpot && fp16.maxBatch < fp8.maxBatch, `FP16: TPOT ${fp16.tpot} s (FP8 ${fp8.tpot} s), max batch ${fp16.maxBatch} (FP8 ${fp8.maxBatch})`);
  // The explain view: a decode step's formula.
  const chip = page.locator('.longest .chip', { hasText: /DecodeStep/ }).first();
  await chip.click();
  const explained = await page.locator('#op-details').textContent();
  check(/Decode step/.test(explained) && /KV cache/.test(explained), `a decode step is explained: ${explained.trim().slice(0, 100)}`);
  // Without CUDA graphs every kernel of a decode step is launched from the host: a slower token;
  // the prefill (a step of thousands of tokens, eager either way) does not change.
  await page.selectOption('#f-task-cuda_graphs', 'false');
  await page.waitForFunction((before) => Number(document.querySelector('#tpot')?.getAttribute('data-value')) > before, fp16.tpot, { timeout: 5000 });
  const eager = await matchesCli(page, 'the same without CUDA graphs');
  check(eager.tpot > fp16.tpot && close(eager.ttft, fp16.ttft), `without CUDA graphs: TPOT ${eager.tpot} s (with ${fp16.tpot} s), TTFT ${eager.ttft} s (${fp16.ttft} s)`);
  // The host's time per step (an engine that schedules and processes outputs between GPU
  // steps): every decode step waits 5 ms more, and the prefill once; a negative time is refused
  // on the field, the last figures kept.
  await enter(page, '#f-task-host_step_ms', '5');
  await page.waitForFunction((before) => Number(document.querySelector('#tpot')?.getAttribute('data-value')) > before, eager.tpot, { timeout: 5000 });
  const hosted = await matchesCli(page, 'the same with 5 ms of host time per step');
  check(close(hosted.tpot - eager.tpot, 0.005, 1e-6) && close(hosted.ttft - eager.ttft, 0.005, 1e-6), `host time: TPOT ${hosted.tpot} s (${eager.tpot} s), TTFT ${hosted.ttft} s (${eager.ttft} s)`);
  await enter(page, '#f-task-host_step_ms', '-1');
  const hostField = page.locator('.field', { has: page.locator('#f-task-host_step_ms') });
  await hostField.locator('.error-msg').waitFor({ timeout: 5000 });
  check(/must be from 0 to 1000 ms/.test(await hostField.locator('.error-msg').textContent()) && close(Number(await page.locator('#tpot').getAttribute('data-value')), hosted.tpot),
    `a negative host time is refused on the field, the last figures kept: ${await hostField.locator('.error-msg').textContent()}`);
  await enter(page, '#f-task-host_step_ms', '');
  await page.waitForFunction((before) => Number(document.querySelector('#tpot')?.getAttribute('data-value')) < before, hosted.tpot, { timeout: 5000 });
  // Top-p sampling sorts every request's logits over the vocabulary after each step's output
  // layer: each token, and the first, takes the same time more; the share link carries it.
  check(await page.locator('#f-task-sampling').isVisible(), 'the form asks how the next token is sampled');
  await page.selectOption('#f-task-sampling', 'top-p');
  await page.waitForFunction((before) => Number(document.querySelector('#tpot')?.getAttribute('data-value')) > before, eager.tpot, { timeout: 5000 });
  const topP = await matchesCli(page, 'the same with top-p sampling');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).task.sampling === 'top-p', 'the share link says top-p');
  check(close(topP.tpot - eager.tpot, topP.ttft - eager.ttft, 1e-6) && topP.tpot - eager.tpot > 1e-5,
    `top-p: TPOT ${topP.tpot} s (greedy ${eager.tpot} s), TTFT ${topP.ttft} s (${eager.ttft} s): the sampler once a token`);
  await page.selectOption('#f-task-sampling', 'greedy');
  await page.waitForFunction((before) => Number(document.querySelector('#tpot')?.getAttribute('data-value')) < before, topP.tpot, { timeout: 5000 });
  // A static batch launched kernel by kernel in 16 bits on A100s: the range of end-to-end
  // latency the published static batches served with the same plan give, as the CLI says it;
  // on H100s (too few such runs) what the published static batches say.
  const runsLine = async () => (await page.locator('#runs-sentence').textContent()).trim();
  const h100Runs = await runsLine();
  await page.selectOption('#gpu-type', 'a100_80');
  await page.locator('#runs-sentence', { hasText: 'end to end' }).waitFor({ timeout: 10000 });
  const a100Runs = await runsLine();
  const a100Link = scenarioOfLink(await page.locator('#share-link').inputValue());
  check(a100Runs === cliLine(bin, a100Link, 'Runs like this')
    && /^Expect [\d.]+ \S+ to [\d.]+ \S+ end to end: on \d+ published static batches served with TP 4 on A100s without CUDA graphs, 8 in 10 took/.test(a100Runs),
    `a static batch on 4 A100s without CUDA graphs is ranged by the published ones: ${a100Runs}`);
  check(/^On the \d+ published serving runs of static batches/.test(h100Runs) && await page.locator('#see-runs').count() === 0,
    `on H100s the static batches' note, and no link to a training band: ${h100Runs}`);
  await page.locator('#runs-like-this').screenshot({ path: join(shots, 'serving-runs-like-this.png') });
  await page.selectOption('#gpu-type', 'h100_sxm');
  await page.locator('#runs-sentence', { hasText: 'published serving runs of static batches' }).waitFor({ timeout: 10000 });
  await matchesCli(page, 'back on H100s');
  // In-flight batching: the figures are the steady state's, as the CLI computes them from the
  // share link; the first token comes after one prompt's prefill, not the whole batch's, at the
  // static batch's throughput (within 3%: the prompts ride on the decode steps' weight reads,
  // but steps of 2,048 tokens all-reduce megabytes by NCCL where a static batch's decode steps
  // take the engine's one-shot kernel; with every request the same length a static batch wastes
  // no decode slot). Both launch every kernel, as steps of 2,048 tokens do in any engine.
  await page.selectOption('#f-task-batching', 'inflight');
  await page.locator('#serving-batching', { hasText: 'In-flight batching' }).waitFor({ timeout: 5000 });
  const inflight = await matchesCli(page, 'the same with in-flight batching');
  // What the published in-flight runs say, per figure, as the CLI says it.
  await page.locator('#runs-sentence', { hasText: 'in-flight batching' }).waitFor({ timeout: 10000 });
  const inflightRuns = await runsLine();
  check(inflightRuns === cliLine(bin, scenarioOfLink(await page.locator('#share-link').inputValue()), 'Runs like this')
    && /for the time per output token \(median [\d.]+×, \d+ runs\)/.test(inflightRuns),
    `in flight, how far off each figure ran on the published runs: ${inflightRuns}`);
  await page.locator('#runs-like-this').screenshot({ path: join(shots, 'serving-inflight-runs.png') });
  check(inflight.ttft < eager.ttft / 4 && inflight.tokens > 0.97 * eager.tokens, `in flight: TTFT ${inflight.ttft} s (static ${eager.ttft} s), ${inflight.tokens} tokens/s (static ${eager.tokens})`);
  check(/Requests in flight/.test(await page.locator('#serving-figures').textContent()), 'the figures say how many requests are in flight');
  await page.locator('.longest .chip').first().click();
  const step = await page.locator('#op-details').textContent();
  check(/engine step/.test(step), `an op of the engine step is explained: ${step.trim().slice(0, 120)}`);
  // At half the requests per second full load completes: the engine keeps up, with fewer
  // requests in flight (Little's law) and a faster token; at ten times it is overloaded.
  const fullRate = Number(await page.locator('#throughput').getAttribute('data-value'));
  const half = (fullRate / 2).toPrecision(4);
  await enter(page, '#f-task-request_rate', half);
  await page.locator('#serving-batching', { hasText: 'on average' }).waitFor({ timeout: 5000 });
  const atHalf = await matchesCli(page, `in flight at ${half} requests/s`);
  check(atHalf.inFlight < inflight.inFlight && atHalf.tpot < inflight.tpot && close(Number(await page.locator('#throughput').getAttribute('data-value')), Number(half), 1e-6),
    `at ${half} requests/s: ${atHalf.inFlight} in flight (full load ${inflight.inFlight}), TPOT ${atHalf.tpot} s (${inflight.tpot} s)`);
  // The latencies' percentiles: the CLI's, and requests arriving at random wait for the
  // prefill now and then, so the 99th percentile of the first token is above its median.
  const pageRow = (id) => page.locator(`#${id} td`).evaluateAll((tds) => tds.map((td) => Number(td.dataset.value)));
  const pct = { ttft: await pageRow('p-ttft'), between: await pageRow('p-between'), e2e: await pageRow('p-e2e') };
  const wantPct = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue())).serving.percentiles_ms;
  const same = (a, b) => a.length === 3 && a.every((x, k) => close(x, b[k] / 1e3));
  check(same(pct.ttft, wantPct.ttft) && same(pct.between, wantPct.between_tokens) && same(pct.e2e, wantPct.e2e) && pct.ttft[2] > pct.ttft[0],
    `percentiles as the CLI's: first token ${pct.ttft.map((x) => (x * 1e3).toFixed(0)).join(' / ')} ms, between tokens ${pct.between.map((x) => (x * 1e3).toFixed(1)).join(' / ')} ms`);
  await page.locator('#serving-percentiles').screenshot({ path: join(shots, 'serving-percentiles.png') });
  // Prompts in steps of their own (SGLang, vLLM before V1): at the same rate every decoding
  // request waits through them, so tokens come further apart; rounds of 10 decode steps
  // (vLLM 0.6) make a new prompt wait for the round under way. Both the CLI's figures; rounds
  // with mixed steps are refused on the field, the last good figures kept.
  await page.selectOption('#f-task-prefill_steps', 'separate');
  await page.locator('#serving-batching', { hasText: 'steps of their own' }).waitFor({ timeout: 5000 });
  const separate = await matchesCli(page, `prompts in steps of their own at ${half} requests/s`);
  check(separate.tpot > atHalf.tpot, `prompts in steps of their own: TPOT ${separate.tpot} s (mixed ${atHalf.tpot} s)`);
  await enter(page, '#f-task-scheduler_steps', '10');
  await page.locator('#serving-batching', { hasText: 'rounds of 10' }).waitFor({ timeout: 5000 });
  const rounds = await matchesCli(page, 'in rounds of 10 decode steps');
  const roundsPct = { ttft: await pageRow('p-ttft'), between: await pageRow('p-between') };
  const roundsCli = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue())).serving;
  check(rounds.ttft > separate.ttft + 0.4 * roundsPct.between[0] && roundsPct.between[0] > 5 * separate.tpot && same(roundsPct.ttft, roundsCli.percentiles_ms.ttft) && same(roundsPct.between, roundsCli.percentiles_ms.between_tokens) && roundsCli.scheduler_steps === 10 && roundsCli.prefill_steps === 'separate',
    `rounds of 10: TTFT ${(rounds.ttft * 1e3).toFixed(0)} ms (each step scheduled ${(separate.ttft * 1e3).toFixed(0)} ms), tokens ${(roundsPct.between[0] * 1e3).toFixed(0)} ms apart in bunches, percentiles as the CLI's`);
  await page.locator('#serving-figures').screenshot({ path: join(shots, 'serving-rounds-figures.png') });
  await page.locator('#serving-batching').screenshot({ path: join(shots, 'serving-rounds-batching.png') });
  await page.locator('#serving-percentiles').screenshot({ path: join(shots, 'serving-rounds-percentiles.png') });
  await page.selectOption('#f-task-prefill_steps', 'mixed');
  const roundsField = page.locator('.field', { has: page.locator('#f-task-scheduler_steps') });
  await roundsField.locator('.error-msg').waitFor({ timeout: 5000 });
  check(/separate/.test(await roundsField.locator('.error-msg').textContent()) && close(Number(await page.locator('#ttft').getAttribute('data-value')), rounds.ttft),
    `rounds with mixed steps are refused on the field, the last figures kept: ${await roundsField.locator('.error-msg').textContent()}`);
  await enter(page, '#f-task-scheduler_steps', '');
  await page.locator('#serving-batching', { hasText: 'prefills prompts in chunks' }).waitFor({ timeout: 5000 });
  // Lengths spread exponentially around the prompt and generated tokens (chat traffic's long
  // tail): the same requests per second and tokens on average, so the same throughput; the
  // median request ends sooner, the 99th percentile much later; all as the CLI computes them. A
  // static batch cannot spread its lengths: refused on the field, the last figures kept.
  await page.selectOption('#f-task-length_spread', 'exponential');
  await page.locator('#serving-batching', { hasText: 'spread exponentially' }).waitFor({ timeout: 5000 });
  const spread = await matchesCli(page, `lengths spread exponentially at ${half} requests/s`);
  const spreadPct = { ttft: await pageRow('p-ttft'), between: await pageRow('p-between'), e2e: await pageRow('p-e2e') };
  const spreadCli = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue())).serving;
  check(spreadCli.length_spread === 'exponential' && same(spreadPct.ttft, spreadCli.percentiles_ms.ttft) && same(spreadPct.between, spreadCli.percentiles_ms.between_tokens) && same(spreadPct.e2e, spreadCli.percentiles_ms.e2e)
    && close(spread.tokens, atHalf.tokens, 0.005) && spreadPct.e2e[0] < 0.9 * pct.e2e[0] && spreadPct.e2e[2] > 2 * pct.e2e[2],
    `spread lengths: end to end ${spreadPct.e2e.map((x) => x.toFixed(2)).join(' / ')} s (every request alike: ${pct.e2e.map((x) => x.toFixed(2)).join(' / ')} s), ${spread.tokens} tokens/s (${atHalf.tokens}), percentiles as the CLI's`);
  await page.locator('#serving-batching').screenshot({ path: join(shots, 'serving-spread-batching.png') });
  await page.locator('#serving-percentiles').screenshot({ path: join(shots, 'serving-spread-percentiles.png') });
  await page.selectOption('#f-task-batching', 'static');
  const spreadField = page.locator('.field', { has: page.locator('#f-task-length_spread') });
  await spreadField.locator('.error-msg').waitFor({ timeout: 5000 });
  check(/needs in-flight batching/.test(await spreadField.locator('.error-msg').textContent()) && close(Number(await page.locator('#ttft').getAttribute('data-value')), spread.ttft),
    `a static batch's lengths cannot spread: refused on the field, the last figures kept: ${await spreadField.locator('.error-msg').textContent()}`);
  await page.selectOption('#f-task-batching', 'inflight');
  await page.selectOption('#f-task-length_spread', 'fixed');
  await page.locator('#serving-batching', { hasText: 'spread exponentially' }).waitFor({ state: 'detached', timeout: 5000 });
  await page.locator('#serving-batching', { hasText: 'prefills prompts in chunks' }).waitFor({ timeout: 5000 });
  await enter(page, '#f-task-request_rate', String(Math.round(fullRate * 10)));
  await page.locator('#limit-overloaded').waitFor({ timeout: 5000 });
  check(/^Overloaded: requests arrive at/.test(await page.locator('#limit-overloaded').textContent()), 'ten times the rate: overloaded, said so');
  await enter(page, '#f-task-request_rate', '');
  await page.locator('#limit-overloaded').waitFor({ state: 'detached', timeout: 5000 });
  await settled(page);
  await page.locator('.headline').first().screenshot({ path: join(shots, 'serving-inflight-headline.png') });
  await page.locator('#serving').screenshot({ path: join(shots, 'serving-inflight-chart.png') });
  // A request mix: refused while the prompt and generated tokens are set (the message says to
  // clear them); then the figures are the mix's, as the CLI computes them, and the latencies
  // spread over its kinds.
  const [inputBefore, outputBefore] = [await page.inputValue('#f-task-input_tokens'), await page.inputValue('#f-task-output_tokens')];
  await enter(page, '#f-task-request_mix', '256/128:3, 4096/512:1');
  const mixField = page.locator('.field', { has: page.locator('#f-task-request_mix') });
  await mixField.locator('.error-msg').waitFor({ timeout: 5000 });
  check(/clear the prompt and generated tokens/.test(await mixField.locator('.error-msg').textContent()), `a mix with fixed lengths says what to clear: ${await mixField.locator('.error-msg').textContent()}`);
  for (const id of ['#f-task-input_tokens', '#f-task-output_tokens']) {
    await enter(page, id, '');
  }
  await page.locator('#serving-batching', { hasText: 'Requests: 75.0% of 256 prompt + 128 generated tokens, 25.0% of 4096 prompt + 512 generated tokens' }).waitFor({ timeout: 5000 });
  await matchesCli(page, 'a request mix');
  const e2eMix = await pageRow('p-e2e');
  check(e2eMix[2] > 2 * e2eMix[0], `the mix spreads the end-to-end latency: median ${e2eMix[0].toFixed(2)} s, 99th ${e2eMix[2].toFixed(2)} s`);
  await page.locator('#serving-percentiles').screenshot({ path: join(shots, 'serving-mix-percentiles.png') });
  await enter(page, '#f-task-request_mix', '');
  await enter(page, '#f-task-input_tokens', inputBefore);
  await enter(page, '#f-task-output_tokens', outputBefore);
  await page.locator('#serving-batching', { hasText: 'Requests:' }).waitFor({ state: 'detached', timeout: 5000 });
  // A burst of ten times the requests in flight, sent at once and run step by step: the CLI's
  // figures; the wording says so; the first token mostly waits for a place: the median request
  // waits about half the burst, far longer than the steady state's first token, the last
  // ones most of it. A request
  // rate beside it is refused on the field, and the last good figures stay.
  const burstN = Math.round(inflight.inFlight * 10);
  await enter(page, '#f-task-burst_requests', String(burstN));
  await page.locator('#serving-batching', { hasText: `a burst: ${burstN.toLocaleString('en-US')} requests sent at once` }).waitFor({ timeout: 10000 });
  const burst = await matchesCli(page, `a burst of ${burstN} requests`);
  const burstCli = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue())).serving;
  const burstPct = { ttft: await pageRow('p-ttft'), between: await pageRow('p-between'), e2e: await pageRow('p-e2e') };
  check(burstCli.burst_requests === burstN && burstCli.makespan_ms > 0 && same(burstPct.ttft, burstCli.percentiles_ms.ttft) && same(burstPct.between, burstCli.percentiles_ms.between_tokens) && same(burstPct.e2e, burstCli.percentiles_ms.e2e),
    `the burst's percentiles are the CLI's (${burstCli.burst_requests} requests over ${(burstCli.makespan_ms / 1e3).toFixed(1)} s)`);
  check(burstPct.ttft[0] > 10 * inflight.ttft && burstPct.ttft[2] > 1.5 * burstPct.ttft[0] && burstPct.ttft[2] < burstCli.makespan_ms / 1e3 && /per output token/.test(await page.locator('#p-between').textContent()),
    `a burst's first token waits: mean ${burst.ttft.toFixed(2)} s (steady state ${inflight.ttft.toFixed(2)} s), median ${burstPct.ttft[0].toFixed(2)} s, 99th ${burstPct.ttft[2].toFixed(2)} s`);
  await page.locator('#serving-figures').screenshot({ path: join(shots, 'serving-burst-figures.png') });
  await page.locator('#serving-percentiles').screenshot({ path: join(shots, 'serving-burst-percentiles.png') });
  // The same burst with a feed-forward width sixteen times too large: the weights leave no KV
  // page, so the engine serves the requests one at a time. The page runs it (each lone
  // request's decode steps at once) and shows the CLI's figures, the memory marked as not
  // fitting; the old width then brings the burst's figures back.
  const ffn = await page.locator('#f-model-transformer_fc_dim').inputValue();
  await enter(page, '#f-model-transformer_fc_dim', String(Number(ffn) * 16));
  // (The summary line shows only once the figures scroll away: wait for it in the page.)
  await page.locator('#mini-summary .bad').waitFor({ state: 'attached', timeout: 30000 });
  const lone = await matchesCli(page, `the burst with no KV page left (FFN ${Number(ffn) * 16})`);
  const loneCli = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue()));
  const loneWords = await page.locator('#in-flight').textContent();
  check(!loneCli.fits && loneCli.serving.burst_requests === burstN && lone.tokens < burst.tokens && /\b1 request\b(?!s)/.test(loneWords),
    `a burst that does not fit is served one request at a time: ${lone.tokens.toFixed(1)} tokens/s against ${burst.tokens.toFixed(1)}, "${loneWords.slice(0, 40)}"`);
  await enter(page, '#f-model-transformer_fc_dim', ffn);
  await page.locator('#mini-summary .bad').waitFor({ state: 'detached', timeout: 30000 });
  check(close(Number(await page.locator('#ttft').getAttribute('data-value')), burst.ttft), 'the old width brings the burst\'s figures back');
  await enter(page, '#f-task-request_rate', '1');
  const burstField = page.locator('.field', { has: page.locator('#f-task-burst_requests') });
  await burstField.locator('.error-msg').waitFor({ timeout: 5000 });
  check(/clear one of the two/.test(await burstField.locator('.error-msg').textContent()) && close(Number(await page.locator('#ttft').getAttribute('data-value')), burst.ttft),
    `a burst with a rate is refused on the field, the burst's figures kept: ${await burstField.locator('.error-msg').textContent()}`);
  await enter(page, '#f-task-request_rate', '');
  await enter(page, '#f-task-burst_requests', '');
  await page.locator('#serving-batching', { hasText: 'steady state' }).waitFor({ timeout: 5000 });
  await page.selectOption('#f-task-batching', 'static');
  await page.locator('#serving-batching', { hasText: 'Static batching' }).waitFor({ timeout: 5000 });
  // The explorer ranks serving plans under a latency limit.
  const searched = scenarioOfLink(await page.locator('#share-link').inputValue());
  await page.click('nav >> text=Explorer');
  await page.locator('#explore-task').waitFor({ timeout: 30000 });
  check(await page.locator('#explore-latency').isVisible(), 'the explorer offers a latency limit for serving');
  await page.uncheck('#explore-codesign');
  await enter(page, '#explore-batches', '4, 16, 64');
  await enter(page, '#explore-latency', '30');
  await searchAll(page);
  const best = (await page.locator('#best-plan').textContent()).trim();
  const tpot = Number(await page.locator('#best-plan').getAttribute('data-tpot'));
  check(/tp \d/.test(best) && tpot > 0 && tpot <= 0.030, `the best serving plan meets 30 ms per token: ${best} at ${(tpot * 1e3).toFixed(1)} ms`);
  // A first-token limit too: the best plan meets both, and the table shows both latencies.
  const ttftFree = Number(await page.locator('#best-plan').getAttribute('data-ttft'));
  const ttftLimitMs = Math.round(ttftFree * 1e3 / 2);
  await enter(page, '#explore-ttft', String(ttftLimitMs));
  await searchAll(page);
  await page.locator('#best-plan').waitFor({ timeout: 5000 });
  const ttft = Number(await page.locator('#best-plan').getAttribute('data-ttft'));
  const tpot2 = Number(await page.locator('#best-plan').getAttribute('data-tpot'));
  check(ttft > 0 && ttft <= ttftLimitMs / 1e3 && tpot2 <= 0.030, `the best plan meets ${ttftLimitMs} ms to the first token and 30 ms per token: ${(ttft * 1e3).toFixed(0)} ms, ${(tpot2 * 1e3).toFixed(1)} ms`);
  const head = await page.locator('#ranked-plans thead').textContent();
  check(/first token/.test(head) && /per token/.test(head), `the ranked table shows serving latencies: ${head.trim().slice(0, 80)}`);
  await page.screenshot({ path: join(shots, 'serving-explorer.png'), fullPage: true });
  // Number formats: a format that is not one says so, naming the field; listed formats are
  // tried on every plan, each plan names its pair, the best is the CLI's, and "apply" sets it.
  await enter(page, '#explore-ttft', '');
  await enter(page, '#explore-weight-formats', 'fp16, fp4');
  await page.click('#explore-start');
  const formatProblem = page.locator('.explorer-settings .error-msg');
  await formatProblem.waitFor({ timeout: 5000 });
  check(/^Weight formats to try: "fp4" is not a number format: use fp16, bf16, fp8, int8, int4\.$/.test((await formatProblem.textContent()).trim()),
    `a format that is not one is named: ${(await formatProblem.textContent()).trim()}`);
  await enter(page, '#explore-weight-formats', 'fp16, fp8, int4');
  await enter(page, '#explore-kv-formats', 'fp16, fp8');
  await searchAll(page);
  await page.locator('#best-plan').waitFor({ timeout: 5000 });
  const formatRows = await page.locator('#ranked-plans tbody tr').allTextContents();
  const pairOf = (plan) => (plan.match(/(FP16|FP8|INT4) weights, (FP16|FP8) KV cache/) ?? [''])[0];
  const cliFormats = JSON.parse(execFileSync(bin, ['explore', '-', '--json', '--local-batches', '4,16,64', '--max-tpot-ms', '30', '--weight-formats', 'fp16,fp8,int4', '--kv-formats', 'fp16,fp8', '--top', '1000'],
    { input: JSON.stringify(searched), encoding: 'utf8' }));
  // Every pair is tried (the CLI ranks them all), and the page lists the CLI's first plans, in order.
  const pairs = new Set(cliFormats.plans.map((p) => pairOf(p.plan)).filter(Boolean));
  const listed = formatRows.map((r) => cliFormats.plans.findIndex((p) => r.includes(p.plan)));
  const bestFormats = (await page.locator('#best-plan').textContent()).trim();
  check(pairs.size === 6 && listed.length > 0 && listed.every((i, k) => i === k) && bestFormats === cliFormats.best.plan,
    `every pair of formats is tried (${[...pairs].join('; ')}); the page lists the CLI's first ${listed.length} plans (${listed.join(',')}); the best is the CLI's: ${bestFormats}`);
  await page.click('#apply-best');
  await page.locator('#ttft').waitFor({ timeout: 5000 });
  const appliedFormats = scenarioOfLink(await page.locator('#share-link').inputValue()).task;
  check(appliedFormats.weight_format === cliFormats.best.task.weight_format && appliedFormats.kv_format === cliFormats.best.task.kv_format,
    `"apply" sets the formats: ${appliedFormats.weight_format} weights, ${appliedFormats.kv_format} KV cache`);
  for (const problem of page.problems) check(false, problem);
});
