// End-to-end test of the calculator in headless Chromium: what a newcomer does (product.md
// journeys 1-5 and 8), checked against the CLI, with screenshots to look at.
//
// Usage: node tests/browser/calculator.mjs [DIST_DIR] [MADMAX_BIN]
import { watchedPage, check, shots, cli, cliLine, scenarioOfLink, linkOf, close, canvasInked, runTest, settled, pointAt, steps } from './lib.mjs';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';

/// The numbers the page shows.
async function shown(page) {
  const v = async (id) => Number(await page.locator(`#${id}`).getAttribute('data-value'));
  return { iteration_s: await v('iteration-time'), throughput: await v('throughput') };
}

/// Checks the page's numbers against the CLI run on the scenario in the page's share link.
async function matchesCli(page, what) {
  await settled(page);
  const link = await page.locator('#share-link').inputValue();
  const want = cli(bin, scenarioOfLink(link));
  const got = await shown(page);
  check(close(got.iteration_s, want.iteration_ms / 1000) && close(got.throughput, want.throughput),
    `${what}: page ${got.iteration_s} s and ${got.throughput} samples/s equal the CLI's ${want.iteration_ms / 1000} s and ${want.throughput}`);
  // Every headline figure as the CLI's JSON has it: one structure, two faces (#22 item 3).
  for (const f of want.figures) {
    const fig = page.locator('.figure', { has: page.locator(`#${f.id}`) });
    const [label, value, detail] = await Promise.all(['dt', `#${f.id}`, '.figure-sub'].map((sel) => fig.locator(sel).textContent()));
    check(label === f.label && value === f.value && detail === f.detail && close(Number(await page.locator(`#${f.id}`).getAttribute('data-value')), f.raw),
      `${what}: the page's ${f.id} figure is the CLI's: ${label} ${value} (${detail})`);
  }
  // What published runs of its kind measured: the same sentence as the CLI's, or none.
  const runs = page.locator('#runs-sentence');
  const gotRuns = (await runs.count()) ? (await runs.textContent()).trim() : null;
  const wantRuns = cliLine(bin, scenarioOfLink(link), 'Runs like this');
  check(gotRuns === wantRuns, `${what}: runs like this: ${gotRuns}`);
  // The timeline's critical path: what it runs through, as the CLI says it.
  const wantPath = cliLine(bin, scenarioOfLink(link), 'Critical path');
  const gotPath = (await page.locator('#critical-path').textContent()).trim();
  check(wantPath !== null && gotPath.endsWith(`: ${wantPath}`), `${what}: the critical path as the CLI says it: ${gotPath}`);
  return got;
}

/// Types into a text field and leaves it (the page recomputes on change).
/// Every drop-down shows the option the page marks as chosen (its `selected` attribute): a
/// select whose node was reused for another would show the other's choice.
async function selectsAgree(page, when) {
  const wrong = await page.evaluate(() => [...document.querySelectorAll('select')]
    .filter((s) => [...s.options].some((o) => o.hasAttribute('selected')) && !s.options[s.selectedIndex]?.hasAttribute('selected'))
    .map((s) => `${s.id}: shows ${s.value}`));
  check(wrong.length === 0, `${when}: every drop-down shows its own choice ${wrong.join(', ')}`);
}

// Opens the folded GPU figures and utilisation factors where they are closed (the fold closes
// again once a problem in it is mended).
async function showGpuFigures(page) {
  if (!(await page.locator('#f-system-sm_count').isVisible())) {
    await page.locator('summary', { hasText: 'GPU figures and utilisation factors' }).click();
  }
}

async function type(page, selector, text) {
  const f = page.locator(selector);
  await f.fill(text);
  await f.press('Tab');
}


await runTest('calculator', dist, async ({ server, browser }) => {
  // Journey 1: open the site; a preset is already computed. (How fast is `make bench`'s to
  // print: a test on a busy machine cannot tell a slow page from a slow machine.)
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await watchedPage(ctx, server.url);
  const t0 = Date.now();
  await page.goto(server.url);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  console.log(`calculator: first results after ${Date.now() - t0} ms (make bench measures it on a quiet machine; target < 1000 ms)`);
  const head = await page.locator('.headline').textContent();
  check(/Iteration time/.test(head) && /Throughput/.test(head) && /Exposed communication/.test(head),
    'the headline says iteration time, throughput and exposed communication');
  const first = await matchesCli(page, 'default preset');
  // Every field's help: one line at rest (the form stays short), in full as soon as the pointer
  // is over the field or it has focus (#20 item 11: it opened only on focus).
  const layersHelp = page.locator('.field', { has: page.locator('#f-model-num_transformer_layers') }).locator('.help');
  const helpHeight = () => layersHelp.evaluate((e) => e.getBoundingClientRect().height);
  const oneLine = await helpHeight();
  await page.hover('#f-model-num_transformer_layers');
  await page.waitForFunction((h) => document.querySelector('#f-model-num_transformer_layers')?.closest('.field')?.querySelector('.help')?.getBoundingClientRect().height > 1.5 * h, oneLine);
  const hovered = await helpHeight();
  await page.mouse.move(0, 0);
  await page.waitForFunction((h) => document.querySelector('#f-model-num_transformer_layers')?.closest('.field')?.querySelector('.help')?.getBoundingClientRect().height < 1.2 * h, oneLine);
  await page.focus('#f-model-num_transformer_layers');
  await page.waitForFunction((h) => document.querySelector('#f-model-num_transformer_layers')?.closest('.field')?.querySelector('.help')?.getBoundingClientRect().height > 1.5 * h, oneLine);
  check(hovered > 1.5 * oneLine && /\w{3,}/.test(await layersHelp.textContent()),
    `a field's help is one line (${oneLine.toFixed(0)} px) until pointed at or focused, then whole (${hovered.toFixed(0)} px)`);
  await page.locator('#f-model-num_transformer_layers').blur();
  // MFU and HFU on stated bases: model FLOP/s per GPU, and the HFU the CLI prints.
  const hfu = page.locator('#hfu');
  const wantHfu = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue())).hfu;
  const hfuText = await hfu.textContent();
  check(close(Number(await hfu.getAttribute('data-value')), wantHfu) && /FLOP\/s per GPU of .* peak; HFU \d/.test(hfuText),
    `the MFU card states its basis and the HFU: ${hfuText}`);
  const runsText = await page.locator('#runs-like-this').textContent().catch(() => '');
  check(/^Expect \d.* to \d.*: on \d+ published DP runs on H100s, 8 in 10 took /.test(runsText),
    `the headline says what published runs like this measured: ${runsText}`);
  // The evidence: the validation page, filtered on those runs.
  const runsCount = runsText.match(/on (\d+) published/)[1];
  await page.click('#see-runs');
  await page.locator('#validation-shown').waitFor();
  const shownRuns = await page.locator('#validation-shown').innerText();
  check(shownRuns.startsWith(`${runsCount} of `) && (await page.locator('#filter-parallelism').inputValue()) === 'DP'
    && (await page.locator('#filter-gpu').inputValue()) === 'H100', `"See these runs" lists them: ${shownRuns}`);
  await page.click('nav >> text=Calculator');
  await page.locator('#iteration-time').waitFor();
  await settled(page);
  for (const id of ['chart-breakdown', 'chart-timeline', 'chart-pretrain-gpus', 'chart-pretrain-batch',
    'chart-inference-gpus', 'chart-inference-batch', 'chart-memory']) {
    check((await canvasInked(page, id)) > 200, `chart ${id} is drawn`);
  }
  await page.screenshot({ path: join(shots, 'calculator-desktop.png'), fullPage: true });


  // Hover and click an op of the timeline: its details and formula appear.
  const tl = page.locator('#chart-timeline');
  await tl.scrollIntoViewIfNeeded();
  const box = await tl.boundingBox();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.45);
  const tip = await page.locator('.tooltip').textContent().catch(() => '');
  check(/On the critical path|Slack \d/.test(tip), `pointing at the timeline shows an op tooltip with its slack: ${tip}`);
  await page.mouse.click(box.x + box.width * 0.5, box.y + box.height * 0.45);
  await page.locator('#op-formula').waitFor({ timeout: 5000 });
  const slack = await page.locator('#op-slack').textContent();
  check(slack === tip.slice(tip.length - slack.length), `the explain view says the op's slack as the tooltip did: ${slack}`);
  await page.locator('figure.timeline').screenshot({ path: join(shots, 'timeline-critical-path.png') });
  // What the op would save at twice its speed: an op on the path saves some of the iteration.
  const whatIf = await page.locator('#op-what-if').textContent();
  check(/^At twice its speed, this op/.test(whatIf) && (!slack.startsWith('On the critical path') || / less, -/.test(whatIf)),
    `the explain view says what the op at twice its speed would save: ${whatIf}`);
  const formula = await page.locator('#op-formula').textContent();
  check(/=.*=/.test(formula), `clicking an op explains it: ${formula.trim().slice(0, 90)}`);
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain.png') });
  // An attention block's backward pass: its gradient GEMMs, the fused kernel's slower FLOPs,
  // and the scores it computes again, each a term with its value.
  await page.locator('.longest .chip', { hasText: /^Attn\d+_b\./ }).first().click();
  const fused = await page.locator('#op-details').textContent();
  check(/t_s \/ 2/.test(fused) && /computes Q K\^T again/.test(fused) && /k\s*0\.769/.test(fused) && /t_dgrad/.test(fused),
    `the fused attention kernel is explained: ${fused.trim().slice(0, 160)}`);
  // Its element-wise work is the backward pass's own, split between the gradient passes.
  check(/t_ew_a/.test(fused) && /t_ew_w/.test(fused) && /residual gradients summed/.test(fused) && /bias gradient/.test(fused),
    `the backward pass's element-wise kernels are explained: ${fused.match(/t_ew_a[^]*?HBM speed/)?.[0]?.slice(0, 160)}`);
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-attention.png') });
  // An FSDP weight gather of the backward pass says why the layer waits for it: the model queues
  // it behind the previous layer's reduce-scatter, where FSDP would issue it first.
  await page.locator('.longest .chip', { hasText: /_b_c_wgt_ag\./ }).first().click();
  const gather = await page.locator('#op-details').textContent();
  check(/queues it behind the previous layer's gradient reduce-scatter/.test(gather) && /FSDP issues it before that reduce-scatter/.test(gather),
    `a backward weight gather says what the model does with it: ${gather.match(/Prefetched[^.]*\./)?.[0]}`);
  // The same by keyboard: the longest ops are buttons.
  await page.locator('.longest .chip').first().focus();
  await page.keyboard.press('Enter');
  const longest = await page.locator('#op-details h3').textContent();
  check((await page.locator('.longest .chip.current').count()) === 1 && /GEMMs|all-gather|All-reduce|Reduce-scatter|All-to-all|block|Pipeline|Optimizer|Logits/i.test(longest),
    `the longest op opens by keyboard: ${longest.trim().slice(0, 80)}`);

  // Journey 2: another GPU and another node count; everything updates at once.
  await page.selectOption('#gpu-type', 'a100_80');
  await type(page, '#f-system-num_nodes', '8');
  const summary = await page.locator('#scenario-summary').textContent();
  check(/64 GPUs \(8 nodes x 8\)/.test(summary), `summary follows the cluster: ${summary}`);
  const a100 = await matchesCli(page, 'A100 80GB, 8 nodes');
  check(a100.iteration_s !== first.iteration_s, 'the iteration time changed');
  // One node is "1 node", not "1 nodes" (#20 item 11).
  await type(page, '#f-system-num_nodes', '1');
  await page.waitForFunction(() => /8 GPUs/.test(document.querySelector('#scenario-summary')?.textContent));
  const oneNode = await page.locator('#scenario-summary').textContent();
  check(/8 GPUs \(1 node x 8\)/.test(oneNode), `one node is named in the singular: ${oneNode}`);
  // Back to the opening cluster's H100s and 16 nodes.
  await page.selectOption('#gpu-type', 'h100_sxm');
  await type(page, '#f-system-num_nodes', '16');
  check(/128 GPUs \(16 nodes x 8\)/.test(await page.locator('#scenario-summary').textContent()), 'summary follows the cluster back');
  const h100 = await matchesCli(page, 'H100, 16 nodes');
  // Beside the live tensors' peak, the memory nvidia-smi would show: the caching allocator's
  // reserve, 2 GB of workspaces plus the rest over 0.85, within the GPU's memory.
  const peak = Number(await page.locator('#memory').getAttribute('data-value'));
  const smi = Number(await page.locator('#memory-shown').getAttribute('data-value'));
  check(Math.abs(smi - Math.min(2e9 + (peak - 2e9) / 0.85, 85.5e9)) < 1e3 && smi > peak,
    `memory as nvidia-smi shows it: ${smi} B beside the peak's ${peak} B`);
  // The GPU's SMs come with it (132 on an H100, 108 on the A100 picked above) and the link
  // carries them; without them no GEMM pays for a part-full last wave of tiles, so the step
  // is shorter; 0 SMs is refused under the field with the last results kept. The field is
  // among the GPU figures, folded until opened.
  await showGpuFigures(page);
  await page.locator('#f-system-sm_count').waitFor();
  check(await page.locator('#f-system-sm_count').inputValue() === '132'
    && scenarioOfLink(await page.locator('#share-link').inputValue()).system.sm_count === 132,
    `the H100's 132 SMs are in the form and the link: ${await page.locator('#f-system-sm_count').inputValue()}`);
  await type(page, '#f-system-sm_count', '');
  const noWaves = await matchesCli(page, 'H100, 16 nodes, no SM count');
  check(noWaves.iteration_s < h100.iteration_s && scenarioOfLink(await page.locator('#share-link').inputValue()).system.sm_count === undefined,
    `without the SM count the waves cost nothing: ${h100.iteration_s} -> ${noWaves.iteration_s} s`);
  await type(page, '#f-system-sm_count', '0');
  await page.waitForFunction(() => /at least 1/.test(document.querySelector('#f-system-sm_count')?.closest('.field')?.querySelector('.error-msg')?.textContent ?? ''));
  check(await page.locator('.stale-banner').isVisible() && (await shown(page)).iteration_s === noWaves.iteration_s, '0 SMs: a message under the field, the last results stay');
  await type(page, '#f-system-sm_count', '132');
  await settled(page);
  check(!(await page.locator('.stale-banner').isVisible()) && (await shown(page)).iteration_s === h100.iteration_s,
    'typing the 132 SMs back gives the H100 figures again');
  // Nodes far apart: a link latency in ms slows every collective across them, as the CLI says.
  await type(page, '#f-system-nic_latency_s', '10');
  const far = await matchesCli(page, 'H100, 16 nodes 10 ms apart');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).system.nic_latency_s === 0.01
    && far.iteration_s > h100.iteration_s, `a 10 ms link latency is 0.01 s in the link and slows the step: ${h100.iteration_s} -> ${far.iteration_s} s`);
  await type(page, '#f-system-nic_latency_s', '');
  check((await shown(page)).iteration_s === h100.iteration_s, 'clearing the latency gives a datacenter network again');
  // GEMMs streaming at their own share of HBM bandwidth: half of it, as the CLI says, carried
  // by the link; a share above 1 is refused under the field with the last results kept, and
  // clearing it streams GEMMs at the HBM utilisation again.
  await showGpuFigures(page);
  await type(page, '#f-system-gemm_bw_util', '0.4');
  const slowGemms = await matchesCli(page, 'H100, 16 nodes, GEMMs at 0.4 of HBM bandwidth');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).system.gemm_bw_util === 0.4
    && slowGemms.iteration_s >= h100.iteration_s, `GEMMs at 0.4 of HBM bandwidth: in the link, ${h100.iteration_s} -> ${slowGemms.iteration_s} s`);
  await type(page, '#f-system-gemm_bw_util', '1.5');
  await page.waitForFunction(() => /fraction/.test(document.querySelector('#f-system-gemm_bw_util')?.closest('.field')?.querySelector('.error-msg')?.textContent ?? ''));
  check(await page.locator('.stale-banner').isVisible() && (await shown(page)).iteration_s === slowGemms.iteration_s, 'a GEMM share of 1.5: a message under the field, the last results stay');
  await showGpuFigures(page);
  await type(page, '#f-system-gemm_bw_util', '');
  await settled(page);
  check((await shown(page)).iteration_s === h100.iteration_s && scenarioOfLink(await page.locator('#share-link').inputValue()).system.gemm_bw_util === undefined,
    'clearing the GEMM share streams GEMMs at the HBM utilisation again');
  // ZeRO-1 within each node (InternLM's zero1, zero_shard_ranks): on plain data parallelism
  // over the 16 nodes, one copy of the optimizer states per node instead of one over all 128
  // GPUs: more memory per GPU, the updated weights gathered over NVLink. The page agrees with
  // the CLI, the link carries it, a group that does not divide the ranks is refused naming the
  // field while the last result stays, and clearing it restores ZeRO over every rank.
  const strategyBefore = await page.locator('#transformer_parallel-0-strategy').inputValue();
  const zeroBefore = await page.locator('#f-task-zero_stage').inputValue();
  await page.selectOption('#transformer_parallel-0-strategy', 'ddp');
  await page.selectOption('#f-task-zero_stage', '1');
  const zeroAll = await matchesCli(page, 'Llama 2 70B, ZeRO-1 over 128 H100s');
  const zeroAllMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  // How ZeRO-1 sums the gradients: reduce-scattered (Megatron-core's distributed optimizer, the
  // default) or all-reduced (InternLM's ZeRO-1), twice the bytes over the network.
  await page.selectOption('#f-task-zero1_all_reduce', 'true');
  await page.locator('.field', { has: page.locator('#f-task-zero1_all_reduce') }).hover();
  await page.locator('.field', { has: page.locator('#f-task-zero_stage') }).locator('..').screenshot({ path: `${shots}/zero1-all-reduce.png` });
  const zeroAllReduced = await matchesCli(page, 'Llama 2 70B, ZeRO-1 over 128 H100s, gradients all-reduced');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).task.zero1_all_reduce === true
    && zeroAllReduced.iteration_s > zeroAll.iteration_s,
    `ZeRO-1 that all-reduces its gradients: ${zeroAllReduced.iteration_s} s against ${zeroAll.iteration_s} s reduce-scattering them, and the link says so`);
  await page.selectOption('#f-task-zero1_all_reduce', 'false');
  check((await matchesCli(page, 'ZeRO-1 reduce-scattering again')).iteration_s === zeroAll.iteration_s, 'off: the gradients reduce-scattered again');
  // How ZeRO-1 returns the updated weights: one all-gather (the default) or one broadcast from
  // each of the 128 ranks in turn (InternLM's hybrid ZeRO), each paying the ring's latency.
  await page.selectOption('#f-task-zero1_broadcast', 'true');
  const zeroBroadcast = await matchesCli(page, 'Llama 2 70B, ZeRO-1 over 128 H100s, updated weights broadcast');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).task.zero1_broadcast === true
    && zeroBroadcast.iteration_s > zeroAll.iteration_s,
    `ZeRO-1 that broadcasts the updated weights from each rank: ${zeroBroadcast.iteration_s} s against ${zeroAll.iteration_s} s gathering them, and the link says so`);
  await page.selectOption('#f-task-zero1_broadcast', 'false');
  check((await matchesCli(page, 'ZeRO-1 gathering again')).iteration_s === zeroAll.iteration_s, 'off: the updated weights gathered again');
  // FP8 training with the blocks' weights kept and gathered in FP8 (fp8_param_gather, NeMo's
  // fp8_params): the gather after the step moves half the bytes and no 16-bit copy of the
  // blocks' weights is kept, so the step is shorter and the memory smaller; the page agrees
  // with the CLI, the link carries it, and switching it off restores FP8 training as it was.
  await page.selectOption('#f-task-fp8', 'true');
  const zeroFp8 = await matchesCli(page, 'Llama 2 70B, ZeRO-1, FP8 training');
  const zeroFp8Memory = Number(await page.locator('#memory').getAttribute('data-value'));
  await page.selectOption('#f-task-fp8_param_gather', 'true');
  await page.locator('.field', { has: page.locator('#f-task-fp8_param_gather') }).hover();
  await page.locator('.field', { has: page.locator('#f-task-fp8_param_gather') }).screenshot({ path: `${shots}/fp8-param-gather.png` });
  const zeroFp8Params = await matchesCli(page, 'Llama 2 70B, ZeRO-1, FP8 weights gathered');
  const zeroFp8ParamsMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).task.fp8_param_gather === true
    && zeroFp8Params.iteration_s < zeroFp8.iteration_s && zeroFp8ParamsMemory < zeroFp8Memory,
    `FP8 weights gathered: ${zeroFp8Params.iteration_s} s and ${zeroFp8ParamsMemory} B against ${zeroFp8.iteration_s} s and ${zeroFp8Memory} B, and the link says so`);
  await page.selectOption('#f-task-fp8_param_gather', 'false');
  check((await matchesCli(page, 'FP8 weights in 16 bits again')).iteration_s === zeroFp8.iteration_s, 'off: the weights gathered in 16 bits again');
  await page.selectOption('#f-task-fp8', 'false');
  check((await matchesCli(page, 'ZeRO-1 in 16 bits again')).iteration_s === zeroAll.iteration_s, 'FP8 training off: as before');
  check(await page.locator('#f-task-zero_shard_ranks').isVisible(), 'training offers the ZeRO-1 group');
  await type(page, '#f-task-zero_shard_ranks', '8');
  const zeroNode = await matchesCli(page, 'Llama 2 70B, ZeRO-1 within each node');
  const zeroNodeMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).task.zero_shard_ranks === 8
    && zeroNodeMemory > zeroAllMemory && zeroNode.iteration_s !== zeroAll.iteration_s,
    `ZeRO-1 within each node: ${zeroNodeMemory} B against ${zeroAllMemory} B over every rank, ${zeroNode.iteration_s} s against ${zeroAll.iteration_s} s, and the link says zero_shard_ranks 8`);
  await type(page, '#f-task-zero_shard_ranks', '12');
  await page.locator('.field.invalid').first().waitFor({ timeout: 20000 });
  const groupError = (await page.locator('.field.invalid').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
  check(/ZeRO-1 group/.test(groupError) && /use 8/.test(groupError) && (await shown(page)).iteration_s === zeroNode.iteration_s,
    `a ZeRO-1 group of 12 of 128 ranks is refused, naming the field and a fix, and the last result stays: ${groupError}`);
  await type(page, '#f-task-zero_shard_ranks', '');
  check((await matchesCli(page, 'ZeRO-1 over every rank again')).iteration_s === zeroAll.iteration_s, 'empty: ZeRO-1 over every rank again');
  await page.selectOption('#f-task-zero_stage', zeroBefore);
  await page.selectOption('#transformer_parallel-0-strategy', strategyBefore);
  await settled(page);
  check((await shown(page)).iteration_s === h100.iteration_s, `the scenario's own plan (${strategyBefore}, ZeRO ${zeroBefore || 'default'}) again: the H100 figures`);
  // Two sites: the wide-area bandwidth is asked for by name; with it, collectives that span
  // the sites slow the step as the CLI says, and the link carries the three keys.
  await type(page, '#f-system-num_sites', '2');
  await page.waitForFunction(() => /wide-area bandwidth/.test(document.querySelector('#f-system-wan_bw')?.closest('.field')?.querySelector('.error-msg')?.textContent ?? ''));
  check(await page.locator('.stale-banner').isVisible(), 'two sites without their bandwidth: the last results stay, stale');
  await type(page, '#f-system-wan_bw', '100');
  await type(page, '#f-system-wan_latency_s', '5');
  await page.waitForFunction(() => /in 2 sites/.test(document.querySelector('#scenario-summary')?.textContent));
  const split = await matchesCli(page, 'H100, 16 nodes in 2 sites, 100 Gb/s and 5 ms between them');
  const linked = scenarioOfLink(await page.locator('#share-link').inputValue()).system;
  check(linked.num_sites === 2 && linked.wan_bw === 12.5e9 && linked.wan_latency_s === 0.005 && split.iteration_s > h100.iteration_s,
    `two sites 100 Gb/s and 5 ms apart are in the link and slow the step: ${h100.iteration_s} -> ${split.iteration_s} s`);
  check(/128 GPUs \(16 nodes x 8 in 2 sites\)/.test(await page.locator('#scenario-summary').textContent()), 'the summary names the sites');
  await page.locator('#f-system-num_sites').scrollIntoViewIfNeeded();
  await page.locator('details.card', { has: page.locator('#f-system-num_sites') }).screenshot({ path: join(shots, 'sites.png') });
  await type(page, '#f-system-num_sites', '3');
  await page.waitForFunction(() => /16 nodes do not split evenly over 3 sites/.test(document.querySelector('#f-system-num_sites')?.closest('.field')?.querySelector('.error-msg')?.textContent ?? ''));
  check((await shown(page)).iteration_s === split.iteration_s, 'three sites for 16 nodes: a message under the field, the last results stay');
  await type(page, '#f-system-num_sites', '');
  await type(page, '#f-system-wan_bw', '');
  await type(page, '#f-system-wan_latency_s', '');
  check((await shown(page)).iteration_s === h100.iteration_s, 'one site again gives the datacenter figures');
  // A second GPU type on half the nodes: the slower A100s pace every step, as the CLI says,
  // and a line says so; the node count is a field of its own; None removes the type.
  await page.selectOption('#second-gpu-type', 'a100_80');
  await page.waitForFunction(() => document.querySelector('#limit-paced') !== null);
  check(await page.locator('#f-system-second_gpu_nodes').inputValue() === '8', 'the second type goes on half the 16 nodes');
  const mixed = await matchesCli(page, 'H100 and A100 nodes');
  const paced = await page.locator('#limit-paced').textContent();
  check(/^Paced by the NVIDIA A100 SXM 80GB nodes: .* the other nodes, which alone would take /.test(paced) && mixed.iteration_s > h100.iteration_s,
    `the A100s pace the step (${h100.iteration_s} -> ${mixed.iteration_s} s): ${paced.slice(0, 120)}`);
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).system.second_gpu_nodes === 8, 'the link carries the second type');
  await type(page, '#f-system-second_gpu_nodes', '16');
  await page.waitForFunction(() => /fewer than the cluster's 16 nodes/.test(document.querySelector('#f-system-second_gpu_nodes')?.closest('.field')?.querySelector('.error-msg')?.textContent ?? ''));
  check((await shown(page)).iteration_s === mixed.iteration_s, 'every node of the second type: a message under the field, the last results stay');
  await type(page, '#f-system-second_gpu_nodes', '8');
  await page.locator('details.card', { has: page.locator('#second-gpu-type') }).screenshot({ path: join(shots, 'second-gpu.png') });
  await page.selectOption('#second-gpu-type', '');
  await page.waitForFunction(() => document.querySelector('#limit-paced') === null);
  check((await shown(page)).iteration_s === h100.iteration_s && (await page.locator('#f-system-second_gpu_nodes').count()) === 0,
    'no second type: the H100 figures again, and no node count');
  await selectsAgree(page, 'after the GPU types changed');
  // The results stay in view next to the hardware fields just edited: their column fills the
  // window and scrolls by itself (back at its top, the headline shows).
  const pane = await page.locator('section.outputs').evaluate((e) => {
    const r = e.getBoundingClientRect();
    e.scrollTop = 0;
    const h = document.getElementById('iteration-time').getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, headline: h.top >= 0 && h.bottom <= window.innerHeight };
  });
  const scrolled = await page.evaluate(() => window.scrollY);
  check(scrolled > 500 && pane.top >= 0 && pane.top < 20 && pane.bottom <= 900 && pane.headline,
    `with the form scrolled ${scrolled} px down to the nodes field, the results fill the window (${pane.top.toFixed(0)}-${pane.bottom.toFixed(0)} px) and show the iteration time`);

  // Journey 3: an impossible plan. A message under the field; the last results stay, stale.
  await type(page, '#transformer_parallel-0-degree', '96');
  const msg = await page.locator('#spec-transformer_parallel .error-msg').first().textContent();
  check(/multiply to 96/.test(msg) && /128 GPUs/.test(msg) && /; set (its degree|the last level) \(\w+\) to \d+/.test(msg), `the plan error names the rule and the fix: ${msg}`);
  check(await page.locator('.stale-banner').isVisible(), 'results are marked stale');
  const stale = await shown(page);
  check(stale.iteration_s === h100.iteration_s, 'the last valid results stay on screen');
  await page.screenshot({ path: join(shots, 'stale.png') });
  await type(page, '#transformer_parallel-0-degree', '128');
  check(!(await page.locator('.stale-banner').isVisible()), 'fixing the plan clears the stale mark');
  // Typed numbers: a negative count says what is wrong with it; "4,096" is 4096.
  const layers = page.locator('#f-model-num_transformer_layers');
  const layersBefore = await layers.inputValue();
  await type(page, '#f-model-num_transformer_layers', '-5');
  const layersError = page.locator('.field', { has: layers }).locator('.error-msg');
  check(/at least 1, got -5/.test(await layersError.textContent()), `a negative layer count is named as such: ${await layersError.textContent()}`);
  await type(page, '#f-model-num_transformer_layers', layersBefore);
  // Results follow typing: a pause is enough, no Tab or Enter.
  const beforeTyping = await page.locator('#iteration-time').getAttribute('data-value');
  await layers.fill(String(Number(layersBefore) * 2));
  await page.waitForFunction((b) => document.querySelector('#iteration-time')?.dataset.value !== b, beforeTyping, { timeout: 30000 }).catch(() => {});
  const afterTyping = await page.locator('#iteration-time').getAttribute('data-value');
  check(afterTyping !== beforeTyping && await layers.evaluate((e) => e === document.activeElement),
    `typing ${Number(layersBefore) * 2} layers updates the results while the field keeps the focus (${beforeTyping} s -> ${afterTyping} s)`);
  // Typing the old value back and leaving at once fires no change event: leaving applies it.
  await type(page, '#f-model-num_transformer_layers', layersBefore);
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.num_transformer_layers === Number(layersBefore)
    && await page.locator('#iteration-time').getAttribute('data-value') === beforeTyping,
    `typing the old value back and leaving restores ${layersBefore} layers and the results`);
  const restored = await shown(page);
  // The page rewrites what was typed once it has read it: wait for that (a state, not a time)
  // and for the results, then check both.
  const rewritten = (want) => page.waitForFunction((w) => document.querySelector('#f-model-transformer_seq_len')?.value === w, want, { timeout: 30000 })
    .catch(() => {}).then(() => settled(page));
  await type(page, '#f-model-transformer_seq_len', '4,096');
  await rewritten('4096');
  const seq = await page.locator('#f-model-transformer_seq_len').inputValue();
  check(!(await page.locator('.stale-banner').isVisible()) && seq === '4096' && (await shown(page)).iteration_s === restored.iteration_s,
    `"4,096" is read as 4096 (shown ${seq}, the same results)`);
  // "2k" is 2,000, as the page writes numbers (SI): the field then says so.
  await type(page, '#f-model-transformer_seq_len', '2k');
  await rewritten('2000');
  const twoK = await page.locator('#f-model-transformer_seq_len').inputValue();
  check(!(await page.locator('.stale-banner').isVisible()) && twoK === '2000' && (await shown(page)).iteration_s < restored.iteration_s,
    `"2k" is read as 2000 (shown ${twoK}): shorter sequences, a shorter step`);
  await type(page, '#f-model-transformer_seq_len', '4096');

  // The default model: a 3-D plan (tensor x pipeline x data) with micro-batches. The timeline
  // shows the pipeline bubble, the explain view its formula, memory is checked against HBM.
  check(await page.locator('#mode-default').isChecked(), 'the calculator is on the default model');
  await page.selectOption('#transformer_parallel-0-strategy', 'tp');
  await type(page, '#transformer_parallel-0-degree', '8');
  await page.locator('#spec-transformer_parallel button.link', { hasText: 'add level' }).click();
  await page.selectOption('#transformer_parallel-1-strategy', 'pp');
  await type(page, '#transformer_parallel-1-degree', '4');
  await page.locator('#spec-transformer_parallel button.link', { hasText: 'add level' }).click();
  await page.selectOption('#transformer_parallel-2-strategy', 'ddp');
  await type(page, '#transformer_parallel-2-degree', '4');
  await type(page, '#f-task-local_transformer_bs', '16');
  await type(page, '#f-task-micro_batch', '1');
  check(!(await page.locator('.stale-banner').isVisible()), `tp 8 x pp 4 x ddp 4 is valid: ${await page.locator('.problems').textContent().catch(() => '')}`);
  await matchesCli(page, 'tp 8 x pp 4 x ddp 4, 16 micro-batches');
  check(/idle \(pipeline bubble/.test(await page.locator('.legend').first().textContent()), 'the breakdown shows the pipeline bubble as idle time');
  // With 4 micro-batches on 4 stages the bubble makes the overlapped step longer than all the
  // work serialized: the chart's axis covers it, and the overlapped bar is drawn to its length
  // (#20 item 2: the axis ended at the serialized total and cut it).
  await type(page, '#f-task-micro_batch', '4');
  const bubbly = await matchesCli(page, 'tp 8 x pp 4 x ddp 4, 4 micro-batches');
  const cliBubbly = cli(bin, scenarioOfLink(await page.locator('#share-link').inputValue()));
  const wantRatio = (cliBubbly.compute_ms + Math.max(cliBubbly.exposed_comm_ms, 0) + cliBubbly.idle_ms) / (cliBubbly.compute_ms + cliBubbly.comm_ms);
  await settled(page);
  const bars = await page.evaluate(() => {
    const canvas = document.getElementById('chart-breakdown');
    const { width, height } = canvas;
    const px = canvas.getContext('2d').getImageData(0, 0, width, height).data;
    // The bars' colours, as the legend shows them.
    const probe = document.createElement('canvas').getContext('2d');
    const rgbOf = (css) => { probe.fillStyle = css; probe.fillRect(0, 0, 1, 1); return [...probe.getImageData(0, 0, 1, 1).data.slice(0, 3)]; };
    const colours = [...document.querySelectorAll('.legend')[0].querySelectorAll('.swatch')].map((s) => rgbOf(s.style.background));
    const isBar = (i) => colours.some((c) => Math.abs(px[i] - c[0]) + Math.abs(px[i + 1] - c[1]) + Math.abs(px[i + 2] - c[2]) <= 6);
    // Each lane: the rows where bar colours span, then its first and last bar pixel.
    const rows = [];
    for (let y = 0; y < height; y++) {
      let first = -1, last = -1;
      for (let x = 0; x < width; x++) if (isBar((y * width + x) * 4)) { if (first < 0) first = x; last = x; }
      if (last - first > width / 4) rows.push({ y, first, last });
    }
    const lanes = [];
    for (const r of rows) {
      const lane = lanes[lanes.length - 1];
      if (lane && r.y === lane.y + lane.n) { lane.n++; lane.last = Math.max(lane.last, r.last); } else lanes.push({ y: r.y, n: 1, first: r.first, last: r.last });
    }
    return lanes.filter((l) => l.n > 5);
  });
  // The serialized bar on top, the overlapped one below.
  const [serialBar, overlapBar] = bars;
  const drawnRatio = bars.length === 2 ? (overlapBar.last - overlapBar.first) / (serialBar.last - serialBar.first) : 0;
  check(wantRatio > 1.1 && Math.abs(drawnRatio / wantRatio - 1) < 0.03,
    `the overlapped bar is drawn whole: ${drawnRatio.toFixed(3)} the serialized bar's length, the report says ${wantRatio.toFixed(3)} (${JSON.stringify(bars)})`);
  await type(page, '#f-task-micro_batch', '1');
  const fill = page.locator('.longest .chip', { hasText: /Pipeline(Fill|Drain)/ }).first();
  check(await fill.count() === 1, 'the pipeline fill or drain is among the longest ops');
  await fill.click();
  const bubble = await page.locator('#op-details').textContent();
  check(/Pipeline (fill|drain)/.test(bubble) && /\(p-1\)\/v/.test(bubble), `the bubble is explained: ${bubble.trim().slice(0, 120)}`);
  await page.locator('.charts', { has: page.locator('#chart-timeline') }).screenshot({ path: join(shots, 'pipeline.png') });
  // Its data-parallel ranks span nodes (tp 8 within a node, pp 4 and ddp 4 across): their
  // gradient reduction runs on a third stream, which the chart draws and its label names.
  const threeLanes = await page.locator('#chart-timeline').getAttribute('aria-label');
  check(/communication [^,]* busy \([^)]* of it on the data-parallel stream, beside the tensor-parallel and pipeline transfers\)/.test(threeLanes),
    `the timeline names the data-parallel stream: ${threeLanes.slice(0, 200)}`);
  // Four sequences per micro-batch without recomputation: the activations do not fit.
  await type(page, '#f-task-micro_batch', '4');
  await page.selectOption('#f-task-recompute', 'none');
  const limit = page.locator('#limit-memory');
  check(await limit.isVisible() && /Does not fit/.test(await limit.textContent()) && /largest part is activations/.test(await limit.textContent())
    && /Turn on activation recomputation/.test(await limit.textContent()),
    `a plan that does not fit says what overflows and the change that shrinks it: ${(await limit.textContent().catch(() => '')).slice(0, 240)}`);
  await page.locator('.charts', { has: page.locator('#chart-memory') }).screenshot({ path: join(shots, 'memory-overflow.png') });
  // Pointing at a point of the GPUs sweep says its size, throughput and scaling.
  const sweepSaid = await pointAt(page, 'chart-pretrain-gpus', { xs: steps(0.1, 0.98, 0.02), ys: steps(0.1, 0.9, 0.04) });
  check(sweepSaid.some((t) => /^\d+ GPUs \(this scenario\): [\d.]+ (\S+ )?samples\/s/.test(t)) && sweepSaid.some((t) => /of perfect scaling from \d+ GPUs$/.test(t)),
    `pointing at the GPUs sweep says size, throughput and scaling: ${sweepSaid.slice(0, 3).join(' | ')}`);
  await page.mouse.move(0, 0);
  // Pointing at a part of the memory bar says which part and how much: sweep along the bar.
  // (Thin parts, such as weights sharded over many GPUs, may fall between two samples.)
  const said = await pointAt(page, 'chart-memory', { xs: steps(0.02, 0.98, 0.005), ys: [0.45] });
  const order = (await page.locator('#chart-memory + table, figure:has(#chart-memory) table tbody tr td:first-child').allTextContents());
  const parts = said.map((t) => t.split(':')[0]);
  const inOrder = parts.every((p, i) => i === 0 || order.indexOf(p) > order.indexOf(parts[i - 1]));
  check(parts.length >= 3 && parts.includes('Activations') && inOrder, `pointing along the memory bar names its parts, in order: ${parts.join(', ')}`);
  const activations = said.find((t) => t.startsWith('Activations')) ?? '';
  check(/^Activations: [\d.]+ GB per GPU, [\d.]+ % of the GPU's [\d.]+ GB$/.test(activations), `a part says its share of HBM: ${activations}`);
  await page.locator('.charts', { has: page.locator('#chart-memory') }).screenshot({ path: join(shots, 'memory-tip.png') });
  await page.mouse.move(0, 0);
  // A fused cross-entropy and a model trained without dropout: less memory (no fp32 logits, no
  // masks) and less time; the page agrees with the CLI and the share link carries both.
  const needOf = async () => Number((await limit.textContent()).match(/needs ([\d.]+) GB/)?.[1]);
  const [withDropout, plainLoss] = [await needOf(), await shown(page)];
  await page.selectOption('#f-task-fused_loss', 'true');
  await page.selectOption('#f-model-dropout', 'false');
  const lean = await matchesCli(page, 'fused loss, no dropout');
  const leanDoc = scenarioOfLink(await page.locator('#share-link').inputValue());
  const leanNeed = await needOf();
  check(leanDoc.task.fused_loss === true && leanDoc.model.dropout === false
    && lean.iteration_s < plainLoss.iteration_s && leanNeed < withDropout,
    `fused loss and no dropout: ${leanNeed} GB against ${withDropout} GB, ${lean.iteration_s} s against ${plainLoss.iteration_s} s`);
  await page.selectOption('#f-task-fused_loss', 'false');
  await page.selectOption('#f-model-dropout', 'true');
  await page.selectOption('#f-task-recompute', 'full');
  check(!(await limit.isVisible()), `full recomputation makes it fit ${await limit.textContent().catch(() => '')}`);
  // A training loop that logs two metrics over the logits (Composer's): each micro-batch
  // takes longer, the page agrees with the CLI and the link carries the count; a count past 8
  // is refused under the field with the last figures kept, and clearing it restores them.
  await settled(page);
  const noMetrics = await shown(page);
  await type(page, '#f-task-metric_losses', '2');
  const withMetrics = await matchesCli(page, 'two training metrics over the logits');
  const metricsDoc = scenarioOfLink(await page.locator('#share-link').inputValue());
  check(metricsDoc.task.metric_losses === 2 && withMetrics.iteration_s > noMetrics.iteration_s,
    `two training metrics: ${withMetrics.iteration_s} s against ${noMetrics.iteration_s} s`);
  await type(page, '#f-task-metric_losses', '9');
  const metricsError = page.locator('.field', { has: page.locator('#f-task-metric_losses') }).locator('.error-msg');
  await metricsError.waitFor();
  check(/at most 8/.test(await metricsError.textContent()) && await page.locator('.stale-banner').isVisible()
    && (await shown(page)).iteration_s === withMetrics.iteration_s, `nine metrics are refused by field: ${await metricsError.textContent()}`);
  await type(page, '#f-task-metric_losses', '');
  await settled(page);
  check(!(await page.locator('.stale-banner').isVisible()) && (await shown(page)).iteration_s === noMetrics.iteration_s,
    'no training metrics: the same figures as before');
  // Biases: with them each step is longer by their gradients' sums over the tokens (a few
  // percent at most); the page agrees with the CLI and the link carries the choice. The
  // default follows the feed-forward kind (this SwiGLU model has none).
  const byDefault = await shown(page);
  const ffnKind = scenarioOfLink(await page.locator('#share-link').inputValue()).model.ffn_kind;
  await page.selectOption('#f-model-biases', 'true');
  const biased = await matchesCli(page, 'biases');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.biases === true, 'the link carries the biases');
  await page.selectOption('#f-model-biases', 'false');
  const unbiased = await matchesCli(page, 'no biases');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.biases === false
    && unbiased.iteration_s < biased.iteration_s && unbiased.iteration_s > 0.95 * biased.iteration_s
    && byDefault.iteration_s === (ffnKind === 'swiglu' ? unbiased : biased).iteration_s,
    `biases: ${biased.iteration_s} s, none: ${unbiased.iteration_s} s, ${ffnKind} by default: ${byDefault.iteration_s} s`);
  await page.selectOption('#f-model-biases', '');
  await settled(page);
  check((await shown(page)).iteration_s === byDefault.iteration_s, 'biases by default again: the same figures as before');
  // Position encodings: rotary embeddings as eager PyTorch runs them take ten passes over the
  // queries and keys each way, slower than one fused kernel, slower than none; a learned table
  // adds its weights. The page agrees with the CLI at each, the link carries the choice, and
  // the attention backward pass names the rotary passes. This SwiGLU model's default is fused.
  const encoding = async (value, what) => {
    await page.selectOption('#f-model-positions', value);
    const figures = await matchesCli(page, what);
    check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.positions === value, `the link carries ${what}`);
    return { ...figures, memory_bytes: Number(await page.locator('#memory').getAttribute('data-value')) };
  };
  const eagerRope = await encoding('rope-unfused', 'eager rotary embeddings');
  await page.locator('.longest .chip', { hasText: /^Attn\d+_b\./ }).first().click();
  await page.locator('#op-details', { hasText: 'rotary position embeddings' }).waitFor();
  const ropeText = await page.locator('#op-details').textContent();
  check(/10 eager/.test(ropeText), `the attention backward pass explains the rotary passes: ${ropeText.match(/with rotary[^;]*/)?.[0]}`);
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-rope.png') });
  const fusedRope = await encoding('rope', 'fused rotary embeddings');
  const noPositions = await encoding('none', 'no position encoding');
  const learnedTable = await encoding('learned', 'a learned position table');
  check(eagerRope.iteration_s > fusedRope.iteration_s && fusedRope.iteration_s > noPositions.iteration_s
    && learnedTable.memory_bytes > noPositions.memory_bytes
    && (ffnKind !== 'swiglu' || fusedRope.iteration_s === byDefault.iteration_s),
    `positions: eager ${eagerRope.iteration_s} s, fused ${fusedRope.iteration_s} s, none ${noPositions.iteration_s} s, default ${byDefault.iteration_s} s; learned ${learnedTable.memory_bytes} B against ${noPositions.memory_bytes} B`);
  await page.selectOption('#f-model-positions', '');
  await settled(page);
  check((await shown(page)).iteration_s === byDefault.iteration_s, 'positions by default again: the same figures as before');
  // Norms and activation as eager PyTorch (Hugging Face's modelling code): slower and more
  // memory than fused kernels; the page agrees with the CLI, the link carries the choice and the
  // attention backward pass's element-wise term says what an eager RMSNorm moves. Fused is the
  // default.
  await page.selectOption('#f-model-elementwise', 'eager');
  const eagerNorms = await matchesCli(page, 'eager norms and activation');
  const eagerMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.elementwise === 'eager'
    && eagerNorms.iteration_s > byDefault.iteration_s, `eager norms: ${eagerNorms.iteration_s} s against ${byDefault.iteration_s} s fused`);
  await page.locator('.longest .chip', { hasText: /^Attn\d+_b\./ }).first().click();
  await page.locator('#op-details', { hasText: 'eager norms and activation' }).waitFor();
  check(/84 bytes a hidden unit/.test(await page.locator('#op-details').textContent()), 'the backward pass explains an eager RMSNorm');
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-eager.png') });
  await page.selectOption('#f-model-elementwise', 'fused');
  await matchesCli(page, 'fused norms and activation');
  const fusedMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  check(eagerMemory > fusedMemory && (await shown(page)).iteration_s === byDefault.iteration_s,
    `eager norms keep more: ${eagerMemory} B against ${fusedMemory} B, fused as by default`);
  await page.selectOption('#f-model-elementwise', '');
  await settled(page);
  // Scores in HBM (Megatron's unfused attention): slower than the fused kernel, the page agrees
  // with the CLI, and an attention block's backward pass explains the scores' batched GEMMs
  // of each gradient pass by the bytes of the score matrix they write and read.
  const kernel = await page.locator('#f-model-attention').inputValue();
  await page.selectOption('#f-model-attention', 'materialized');
  const unfused = await matchesCli(page, 'scores in HBM');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.attention === 'materialized'
    && unfused.iteration_s > byDefault.iteration_s, `scores in HBM: ${unfused.iteration_s} s against ${byDefault.iteration_s} s fused`);
  await page.locator('.longest .chip', { hasText: /^Attn\d+_b\./ }).first().click();
  await page.locator('#op-details', { hasText: 't_s_w' }).waitFor();
  const scores = await page.locator('#op-details').textContent();
  check(/t_s_a/.test(scores) && /dP = dO V\^T/.test(scores) && /dK = dS\^T Q/.test(scores) && /score matrix's bytes set the time/.test(scores)
    && /t_dgrad \+ t_s_a \+ t_ew_a/.test(scores), `the scores' batched GEMMs are explained pass by pass: ${scores.match(/t_s_a[^]*?\)/)?.[0]?.slice(0, 160)}`);
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-materialized.png') });
  // FlashAttention-2 on an H100, as PyTorch's scaled_dot_product_attention runs it there: its
  // FLOPs at 35% of peak, slower than the default kernel's; the page agrees with the CLI, the
  // link carries it and an attention block's pass says which kernel its speed term stands for.
  await page.selectOption('#f-model-attention', 'flash2-h100');
  const fa2 = await matchesCli(page, 'FlashAttention-2 on an H100');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.attention === 'flash2-h100'
    && fa2.iteration_s > byDefault.iteration_s, `FlashAttention-2 on an H100: ${fa2.iteration_s} s against ${byDefault.iteration_s} s by default`);
  await page.locator('.longest .chip', { hasText: /^Attn\d+_b\./ }).first().click();
  await page.locator('#op-details', { hasText: 'FlashAttention-2 on an H100' }).waitFor();
  check(/about 35% of its peak/.test(await page.locator('#op-details').textContent()), 'the attention pass explains FlashAttention-2 on an H100');
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-fa2-h100.png') });
  await page.selectOption('#f-model-attention', kernel);
  await settled(page);
  check((await shown(page)).iteration_s === byDefault.iteration_s, 'the fused kernel again: the same figures as before');
  // FP8 training on the H100s: faster, but well under the 2x of the peaks; the page agrees with
  // the CLI and the share link carries it. An A100 has no FP8 tensor cores: the field says so
  // and the last results stay.
  await settled(page);
  const bf16 = await shown(page);
  await page.selectOption('#f-task-fp8', 'true');
  const fp8 = await matchesCli(page, 'FP8 training on H100s');
  const fp8Doc = scenarioOfLink(await page.locator('#share-link').inputValue());
  check(fp8Doc.task.fp8 === true && fp8Doc.system.fp8_flops === 1979e12
    && fp8.iteration_s < bf16.iteration_s && fp8.iteration_s > bf16.iteration_s / 2,
    `FP8 training: ${fp8.iteration_s} s against ${bf16.iteration_s} s in BF16`);
  await page.selectOption('#gpu-type', 'a100_80');
  const fp8Error = page.locator('.field', { has: page.locator('#f-task-fp8') }).locator('.error-msg');
  await fp8Error.waitFor();
  check(/no FP8 tensor cores/.test(await fp8Error.textContent()) && await page.locator('.stale-banner').isVisible()
    && (await shown(page)).iteration_s === fp8.iteration_s, `FP8 on an A100 is refused by field: ${await fp8Error.textContent()}`);
  await page.selectOption('#f-task-fp8', 'false');
  await page.selectOption('#gpu-type', 'h100_sxm');
  await settled(page);
  check(!(await page.locator('.stale-banner').isVisible()) && (await shown(page)).iteration_s === bf16.iteration_s,
    'back to BF16 on H100s: the same figures as before');
  await selectsAgree(page, 'after FP8 on and off and a refused GPU');
  // MAD-Max paper mode cannot run a 3-level plan: it says so; the default model can.
  await page.locator('label[for=mode-reference]').click();
  check(/paper mode/.test(await page.locator('#mode-badge').textContent()), 'the badge says MAD-Max paper mode');
  const three = await page.locator('#spec-transformer_parallel .error-msg').first().textContent().catch(() => '');
  check(/at most 2/.test(three), `paper mode refuses three levels: ${three}`);
  await page.locator('label[for=mode-default]').click();
  check(!(await page.locator('.stale-banner').isVisible()), 'back on the default model the plan runs again');
  await selectsAgree(page, 'after paper mode and back');
  await type(page, '#f-task-micro_batch', '');
  await type(page, '#f-task-local_transformer_bs', '1');
  await page.selectOption('#transformer_parallel-0-strategy', 'fsdp');
  await type(page, '#transformer_parallel-0-degree', '128');
  await page.locator('#spec-transformer_parallel button.link', { hasText: 'remove' }).last().click();
  await page.locator('#spec-transformer_parallel button.link', { hasText: 'remove' }).last().click();
  check(!(await page.locator('.stale-banner').isVisible()), 'back to plain FSDP');

  // The scenario picker: grouped by kind, every run named by its GPUs (not a cluster's code name
  // such as "CloudC-128-a2-megagpu-16g"), and a filter that narrows it; Enter opens the first.
  // It comes first in the form, and what the default model is takes a few lines, how accurate it
  // is folded behind them (it was a ten-line paragraph above the picker).
  const pickerFirst = await page.locator('section.inputs > .card').first().evaluate((c) => c.querySelector('#scenario') !== null);
  const modeHeight = await page.locator('.mode-switch').evaluate((c) => c.getBoundingClientRect().height);
  check(pickerFirst && modeHeight < 130 && await page.locator('#mode-accuracy').evaluate((d) => !d.open),
    `the scenario picker comes first, the model switch is short (${modeHeight.toFixed(0)} px) with its accuracy folded`);
  const groups = await page.locator('#scenario optgroup').evaluateAll((gs) => gs.map((g) => [g.label, g.children.length]));
  check(groups.length === 6 && groups[0][0] === 'Current GPUs: training and inference' && groups.some(([g]) => g === 'MAD-Max paper: recommendation models'),
    `the scenarios are grouped: ${JSON.stringify(groups)}`);
  const names = await page.locator('#scenario option:not([value^="story:"])').allTextContents();
  check(names.length >= 80 && names.every((n) => !/Cloud[ABC]-\d|ZionEX-\d|DC_A-\d/.test(n)) && names.filter((n) => / \d+ x /.test(n)).length >= 80,
    `every scenario is named by its GPUs: ${names.find((n) => /Cloud[ABC]-\d|ZionEX-\d|DC_A-\d/.test(n)) ?? 'yes'}`);
  const wanted = names.filter((n) => /h100/i.test(n) && /serving/i.test(n));
  await page.fill('#scenario-search', 'serving H100');
  await page.waitForFunction((n) => document.querySelector('#scenario-matches')?.textContent.startsWith(`${n} of `), wanted.length);
  const narrowed = await page.locator('#scenario option:not([value^="story:"])').allTextContents();
  check(wanted.length >= 2 && narrowed.length === wanted.length + 1, `the filter narrows the list to the ${wanted.length} matches and the run on screen: ${narrowed.length}`);
  await page.press('#scenario-search', 'Enter');
  await page.waitForFunction((id) => document.querySelector('#scenario')?.value === id, 'serve__llama2_70b__h100_sxm_2__fp8');
  await page.locator('#ttft').waitFor();
  check((await page.locator('#scenario option:checked').textContent()) === wanted[0], `Enter opens the first match: ${wanted[0]}`);
  await page.fill('#scenario-search', 'no such model');
  await page.waitForFunction(() => document.querySelector('#scenario-matches')?.textContent.startsWith('No scenario matches'));
  await page.fill('#scenario-search', '');
  // The famous runs are listed too; picking one opens its story in the library.
  const famous = await page.locator('#scenario optgroup[label^="Famous runs"] option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
  check(famous.length >= 10 && famous.every(([v]) => v.startsWith('story:')), `the famous runs are in the picker (${famous.length})`);
  const reader = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await reader.goto(server.url);
  await reader.locator('#iteration-time').waitFor({ timeout: 20000 });
  await reader.selectOption('#scenario', famous[0][0]);
  const storyId = famous[0][0].slice('story:'.length);
  await reader.locator(`#story-${storyId}`).waitFor({ timeout: 30000 });
  await reader.waitForFunction((id) => { const r = document.getElementById(`story-${id}`)?.getBoundingClientRect(); return r && r.top < window.innerHeight && r.bottom > 0; }, storyId, { timeout: 30000 });
  check(reader.url().includes('view=learn') && (await reader.locator(`#story-${storyId} h3, #story-${storyId} h2`).first().textContent()).includes(famous[0][1].slice(0, 20)),
    `picking "${famous[0][1]}" opens its story: ${reader.url()}`);
  for (const problem of reader.problems) check(false, problem);
  await reader.context().close();

  // Presets and families: a DLRM run, then a ViT model on the same cluster.
  await page.selectOption('#scenario', 'dlrm__dlrm_a__zionex_128__dlrm_train');
  await matchesCli(page, 'DLRM-A preset');
  check(/published runs of a recommendation model on 8(?: and 16)? GPUs .* predicted from \d+% fewer to \d+% more samples\/s than measured/.test(await page.locator('#runs-like-this').textContent().catch(() => '')),
    'a DLRM run says what the published DLRM runs say of its accuracy');
  check(await page.locator('#f-model-num_tables').isVisible(), 'DLRM fields are shown');
  // NVIDIA's DLRM: its MLPs' real widths, shown, edited, refused with the fix, then restored.
  await page.selectOption('#scenario', 'current__dlrm_criteo__zionex_8__mp_ddp');
  check(await page.locator('#f-model-bot_mlp_widths').inputValue() === '13-512-256-128'
    && await page.locator('#f-model-top_mlp_widths').inputValue() === '1024-1024-512-256-1', 'the DLRM preset shows its MLP widths');
  const criteo = await matchesCli(page, "NVIDIA's DLRM on 8 A100s");
  // NVIDIA's placement of the bottom MLP: one GPU runs it for the whole batch, the exchange
  // waits for it, and that GPU waits for the tables' GPUs where they are slower.
  await page.selectOption('#f-task-bot_mlp', 'one_gpu');
  const oneGpu = await matchesCli(page, 'the bottom MLP on one GPU');
  check(oneGpu.throughput < criteo.throughput, `the bottom MLP on one GPU runs fewer samples/s (${oneGpu.throughput} < ${criteo.throughput})`);
  check(/NVIDIA/.test(await page.locator('#f-task-bot_mlp').evaluate((e) => e.closest('.field')?.textContent ?? '')),
    "the placement's help says whose placement it is");
  await page.selectOption('#f-task-bot_mlp', 'data_parallel');
  check((await matchesCli(page, 'the bottom MLP data-parallel again')).throughput === criteo.throughput, 'data-parallel again gives the first result');
  // TensorFlow 2's DLRM launches its collectives through Horovod's background thread.
  check(/Horovod/.test(await page.locator('#f-task-collective_cycle_ms').evaluate((e) => e.closest('.field')?.textContent ?? '')),
    "the launch cycle's help says whose cycle it is");
  await type(page, '#f-task-collective_cycle_ms', '1');
  const horovod = await matchesCli(page, "collectives launched by Horovod's 1 ms cycle");
  check(horovod.throughput < criteo.throughput, `a 1 ms launch cycle runs fewer samples/s (${horovod.throughput} < ${criteo.throughput})`);
  // The exchange's explanation adds its wait for the launch thread, and the what-if keeps it.
  await page.locator('.longest button', { hasText: 'all2all' }).first().click();
  await page.locator('#op-details.explain').waitFor({ timeout: 20000 });
  const launchFormula = await page.locator('#op-details .formula').first().innerText();
  const launchWhatIf = await page.locator('#op-what-if').innerText();
  check(/plus w_launch/.test(launchFormula) && /Only its transfer halves: its wait for the thread that launches it stays/.test(launchWhatIf),
    `an exchange explains its launch wait and the what-if keeps it: ${launchFormula} / ${launchWhatIf}`);
  await type(page, '#f-task-collective_cycle_ms', '-1');
  await page.locator('.field.invalid').first().waitFor({ timeout: 20000 });
  const cycleError = (await page.locator('.field.invalid').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
  check(/collective_cycle_ms|launch cycle/.test(cycleError) && /from 0 to 1000 ms/.test(cycleError),
    `a negative cycle is refused, naming the field and the range: ${cycleError}`);
  check((await shown(page)).throughput === horovod.throughput, 'the last good result stays while the cycle is wrong');
  await type(page, '#f-task-collective_cycle_ms', '');
  check((await matchesCli(page, 'collectives launched directly again')).throughput === criteo.throughput, 'no cycle again gives the first result');
  await type(page, '#f-model-top_mlp_widths', '1024-1');
  const widthsError = (await page.locator('.field.invalid').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
  check(/top_mlp_widths|Top MLP widths/.test(widthsError) && /num_top_mlp_layers is 5: make them agree/.test(widthsError),
    `two top widths for five layers are refused, naming the field and the fix: ${widthsError}`);
  check((await shown(page)).throughput === criteo.throughput, 'the last good result stays while the widths are wrong');
  await type(page, '#f-model-top_mlp_widths', '4096-4096-512-256-1');
  const wider = await matchesCli(page, 'wider top MLP');
  check(wider.throughput < criteo.throughput, `wider top layers run fewer samples/s (${wider.throughput} < ${criteo.throughput})`);
  // A model whose heads are wider than its hidden size (Qwen3-32B: 64 heads of 128 on 5,120).
  await page.selectOption('#model-preset', 'qwen3_32b');
  await page.locator('#f-model-head_dim').waitFor();
  check(await page.locator('#f-model-head_dim').inputValue() === '128', 'the Qwen3 32B preset shows its head size');
  const qwen = await matchesCli(page, "Qwen3 32B on the DLRM's 8 A100s");
  await type(page, '#f-model-head_dim', '0');
  const headError = (await page.locator('.field.invalid').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
  check(/Head size/.test(headError) && (await shown(page)).throughput === qwen.throughput, `a head size of 0 is refused, naming the field, and the last result stays: ${headError}`);
  await type(page, '#f-model-head_dim', '');
  const narrow = await matchesCli(page, 'Qwen3 32B with heads of hidden / heads');
  check(narrow.throughput > qwen.throughput, `heads of 5120 / 64 = 80 make lighter projections: more samples/s (${narrow.throughput} > ${qwen.throughput})`);
  // A mixture of experts in pre-training: what the published runs of its kind showed (the
  // same sentence as the CLI's, checked by matchesCli), not "unknown".
  await page.selectOption('#model-preset', 'mixtral_8x7b');
  await matchesCli(page, "Mixtral 8x7B on the DLRM's 8 A100s");
  const moeRuns = (await page.locator('#runs-sentence').textContent()).trim();
  check(/^On the \d+ published training runs of a mixture-of-experts LLM .* time than measured/.test(moeRuns), `a MoE pre-training run says what the published MoE runs showed: ${moeRuns}`);
  await page.locator('#runs-sentence').screenshot({ path: join(shots, 'calculator-moe-runs.png') });
  // Its token dispatch by Transformer Engine's fused permute: faster and less kept than the
  // eager default; the page agrees with the CLI, the link carries it and the feed-forward pass
  // says what it counted.
  const eagerMoe = await shown(page);
  const eagerMoeMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  await page.selectOption('#f-model-moe_dispatch', 'fused');
  const fusedMoe = await matchesCli(page, 'Mixtral 8x7B with a fused token dispatch');
  const fusedMoeMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.moe_dispatch === 'fused'
    && fusedMoe.iteration_s < eagerMoe.iteration_s && fusedMoeMemory < eagerMoeMemory,
    `a fused dispatch: ${fusedMoe.iteration_s} s and ${fusedMoeMemory} B against ${eagerMoe.iteration_s} s and ${eagerMoeMemory} B eager`);
  await page.locator('.longest .chip', { hasText: /^TransformerFC\d+_f\./ }).first().click();
  await page.locator('#op-details', { hasText: 'fused permute and unpermute' }).waitFor();
  check(/2 passes over each copy/.test(await page.locator('#op-details').textContent()), 'the feed-forward pass explains the fused dispatch');
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-moe-fused.png') });
  // DeepEP: permuted as the fused dispatch; within one node its all-to-all is NCCL's, so the
  // same time (across nodes it sends a token once per node: the engine's unit tests).
  await page.selectOption('#f-model-moe_dispatch', 'deepep');
  const deepepMoe = await matchesCli(page, 'Mixtral 8x7B with DeepEP on one node');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).model.moe_dispatch === 'deepep'
    && deepepMoe.iteration_s === fusedMoe.iteration_s,
    `DeepEP within a node: ${deepepMoe.iteration_s} s, as the fused dispatch's ${fusedMoe.iteration_s} s`);
  await page.selectOption('#f-model-moe_dispatch', '');
  await settled(page);
  check((await shown(page)).iteration_s === eagerMoe.iteration_s, 'the eager dispatch by default again: the same figures as before');
  // Expert tensor parallelism: on 8-way tensor parallelism with sequence parallelism, each rank
  // may hold whole experts (Megatron-core's --expert-tensor-parallel-size 1). The page agrees
  // with the CLI, the link carries it, the feed-forward pass says so; a value that does not
  // divide the tensor parallelism is refused naming the field, and the last result stays.
  const planBefore = [await page.locator('#transformer_parallel-0-strategy').inputValue(), await page.locator('#transformer_parallel-0-degree').inputValue()];
  await page.selectOption('#transformer_parallel-0-strategy', 'tp');
  await type(page, '#transformer_parallel-0-degree', '8');
  await page.selectOption('#f-task-sequence_parallel', 'true');
  const splitExperts = await matchesCli(page, 'Mixtral 8x7B on 8-way tensor parallelism, every expert split');
  check(await page.locator('#f-task-expert_tp').isVisible(), 'a mixture of experts in training offers expert tensor parallelism');
  await type(page, '#f-task-expert_tp', '1');
  const wholeExperts = await matchesCli(page, 'Mixtral 8x7B with whole experts on each tensor-parallel rank');
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).task.expert_tp === 1 && wholeExperts.iteration_s !== splitExperts.iteration_s,
    `whole experts: ${wholeExperts.iteration_s} s against ${splitExperts.iteration_s} s split, and the link says expert_tp 1`);
  await page.locator('.longest .chip', { hasText: /^TransformerFC\d+_f\./ }).first().click();
  await page.locator('#op-details', { hasText: 'expert tensor parallelism' }).waitFor();
  // Taller than the window, the explanation is captured in a taller one.
  await page.setViewportSize({ width: 1280, height: 1200 });
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-expert-tp.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  await type(page, '#f-task-expert_tp', '3');
  await page.locator('.field.invalid').first().waitFor({ timeout: 20000 });
  const etpError = (await page.locator('.field.invalid').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
  check(/Expert tensor parallelism/.test(etpError) && /use 2/.test(etpError) && (await shown(page)).iteration_s === wholeExperts.iteration_s,
    `an expert tensor parallelism of 3 on 8 is refused, naming the field and a fix, and the last result stays: ${etpError}`);
  await type(page, '#f-task-expert_tp', '');
  check((await matchesCli(page, 'every expert split again')).iteration_s === splitExperts.iteration_s, 'empty: every expert split again');
  // Selective recomputation of Megatron-core's modules: the norms and the MoE layers dropped
  // and computed again (less memory, more time); the page agrees with the CLI, the link carries
  // them, the feed-forward backward pass says so, and a name that is no module is refused
  // naming the field while the last result stays.
  const recomputeBefore = await page.locator('#f-task-recompute').inputValue();
  await page.selectOption('#f-task-recompute', 'selective');
  await settled(page);
  const scoresOnly = await shown(page);
  const scoresMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  await type(page, '#f-task-recompute_modules', 'core_attn, layernorm, moe');
  const modules = await matchesCli(page, 'Mixtral 8x7B recomputing the norms and MoE layers');
  const modulesMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  const linkedModules = scenarioOfLink(await page.locator('#share-link').inputValue()).task.recompute_modules;
  check(linkedModules === 'core_attn, layernorm, moe'
    && modules.iteration_s > scoresOnly.iteration_s && modulesMemory < scoresMemory,
    `recomputed modules: ${modules.iteration_s} s and ${modulesMemory} B against ${scoresOnly.iteration_s} s and ${scoresMemory} B, and the link carries ${linkedModules}`);
  await page.locator('.longest .chip', { hasText: /^TransformerFC\d+_b\./ }).first().click();
  await page.locator('#op-details', { hasText: 'forward pass again' }).waitFor();
  await page.setViewportSize({ width: 1280, height: 1200 });
  await page.locator('#op-details').screenshot({ path: join(shots, 'explain-recompute-moe.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  await type(page, '#f-task-recompute_modules', 'layernorm, attn');
  await page.locator('.field.invalid').first().waitFor({ timeout: 20000 });
  const modulesError = (await page.locator('.field.invalid').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
  check(/Recomputed modules/.test(modulesError) && /"attn" is not a module/.test(modulesError) && (await shown(page)).iteration_s === modules.iteration_s,
    `a module name that is none is refused, naming the field, and the last result stays: ${modulesError}`);
  await type(page, '#f-task-recompute_modules', '');
  await page.selectOption('#f-task-recompute', recomputeBefore);
  await settled(page);
  check((await shown(page)).iteration_s === splitExperts.iteration_s, `the scenario's recomputation (${recomputeBefore}) again: the same figures as before`);
  await page.selectOption('#f-task-sequence_parallel', 'false');
  await page.selectOption('#transformer_parallel-0-strategy', planBefore[0]);
  await type(page, '#transformer_parallel-0-degree', planBefore[1]);
  await settled(page);
  check((await shown(page)).iteration_s === eagerMoe.iteration_s, 'the first plan again: the same figures as before');
  // Context parallelism over the 8 GPUs: each context-parallel rank may hold different experts
  // (Megatron-core's folding), less memory per GPU; a count that does not divide cp is
  // refused naming the field.
  await page.selectOption('#transformer_parallel-0-strategy', 'cp');
  await type(page, '#transformer_parallel-0-degree', '8');
  const sameExperts = await matchesCli(page, 'Mixtral 8x7B on 8-way context parallelism');
  const sameMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  check(await page.locator('#f-task-expert_cp').isVisible(), 'a mixture of experts in training offers experts over context-parallel ranks');
  await type(page, '#f-task-expert_cp', '8');
  const folded = await matchesCli(page, 'Mixtral 8x7B with one expert on each context-parallel rank');
  const foldedMemory = Number(await page.locator('#memory').getAttribute('data-value'));
  check(scenarioOfLink(await page.locator('#share-link').inputValue()).task.expert_cp === 8 && foldedMemory < sameMemory && folded.iteration_s !== sameExperts.iteration_s,
    `experts over the context-parallel ranks: ${foldedMemory} B against ${sameMemory} B, and the link says expert_cp 8`);
  await type(page, '#f-task-expert_cp', '3');
  await page.locator('.field.invalid').first().waitFor({ timeout: 20000 });
  const ecpError = (await page.locator('.field.invalid').first().innerText().catch(() => '')).replace(/\s+/g, ' ');
  check(/Experts over context-parallel ranks/.test(ecpError) && /use 2/.test(ecpError) && (await shown(page)).iteration_s === folded.iteration_s,
    `3 context-parallel ranks of 8 holding different experts are refused, naming the field and a fix: ${ecpError}`);
  await type(page, '#f-task-expert_cp', '');
  await page.selectOption('#transformer_parallel-0-strategy', planBefore[0]);
  await type(page, '#transformer_parallel-0-degree', planBefore[1]);
  await settled(page);
  check((await shown(page)).iteration_s === eagerMoe.iteration_s, 'the first plan again: the same figures as before');
  await page.selectOption('#model-preset', 'vit_h');
  check(await page.locator('#f-model-patch_dim').isVisible(), 'ViT fields replace them');
  // A reference config named after a published model says how it differs from it.
  const versus = await page.locator('#model-versus').textContent().catch(() => '');
  check(/^Differs from the published ViT-H\/14 .*4 layers where it has 32/.test(versus), `the ViT-H preset says how it differs from the published model: ${versus}`);
  check(!(await page.locator('.stale-banner').isVisible()), 'the ViT task was built for the cluster');
  await matchesCli(page, 'ViT-H on ZionEX-128');

  // A convolutional network (#23): the default model's own family, with its own fields, a
  // data-parallel network plan, and paper mode refusing it with the reason.
  await page.selectOption('#model-preset', 'resnet50');
  await page.locator('#f-model-network').waitFor();
  check(await page.locator('#f-model-network').inputValue() === 'resnet50' && await page.locator('#f-model-image_size').inputValue() === '224'
    && !(await page.locator('#f-model-num_transformer_layers').count()), 'ResNet-50 shows its network and image side, not transformer fields');
  check(await page.locator('#mode-default').isChecked(), 'a CNN opens in the default model');
  check((await page.locator('#spec-mlp_parallel legend').textContent()) === 'Network plan'
    && JSON.stringify(await page.locator('#mlp_parallel-0-strategy option').allTextContents()) === '["ddp"]',
    'its plan is the network\'s, data parallel only');
  const resnet = await matchesCli(page, 'ResNet-50 on ZionEX-128');
  // Channels-first activations: every tensor-core convolution transposes its operands, so the
  // same network runs slower, the link carries the layout, and the block says why.
  await page.selectOption('#f-task-conv_layout', 'nchw');
  const nchw = await matchesCli(page, 'ResNet-50 with channels-first activations');
  check(nchw.throughput < resnet.throughput && scenarioOfLink(await page.locator('#share-link').inputValue()).task.conv_layout === 'nchw',
    `channels first runs slower (${nchw.throughput} < ${resnet.throughput} images/s) and the link says so`);
  await page.screenshot({ path: join(shots, 'calculator-cnn-nchw.png'), fullPage: true });
  await page.selectOption('#f-task-conv_layout', 'nhwc');
  check((await matchesCli(page, 'ResNet-50 channels last again')).throughput === resnet.throughput, 'channels last again gives the first figure');
  await page.screenshot({ path: join(shots, 'calculator-cnn.png'), fullPage: true });
  await page.selectOption('#f-model-network', 'resnet152');
  const resnet152 = await matchesCli(page, 'ResNet-152 on ZionEX-128');
  check(resnet152.throughput < resnet.throughput / 2, `ResNet-152 (23 GFLOP forward) runs under half ResNet-50's images/s (${resnet152.throughput} < ${resnet.throughput} / 2)`);
  await page.locator('label[for=mode-reference]').click();
  const cnnRefused = (await page.locator('.mode-switch .error-msg').first().textContent({ timeout: 20000 }).catch(() => '')).trim();
  check(/paper model has no CNNs/.test(cnnRefused) && (await shown(page)).throughput === resnet152.throughput,
    `paper mode refuses a CNN, saying why, and the last result stays: ${cnnRefused}`);
  await page.locator('label[for=mode-default]').click();
  check((await matchesCli(page, 'ResNet-152 in the default model again')).throughput === resnet152.throughput, 'back on the default model it runs again');
  // An encoder-decoder (#23): two stacks with their own token counts, the default model's
  // own family; no serving, no context or expert parallelism, and paper mode refusing it.
  await page.selectOption('#model-preset', 'mt5_xl');
  await page.locator('#f-model-num_encoder_layers').waitFor();
  const field = (key) => page.locator(`#f-model-${key}`).inputValue();
  check(await field('num_encoder_layers') === '24' && await field('num_decoder_layers') === '24'
    && await field('transformer_seq_len') === '1024' && await field('target_seq_len') === '229'
    && !(await page.locator('#f-model-num_transformer_layers').count()), 'mT5-XL shows its two stacks and its input and target tokens');
  check(await page.locator('#mode-default').isChecked(), 'an encoder-decoder opens in the default model');
  const taskKinds = await page.locator('#task-type option').evaluateAll((os) => os.map((o) => o.value));
  const strategies = await page.locator('#transformer_parallel-0-strategy option').allTextContents();
  check(!taskKinds.includes('inference') && taskKinds.includes('finetune') && JSON.stringify(strategies) === '["ddp","fsdp","tp","pp"]',
    `no serving, and only the plans it models: ${taskKinds} / ${strategies}`);
  const mt5 = await matchesCli(page, 'mT5-XL on ZionEX-128');
  await page.screenshot({ path: join(shots, 'calculator-encdec.png'), fullPage: true });
  await type(page, '#f-model-target_seq_len', '1024');
  const longTargets = await matchesCli(page, 'mT5-XL with 1,024 target tokens');
  check(longTargets.throughput < mt5.throughput, `longer targets run fewer samples/s (${longTargets.throughput} < ${mt5.throughput})`);
  await page.locator('label[for=mode-reference]').click();
  const encdecRefused = (await page.locator('.mode-switch .error-msg').first().textContent({ timeout: 20000 }).catch(() => '')).trim();
  check(/paper model has no encoder-decoder models/.test(encdecRefused) && (await shown(page)).throughput === longTargets.throughput,
    `paper mode refuses an encoder-decoder, saying why, and the last result stays: ${encdecRefused}`);
  await page.locator('label[for=mode-default]').click();
  check((await matchesCli(page, 'mT5-XL in the default model again')).throughput === longTargets.throughput, 'back on the default model it runs again');
  await page.selectOption('#model-preset', 'vit_h');
  await matchesCli(page, 'ViT-H again');

  // Journey 4: copy the link, open it in a fresh browser: the same scenario and numbers.
  // Where the form and results sit in the document (not in the window, which scrolls to the
  // button; the results column itself stays in view).
  const resultsTop = () => page.locator('main.layout').evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
  const topBefore = await resultsTop();
  await page.click('#copy-link');
  const copiedNote = page.locator('.notice', { hasText: 'Link copied' });
  await copiedNote.waitFor();
  check(await copiedNote.evaluate((e) => getComputedStyle(e).position) === 'fixed' && await resultsTop() === topBefore,
    `"Link copied" floats over the page: nothing moves (${await copiedNote.evaluate((e) => getComputedStyle(e).position)}, ${topBefore} -> ${await resultsTop()})`);
  const link = await page.locator('#share-link').inputValue();
  check(link.length < 2000, `the link is short (${link.length} characters)`);
  const before = await shown(page);
  const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const p2 = await watchedPage(fresh, server.url);
  await p2.goto(link);
  await p2.locator('#iteration-time').waitFor({ timeout: 20000 });
  const after = await shown(p2);
  check(after.iteration_s === before.iteration_s && after.throughput === before.throughput,
    'a shared link reproduces the numbers exactly');
  check((await p2.locator('#f-model-patch_dim').inputValue()) === (await page.locator('#f-model-patch_dim').inputValue()),
    'and the fields');

  // A broken link: a visible notice and the default scenario (nothing saved in a fresh browser).
  const p3 = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await p3.goto(`${server.url}?v=1&s=not-a-scenario`);
  await p3.locator('.notice.is-error').waitFor({ timeout: 20000 });
  const notice = await p3.locator('.notice.is-error').textContent();
  check(/could not be opened/.test(notice) && /default/.test(notice), `broken link notice: ${notice}`);
  check((await shown(p3)).iteration_s === first.iteration_s, 'and the default scenario is shown');
  await p3.screenshot({ path: join(shots, 'broken-link.png') });
  // In a browser that kept a scenario (the user's own: here imported by hand; opening a link
  // keeps nothing), a broken link falls back to it.
  await p2.locator('details.card', { hasText: 'Share, import, export' }).locator('summary').click();
  await p2.fill('#import-text', JSON.stringify(scenarioOfLink(link)));
  await p2.click('#import-button');
  await p2.waitForFunction(() => (localStorage.getItem('madmax.scenario') ?? '').startsWith('v=1&s='), null, { timeout: 5000 });
  const p4 = await watchedPage(fresh, server.url);
  await p4.goto(`${server.url}?v=9&s=zzz`);
  await p4.locator('.notice.is-error').waitFor({ timeout: 20000 });
  check(/last scenario/.test(await p4.locator('.notice.is-error').textContent()), 'falls back to the saved scenario');
  check((await shown(p4)).iteration_s === before.iteration_s, 'with its numbers');

  // Journey 5: paste MAD-Max configs; the numbers equal the reference's golden values.
  const caseFile = 'tests/data/reference/cases/llm_moe__gpt4_1.8t__zionex_2048__llm_pre_tp_ddp_2048x8_bs1.json';
  const golden = JSON.parse(readFileSync(caseFile, 'utf8'));
  await page.locator('details.card', { hasText: 'Share, import, export' }).locator('summary').click();
  await page.fill('#import-text', JSON.stringify({ model: golden.inputs.model, system: golden.inputs.system, task: golden.inputs.task }));
  await page.click('#import-button');
  await page.waitForFunction((want) => {
    const v = Number(document.querySelector('#iteration-time')?.getAttribute('data-value'));
    return Math.abs(v - want) <= 1e-9 * want;
  }, golden.results.iteration_ms / 1000, { timeout: 30000 }).catch(() => {});
  const imported = await shown(page);
  check(close(imported.iteration_s, golden.results.iteration_ms / 1000) && close(imported.throughput, golden.results.throughput),
    `imported GPT-4 1.8T configs give the reference's ${golden.results.iteration_ms / 1000} s`);
  // Its op timeline as CSV: every op with its slack, as the CLI gives them.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('text=Op timeline (CSV)')]);
  const rows = readFileSync(await download.path(), 'utf8').trim().split('\n');
  const timeline = JSON.parse(execFileSync(bin, ['eval', '--json', '--timeline', caseFile]).toString()).timeline;
  const cliSlack = new Map([...timeline.computation, ...timeline.communication].map((o) => [o[0], o[3]]));
  const csvSlack = rows.slice(1).map((l) => l.split(',')).map((c) => [c[1], Number(c[6])]);
  check(rows[0] === 'stream,op,start_s,duration_s,end_s,category,slack_s' && csvSlack.length === cliSlack.size
    && csvSlack.every(([name, s]) => close(s, cliSlack.get(name)) || Math.abs(s - cliSlack.get(name)) < 1e-12),
  `the op timeline CSV gives every op's slack as the CLI does (${csvSlack.length} ops, ${csvSlack.filter((x) => x[1] === 0).length} on the critical path)`);
  await page.fill('#import-text', '{"not": "a config"}');
  await page.click('#import-button');
  check(/Could not import/.test(await page.locator('.notice').textContent()), 'a bad paste explains itself');
  check((await shown(page)).iteration_s === imported.iteration_s, 'and changes nothing');

  // A small GPT split 8 ways with one short sequence per micro-batch: the host cannot issue the
  // blocks as fast as the GPUs finish them, and the page says so, with what to change.
  const base = scenarioOfLink(await page.locator('#share-link').inputValue());
  const small = {
    m: { ...base.model, num_transformer_layers: 12, attention_dim: 1024, transformer_fc_dim: 4096, num_transformer_heads: 16,
      transformer_seq_len: 1024, num_kv_heads: null },
    s: base.system,
    t: { ...base.task, mode: 'default', transformer_parallel: ['tp', 'ddp'],
      transformer_parallel_degree: [8, base.system.num_devices / 8], micro_batch: 1, local_transformer_bs: 8 },
  };
  for (const k of Object.keys(small.m)) if (small.m[k] === null) delete small.m[k];
  await page.goto(`${server.url}?v=1&s=${Buffer.from(JSON.stringify(small)).toString('base64url')}`);
  await page.locator('#iteration-time').waitFor({ timeout: 20000 });
  const hostText = await page.locator('#limit-host').textContent().catch(() => '');
  check(/model predicted \d+% to \d+% less time than was measured/.test(hostText),
    `an 8-way split adds what published runs of that kind measured: ${hostText.slice(-160)}`);
  check(/Host-bound: .* of work, and the host needs .* to issue it/.test(hostText) && /larger micro-batch/.test(hostText),
    `a host-bound plan says so: ${hostText.slice(0, 140)}`);
  await matchesCli(page, 'host-bound small GPT');
  await page.locator('#limit-host').screenshot({ path: join(shots, 'host-bound.png') });

  // Learn: three lessons with live numbers; a lesson opens in the calculator.
  await page.click('nav >> text=Learn');
  await page.locator('article.lesson').first().waitFor({ timeout: 30000 });
  check((await page.locator('article.lesson').count()) >= 3, 'three lessons');
  await page.screenshot({ path: join(shots, 'learn-desktop.png'), fullPage: true });
  const lessonIteration = (await page.locator('#lesson-tp-in-node .lesson-figures dd').first().innerText()).trim();
  await page.locator('#lesson-tp-in-node button', { hasText: 'Open in calculator' }).first().click();
  await page.locator('#iteration-time').waitFor();
  await matchesCli(page, 'lesson scenario');
  // It opens in the model the lesson used, and says so; the lesson's figure is the calculator's.
  const shownIteration = (await page.locator('#iteration-time').innerText()).replace(/\s+/g, ' ').trim();
  check(await page.locator('#mode-reference').isChecked() && /Opened in MAD-Max paper mode/.test(await page.locator('.notice').innerText())
    && shownIteration === lessonIteration,
    `a lesson opens in paper mode, says so, and shows the lesson's ${lessonIteration} (calculator: ${shownIteration})`);

  // Journey 8: a phone-width screen; everything reachable, charts legible.
  const phone = await watchedPage(await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 }), server.url);
  await phone.goto(server.url);
  await phone.locator('#iteration-time').waitFor({ timeout: 20000 });
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `no sideways scrolling on a phone (overflow ${overflow} px)`);
  const canvasWidth = await phone.evaluate(() => document.getElementById('chart-timeline').getBoundingClientRect().width);
  check(canvasWidth > 300, `charts use the phone's width (${canvasWidth} px)`);
  // The scenario picker comes first there, in the first screen, and the form's sections start
  // folded, so the results follow within about a screen (they were 3,700 px down, below every
  // field).
  const tops = await phone.evaluate(() => ({
    picker: document.getElementById('scenario').getBoundingClientRect().top + window.scrollY,
    results: document.getElementById('iteration-time').getBoundingClientRect().top + window.scrollY,
    folded: [...document.querySelectorAll('section.inputs details.card')].map((d) => d.open),
  }));
  check(tops.picker < 844 && tops.picker < tops.results && tops.results < 2 * 844 && tops.folded.length >= 3 && tops.folded.every((o) => !o),
    `on a phone the picker comes first (${tops.picker.toFixed(0)} px), the sections folded (${tops.folded}), the results next (${tops.results.toFixed(0)} px)`);
  // Opening a section to edit it; scrolled down to the GPU, the main figures stay at the top of
  // the screen, and follow an edit.
  await phone.locator('details.card > summary', { hasText: 'Hardware' }).click();
  await phone.locator('#gpu-type').scrollIntoViewIfNeeded();
  await phone.selectOption('#gpu-type', 'h100_sxm');
  const mini = phone.locator('#mini-summary');
  const miniBox = await mini.boundingBox();
  const miniText = await mini.innerText();
  const phoneIteration = (await phone.locator('#iteration-time').innerText()).replace(/\s+/g, ' ').trim();
  check(miniBox && miniBox.y >= -1 && miniBox.y < 10 && miniText.includes(phoneIteration),
    `on a phone the main figures stay on screen over the form (${miniText.replace(/\s+/g, ' ')} at ${miniBox?.y} px)`);
  await phone.screenshot({ path: join(shots, 'calculator-phone-form.png') });
  await phone.screenshot({ path: join(shots, 'calculator-phone.png'), fullPage: true });

  // Video clips the CPUs must decode: a link to ViT-L reading 1080p clips on 128 cores. The
  // input wait paces the step and is explained term by term; the decoding fields hold the
  // clip; a 320-pixel short side lets the GPUs set the pace, as the CLI says; a frame without
  // a height is refused under its field, the last results kept.
  const clipsDoc = JSON.parse(readFileSync('tests/data/loader/vit_l_clips_1080p.json', 'utf8'));
  const video = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await video.goto(server.url + linkOf(clipsDoc));
  await video.locator('#limit-input').waitFor({ timeout: 20000 });
  const decoding = await matchesCli(video, 'ViT-L on 1080p clips decoded by 128 cores');
  const inputLimit = await video.locator('#limit-input').textContent();
  check(/delivers 66\.2 samples\/s \(as fast as its decoders go\), and the GPUs could process 331 samples\/s/.test(inputLimit),
    `the decoders pace the GPUs: ${inputLimit}`);
  check(await video.locator('#f-task-loader_frame_width').inputValue() === '1920' && await video.locator('#f-task-loader_cores_per_node').inputValue() === '128',
    'the decoding fields hold the clip and the cores');
  await video.locator('.longest .chip', { hasText: /^InputWait/ }).click();
  const waitText = await video.locator('#op-details').textContent();
  check(/= 64 \/ \(1 x \(128 x 199 M \+ 8 x 0\) \/ \(186 x 2\.07 M\)\) - 193 ms = 773 ms/.test(waitText)
    && /F186frames decoded per sample: \(k - 1\) \/ 2 \+ 1 \+ \(f - 1\) x min\(s, \(k \+ 1\) \/ 2\)/.test(waitText),
    `the input wait is explained with the frames a clip costs: ${waitText.slice(0, 200)}`);
  await video.locator('#op-details').screenshot({ path: join(shots, 'explain-input.png') });
  await type(video, '#f-task-loader_frame_width', '569');
  await type(video, '#f-task-loader_frame_height', '320');
  await video.waitForFunction(() => document.querySelector('#limit-input') === null);
  const reencoded = await matchesCli(video, 'clips re-encoded at 569 x 320');
  check(reencoded.throughput > 5 * decoding.throughput && scenarioOfLink(await video.locator('#share-link').inputValue()).task.loader_frame_height === 320,
    `a 320-pixel short side: the GPUs set the pace (${decoding.throughput} -> ${reencoded.throughput} samples/s), and the link carries it`);
  await type(video, '#f-task-loader_frame_height', '');
  await video.waitForFunction(() => /frame size/.test(document.querySelector('#f-task-loader_frame_height')?.closest('.field')?.querySelector('.error-msg')?.textContent ?? ''));
  check((await shown(video)).throughput === reencoded.throughput && await video.locator('.stale-banner').isVisible(),
    'a frame without a height: a message under the field, the last results stay');
  await type(video, '#f-task-loader_frame_height', '320');
  await video.locator('#default-settings').screenshot({ path: join(shots, 'loader-fields.png') });

  // A GB200 NVL72 cluster: four racks of 64 GPUs on NVLink, as the CLI computes it, with what
  // the published runs say about a GPU of few of them.
  const gb = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await gb.goto(server.url);
  await gb.locator('#iteration-time').waitFor({ timeout: 20000 });
  await gb.selectOption('#system-preset', 'gb200_nvl72_256');
  await gb.waitForFunction(() => /256 GPUs \(4 nodes x 64\)/.test(document.querySelector('#scenario-summary')?.textContent ?? ''));
  await matchesCli(gb, 'GB200 NVL72, 4 racks');
  const gbRuns = (await gb.locator('#runs-sentence').textContent()).trim();
  check(/^Fewer than 20 published runs of any kind of plan validate the default model on this GPU/.test(gbRuns),
    `on a GB200 the calculator says how few runs validate it: ${gbRuns}`);
  await gb.screenshot({ path: join(shots, 'gb200-cluster.png') });

  // Dark mode follows the system setting, charts included.
  const dark = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' }), server.url);
  await dark.goto(server.url);
  await dark.locator('#iteration-time').waitFor({ timeout: 20000 });
  const bg = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
  check(bg !== 'rgb(246, 247, 249)', `dark mode background ${bg}`);
  await dark.screenshot({ path: join(shots, 'calculator-dark.png') });

  for (const p of [page, p2, p3, p4, phone, dark, video, gb]) for (const problem of p.problems) check(false, problem);

});
