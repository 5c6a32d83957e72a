// End-to-end test of the validation page (headless Chromium): every shipped measured run shows
// the same predicted value and error as `madmax validate --json`, the summary agrees, the
// filters narrow the table and the chart, a row opens in the calculator with the iteration time
// the validation computed, its link reproduces it, and the page works on a phone. The runs are
// fetched only when the page is opened, and a file that cannot be fetched is named.
//
// Usage: node tests/browser/validation.mjs [DIST_DIR] [MADMAX_BIN]
import { watchedPage, check, shots, scenarioOfLink, cli, close, canvasInked, openCalculator, runTest, settled, pointAt, steps } from './lib.mjs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const dist = process.argv[2] ?? 'dist';
const bin = process.argv[3] ?? 'target/release/madmax';
// Every shipped run, each in its set (calibration or held-out), as `madmax validate` gives them.
const cliAll = JSON.parse(execFileSync(bin, ['validate', '--json']).toString());
const want = cliAll.rows;
// Counts as the page writes them, thousands grouped: 1,108.
const grouped = (n) => n.toLocaleString('en-US');
const bySet = (name) => cliAll.summary.by_set.find(([set]) => set === name)[1];
const training = (r) => ['iteration_s', 'tflops_per_gpu', 'mfu', 'hfu'].includes(r.metric);
// A row's kind as the CLI's summary names it.
const cliKind = (r) => (r.recommendation ? 'recommendation' : r.vision ? 'vision' : training(r) ? 'llm-training' : 'llm-serving');


const rowsOnPage = (page) => page.locator('#validation-rows tbody tr').evaluateAll((trs) => trs.map((tr) => ({
  id: tr.dataset.id, predicted: Number(tr.dataset.predicted), measured: Number(tr.dataset.measured),
  error: Number(tr.dataset.error), iteration: Number(tr.dataset.iteration),
  text: tr.innerText,
})));

await runTest('validation', dist, async ({ server, browser }) => {
  const page = await openCalculator(browser, server.url, server.url);
  // The calculator says how far to trust the default model, with the numbers the rows give.
  // It is folded under the default model's one sentence: open it.
  await page.locator('#mode-accuracy summary').click();
  const help = await page.locator('#mode-accuracy').innerText();
  // The note is about LLM training runs; the recommendation runs have a note of their own.
  const llm = (r) => training(r) && !r.recommendation;
  const held = want.filter((r) => r.set === 'held-out' && llm(r));
  const heldErrs = held.map((r) => Math.abs(r.error)).sort((a, b) => a - b);
  const mid = heldErrs.length >> 1;
  const heldMedian = `${Math.round((heldErrs.length % 2 ? heldErrs[mid] : (heldErrs[mid - 1] + heldErrs[mid]) / 2) * 100)}%`;
  const calibrated = want.filter((r) => r.set === 'calibration' && llm(r)).length;
  check(help.includes(`${calibrated} published LLM training runs of its calibration set`) && help.includes(`On ${held.length} runs held out`) && help.includes(`median error is ${heldMedian}`),
    `the calculator states the model's accuracy, held-out runs included (median ${heldMedian}): ${help.slice(-200)}`);
  // The measured runs are not part of the calculator: they are fetched when a view needs them.
  const fetched = [];
  page.on('request', (r) => { if (/\.(csv|json)$/.test(new URL(r.url()).pathname)) fetched.push(new URL(r.url()).pathname); });
  check(fetched.length === 0, 'the calculator fetches no measured runs');
  await page.click('#to-validation');
  await page.locator('#validation-rows').waitFor({ timeout: 30000 });
  check(['training.csv', 'added.csv', 'recommendation.csv', 'inference.csv', 'added_inference.csv'].every((f) => fetched.includes(`/${f}`)),
    `the validation page fetches the CSVs of measured runs (${fetched.join(', ')})`);
  check(page.url().includes('view=validation'), 'the address names the validation view');
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.click('#copy-link');
  const copied = await page.evaluate(() => navigator.clipboard.readText().catch(() => ''));
  check(copied.includes('view=validation'), `"Copy link" on this page links to it (${copied.slice(0, 60)}...)`);

  // The sets in a sentence; the account of what each holds folded behind it.
  const sets = page.locator('#validation-sets');
  const intro = await page.locator('#validation-sets').evaluate((d) => d.previousElementSibling.textContent);
  check(intro.startsWith(`${grouped(want.length)} published runs`) && intro.length < 450 && !(await sets.evaluate((d) => d.open)),
    `the page says its sets in a few lines (${intro.length} characters), the account folded`);
  // Unfolded, it lists each set's sources with their runs, as the CLI sets them: a source whose
  // runs moved to the calibration set is listed there, with what it informed, and only there.
  await sets.locator('summary').click();
  const listed = async (id) => page.locator(`#${id} li`).evaluateAll((lis) => lis.map((li) => li.textContent));
  const [calList, heldList] = [await listed('validation-calibration-sources'), await listed('validation-held-out-sources')];
  for (const [set, list] of [['calibration', calList], ['held-out', heldList]]) {
    const counts = new Map();
    for (const r of want.filter((r) => r.set === set)) counts.set(r.source, (counts.get(r.source) ?? 0) + 1);
    check(list.length === counts.size && [...counts].every(([name, n]) => list.some((li) => li.startsWith(`${name} (${grouped(n)} run${n === 1 ? '' : 's'})`))),
      `the ${set} list names its ${counts.size} sources with their runs (${list.length} listed)`);
  }
  check(calList.every((li) => /\): \S/.test(li)), 'each calibration source says what it informed');
  check(calList.some((li) => li.startsWith('GPUStack performance lab (')) && !heldList.some((li) => li.startsWith('GPUStack')),
    'GPUStack\'s bursts, which led to running bursts step by step, are listed as calibration only');
  await sets.locator('summary').click();

  // The table lists the first 100 rows until asked for all of them; the chart draws them all.
  const first = await rowsOnPage(page);
  check(first.length === 100 && first.every((r, i) => r.id === want[i].id), `the table starts with the first 100 rows (${first.length})`);
  check((await page.locator('#show-all-rows').innerText()) === `Show all ${grouped(want.length)} rows`, 'a button offers every row');
  await page.click('#show-all-rows');
  check(await page.locator('#show-all-rows').count() === 0, 'the button goes once every row is listed');

  // Every row: the same numbers as the CLI.
  const got = await rowsOnPage(page);
  check(got.length === want.length && want.length === 1316, `all ${want.length} shipped rows are listed (page: ${got.length})`);
  let same = 0;
  const differ = [];
  for (const w of want) {
    const g = got.find((r) => r.id === w.id);
    if (g && close(g.predicted, w.predicted) && close(g.measured, w.measured) && close(g.error, w.error)) same++;
    else differ.push(w.id);
  }
  check(same === want.length, `every row's predicted, measured and error equal the CLI's (${same} of ${want.length}; differ: ${differ.slice(0, 5)})`);
  const signed = got.find((r) => r.id === 'vtrain-m-016');
  // Its error (the model is too fast on it) as the CLI computes it, sign and one decimal.
  const signedError = want.find((r) => r.id === 'vtrain-m-016')?.error ?? 0;
  check(signed && signedError < 0 && signed.text.includes(`${(signedError * 100).toFixed(1)} %`),
    `errors are signed percentages: ${signed?.text.replace(/\s+/g, ' ')}`);

  // The summary: median and max per source, as the CLI's.
  const summary = await page.locator('#validation-summary').innerText();
  const pct = (x) => `${(x * 100).toPrecision(3)} %`;
  for (const [name, s] of cliAll.summary.by_source) {
    check(summary.includes(name) && summary.includes(pct(s.median_abs_error)) && summary.includes(pct(s.max_abs_error)) && summary.includes(s.worst),
      `summary of ${name}: median ${pct(s.median_abs_error)}, max ${pct(s.max_abs_error)} (${s.worst})`);
  }
  // Memory where a source states it: the CLI's median and max, and both figures in the row.
  const mem = cliAll.summary.memory;
  const memText = await page.locator('#validation-memory').innerText();
  check(mem && memText.includes(`${mem.rows} runs`) && memText.includes(pct(mem.median_abs_error)) && memText.includes(mem.worst),
    `memory against what sources state: ${memText.slice(0, 160)}`);
  const stated = page.locator(`tr[data-id="${mem.worst}"] .memory-stated`);
  const worstRow = want.find((r) => r.id === mem.worst);
  const statedText = await stated.textContent();
  check(/Memory per GPU: .* of live tensors at the peak predicted, about .* as nvidia-smi shows it .*, against .* stated by the source \([+-]\d+ %\)/.test(statedText)
    && statedText.includes(`(${worstRow.memory_error > 0 ? '+' : ''}${(worstRow.memory_error * 100).toFixed(0)} %)`),
    `the row with the largest memory error shows the peak, the nvidia-smi figure and the stated one, off by the CLI's error: ${statedText}`);
  // The calibration set (training and serving rows) and the held-out runs: a line each,
  // recomputed here from the rows.
  const fitRows = want.filter((r) => r.set === 'calibration').map((r) => Math.abs(r.error)).sort((a, b) => a - b);
  const fitMedian = (fitRows[(fitRows.length - 1) >> 1] + fitRows[fitRows.length >> 1]) / 2;
  check(close(fitMedian, bySet('calibration').median_abs_error), 'the CLI\'s calibration median is the rows\' median');
  check(summary.includes('calibration set (all)') && summary.includes(pct(fitMedian)), `calibration-set summary: ${fitRows.length} rows, median ${pct(fitMedian)}`);
  // The held-out runs: their own summary line, each source marked, its rows marked.
  const cliHeld = { all: bySet('held-out') };
  check(summary.includes('held out (all)') && summary.includes(pct(cliHeld.all.median_abs_error)) && summary.includes(pct(cliHeld.all.max_abs_error)),
    `held-out summary: median ${pct(cliHeld.all.median_abs_error)}, max ${pct(cliHeld.all.max_abs_error)}`);
  const heldAll = want.filter((r) => r.set === 'held-out');
  for (const name of new Set(heldAll.map((r) => r.source))) check(summary.includes(`${name} (held out)`), `${name} is marked held out in the summary`);
  // Each kind of run's sets (LLM training and serving are judged apart): a row each, the CLI's
  // rows, median and max.
  const kindRows = await page.locator('#validation-summary tbody tr').evaluateAll((trs) => trs.map((tr) => tr.innerText.replace(/\s+/g, ' ')));
  const kindWords = { 'llm-training': 'LLM training', 'llm-serving': 'LLM serving', recommendation: 'recommendation', vision: 'vision' };
  check(cliAll.summary.by_kind.length === 8, `the CLI splits ${cliAll.summary.by_kind.length} kinds and sets`);
  for (const [kind, set, s] of cliAll.summary.by_kind) {
    const label = `${kindWords[kind]}, ${set === 'held-out' ? 'held out' : 'calibration set'}`;
    const row = kindRows.find((t) => t.startsWith(label));
    check(row && row.includes(pct(s.median_abs_error)) && row.includes(pct(s.max_abs_error)) && row.includes(s.worst),
      `summary of ${label}: ${s.rows} rows, median ${pct(s.median_abs_error)}, max ${pct(s.max_abs_error)} (${row})`);
  }
  const mpt = cliAll.summary.by_source.find(([name]) => name.startsWith('MosaicML'));
  check(mpt && summary.includes(mpt[0]) && !summary.includes(`${mpt[0]} (held out)`), 'MosaicML\'s runs, which informed changes, are not marked held out');
  const bloom = got.find((r) => r.id === 'bloom-176b-384');
  check(bloom && /\(held out\)/.test(bloom.text), 'a held-out row says so in its source cell');
  const missText = await page.locator('#validation-misses').innerText();
  const heldFar = heldAll.filter((r) => Math.abs(r.error) > 0.25).length;
  check(missText.includes(`Held out: ${heldFar} of ${cliHeld.all.rows} rows beyond 25%`), `the misses text counts the held-out rows beyond 25% (${heldFar}): ${missText.slice(0, 80)}...`);
  // The calibration set's misses: their count, and each kind's count with its worst row.
  const fitFar = want.filter((r) => r.set === 'calibration' && Math.abs(r.error) > 0.25);
  check(missText.includes(`${fitFar.length} calibration rows beyond 25%`), `the misses text counts the calibration rows beyond 25% (${fitFar.length})`);
  for (const kind of Object.keys(kindWords)) {
    const far = fitFar.filter((r) => cliKind(r) === kind).sort((a, b) => Math.abs(b.error) - Math.abs(a.error));
    if (far.length) check(missText.includes(`${far.length} ${kindWords[kind]} (${far[0].id}`), `the misses text gives ${far.length} ${kindWords[kind]} calibration rows, worst first (${far[0].id})`);
  }
  // The floor: the page says what the CLI says over every shipped training run.
  const floorLine = execFileSync(bin, ['validate']).toString().split('\n').find((l) => l.startsWith('Floor: '));
  const floorText = await page.locator('#validation-floor').innerText();
  check(floorLine && floorText.includes(floorLine.slice('Floor: '.length)), `the page gives the CLI's floor: ${floorText.slice(0, 160)}...`);
  const floorJson = cliAll.floor;
  check(floorText.includes(`on any of the ${floorJson.pairs} such pairs here`), `the page counts the ${floorJson.pairs} same-work pairs`);
  // The GEMMs profiled one by one: the page gives the CLI's line for each GPU.
  const kernelLines = execFileSync(bin, ['validate']).toString().split('\n').filter((l) => / GEMMs, median error /.test(l)).map((l) => l.trim());
  const kernelText = await page.locator('#validation-kernels').innerText();
  check(kernelLines.length === cliAll.kernels.length && cliAll.kernels.length === 2 && kernelLines.every((l) => kernelText.includes(l)),
    `the page gives the CLI's GEMM check for ${cliAll.kernels.map((k) => k.label).join(' and ')}: ${kernelText.slice(0, 200)}...`);
  check(await canvasInked(page, 'chart-validation') > 2000, 'the predicted-vs-measured chart is drawn');
  // Every source has a marker of its own: no two share a colour and a shape.
  const markers = await page.locator('#validation-legend .swatch:not(.line)').evaluateAll((els) => els.map((e) => `${e.style.color} ${e.textContent}`));
  const sourceCount = new Set(want.map((r) => r.source)).size;
  check(markers.length === sourceCount && new Set(markers).size === markers.length, `the legend gives each of the ${sourceCount} sources its own marker (${new Set(markers).size} distinct of ${markers.length})`);
  const [pointTip = ''] = await pointAt(page, 'chart-validation', { xs: steps(0.1, 0.95, 0.01), ys: steps(0.1, 0.9, 0.02), first: true });
  check(/^[\w.-]+: measured [\d.]+ ?\S*, predicted [\d.]+ ?\S*, [+-][\d.]+ %$/.test(pointTip), `pointing at a run names its row and both figures: ${pointTip}`);
  await page.mouse.move(0, 0);
  // Measured over predicted time per kind of plan and GPU, recomputed here from the CLI's rows:
  // nearest-rank 10th, 50th and 90th percentiles of kinds with 20 runs or more.
  const groups = new Map();
  {
    // Each CSV gpu cell's family (SOURCES.md's schema), as the bands group them.
    const family = {
      'v100-32g': 'V100', 'a100-40g': 'A100', 'a100-80g': 'A100', 'a800-80g': 'A100', 'h100-80g': 'H100',
      'h800-80g': 'H100', 'h100-94g': 'H100 NVL', 'h100-96g': 'GH200', 'h200-141g': 'H200', 'b200-180g': 'B200',
      'b200-192g': 'B200', 'gb200-186g': 'GB200', 'mi300x-192g': 'MI300X',
    };
    for (const r of want.filter(training)) {
      if (r.error === null) continue;
      check(family[r.gpu] !== undefined, `training row ${r.id}'s GPU ${r.gpu} has a family`);
      const ratio = r.metric === 'iteration_s' ? 1 / (1 + r.error) : 1 + r.error;
      const key = `${r.parallelism} ${family[r.gpu]}`;
      groups.set(key, [...(groups.get(key) ?? []), ratio]);
    }
    // Static batches of serving launched kernel by kernel, by their plan without replicas, end
    // to end (a latency, or output tokens/s at a fixed batch and output).
    for (const r of want) {
      const endToEnd = ['latency_ms', 'output_tokens_per_s', 'output_tokens_per_s_per_gpu'].includes(r.metric);
      if (r.error === null || !r.serving || r.serving.in_flight || r.serving.cuda_graphs || !endToEnd || !family[r.gpu]) continue;
      const ratio = r.metric === 'latency_ms' ? 1 / (1 + r.error) : 1 + r.error;
      const plan = r.plan.split(' \u00d7 ').filter((d) => !d.startsWith('DP ')).join(' \u00d7 ') || 'one GPU';
      const key = `static serving, ${plan} ${family[r.gpu]}`;
      groups.set(key, [...(groups.get(key) ?? []), ratio]);
    }
  }
  const bandsText = (await page.locator('#validation-bands tbody').innerText()).replace(/\s+/g, ' ');
  let bandsFound = 0;
  for (const [key, v] of groups) {
    if (v.length < 20) continue;
    v.sort((a, b) => a - b);
    const at = (p) => `${v[Math.round(p * (v.length - 1))].toFixed(2)}\u00d7`;
    const line = `${key} ${v.length} ${at(0.1)} ${at(0.5)} ${at(0.9)}`;
    if (bandsText.includes(line)) bandsFound++;
    else check(false, `band ${line} is in the table: ${bandsText}`);
  }
  check(bandsFound >= 15 && (await page.locator('#validation-bands tbody tr').count()) === bandsFound,
    `the table of measured over predicted time has the ${bandsFound} kinds of plan the CLI's rows give`);
  await page.locator('.validation details.assumptions summary').click();
  const sources = await page.locator('.validation details.assumptions').innerText();
  check(/arXiv 2104\.04473/.test(sources) && /MICRO 2024/.test(sources) && /FasterTransformer/.test(sources) && /2201\.11990/.test(sources) && /tr11-176B-ml/.test(sources), 'each source is cited in full');
  await page.locator('.validation').screenshot({ path: join(shots, 'validation.png') });

  // Filters narrow the table.
  await page.selectOption('#filter-source', 'Narayanan et al. 2021');
  let shown = await rowsOnPage(page);
  check(shown.length === 10 && shown.every((r) => r.id.startsWith('megatron-')), `source filter: ${shown.length} Megatron-LM rows`);
  check((await page.locator('#validation-shown').innerText()).includes(`10 of ${grouped(want.length)} rows shown`), 'the count of rows shown is stated');
  await page.selectOption('#filter-source', '');
  await page.selectOption('#filter-gpu', 'a100-40g');
  shown = await rowsOnPage(page);
  const a100_40 = want.filter((w) => /A100 SXM 40GB/.test(got.find((g) => g.id === w.id)?.text ?? ''));
  check(shown.length > 0 && shown.length === a100_40.length, `GPU filter: ${shown.length} A100-40GB rows`);
  // The first GPU that is not NVIDIA's: vLLM on eight MI300Xs, every run held out and shown as
  // the CLI predicts it.
  await page.selectOption('#filter-gpu', 'mi300x-192g');
  shown = await rowsOnPage(page);
  const mi300x = want.filter((w) => w.gpu === 'mi300x-192g');
  const asCli = (r) => mi300x.some((w) => w.id === r.id && w.set === 'held-out' && Math.abs(w.predicted - r.predicted) <= 1e-6 * Math.abs(w.predicted));
  check(mi300x.length === 17 && shown.length === mi300x.length && shown.every(asCli) && shown.every((r) => /MI300X/.test(r.text)),
    `GPU filter: the ${shown.length} MI300X rows, held out, as the CLI predicts them`);
  await page.locator('.validation').screenshot({ path: join(shots, 'validation-mi300x.png') });
  // The H200 rows: TensorRT-LLM's FP8 static batches in Azure's guide, calibration since they
  // led to serving's FP8 GEMMs keeping training's share of their peak, and MLPerf Training
  // v5.0's two Llama 3.1 405B runs, held out.
  await page.selectOption('#filter-gpu', 'h200-141g');
  shown = await rowsOnPage(page);
  const h200 = want.filter((w) => w.gpu === 'h200-141g');
  const h200Set = (w) => (w.id.startsWith('mlperf50-') ? 'held-out' : 'calibration');
  check(h200.length === 8 && shown.length === h200.length && shown.every((r) => /H200/.test(r.text) && h200.some((w) => w.id === r.id && w.set === h200Set(w))),
    `GPU filter: the ${shown.length} H200 rows, Azure's in the calibration set, MLPerf's held out`);
  await page.locator('.validation').screenshot({ path: join(shots, 'validation-h200.png') });
  // The GB200 rows (MLPerf Training v5.0's 405B on NVL72 racks): one held out, the six whose
  // configs keep each replica in its rack in the calibration set, each as the CLI predicts it.
  await page.selectOption('#filter-gpu', 'gb200-186g');
  shown = await rowsOnPage(page);
  const gb200 = want.filter((w) => w.gpu === 'gb200-186g');
  const gbAsCli = (r) => gb200.some((w) => w.id === r.id && Math.abs(w.predicted - r.predicted) <= 1e-6 * Math.abs(w.predicted));
  check(gb200.length === 7 && gb200.filter((w) => w.set === 'held-out').length === 1 && shown.length === 7 && shown.every((r) => /GB200/.test(r.text) && gbAsCli(r)),
    `GPU filter: the ${shown.length} GB200 rows, as the CLI predicts them`);
  await page.locator('.validation').screenshot({ path: join(shots, 'validation-gb200.png') });
  await page.selectOption('#filter-gpu', '');
  await page.selectOption('#filter-parallelism', 'TP+PP+DP');
  shown = await rowsOnPage(page);
  check(shown.length > 0 && shown.length < want.length && shown.every((r) => /TP \d+ × PP \d+ × DP \d+/.test(r.text)),
    `parallelism filter: ${shown.length} TP+PP+DP rows`);
  await page.selectOption('#filter-parallelism', '');

  // Largest error first, and a row's caveats.
  await page.selectOption('#filter-order', 'worst');
  shown = await rowsOnPage(page);
  const errs = shown.map((r) => Math.abs(r.error));
  const worst = want.reduce((a, b) => (Math.abs(b.error) > Math.abs(a.error) ? b : a));
  check(errs.every((e, i) => i === 0 || e <= errs[i - 1]) && shown[0].id === worst.id, `largest error first: ${shown[0].id} (the CLI's worst: ${worst.id})`);
  await page.locator('#validation-rows tr[data-id="megatron-t1-1.7b"] summary').click();
  const notes = await page.locator('#validation-rows tr[data-id="megatron-t1-1.7b"] details').innerText();
  check(/Defaults for blank cells: .*microbatch blank/.test(notes), `a row's caveats and defaults open: ${notes.slice(0, 80).replace(/\s+/g, ' ')}...`);
  // The order and the scroll position stay while the reader looks at another view.
  // Scroll and go Back at once, as a reader with a keyboard can: the page must not wait for the
  // scroll event to know where the view was left.
  await page.evaluate(() => { window.scrollTo(0, 1500); history.back(); });
  await page.locator('#iteration-time').waitFor();
  await page.goForward();
  await page.locator('#validation-rows').waitFor();
  await page.waitForFunction(() => Math.abs(window.scrollY - 1500) < 2, null, { timeout: 30000 }).catch(() => {});
  const y = await page.evaluate(() => window.scrollY);
  check(await page.locator('#filter-order').inputValue() === 'worst' && (await rowsOnPage(page))[0].id === worst.id && Math.abs(y - 1500) < 2,
    `Back to the calculator and Forward again keep the validation page's order (largest error first) and the place on the page (${y} px)`);
  await page.selectOption('#filter-order', 'file');

  // A row opens in the calculator with the iteration time the validation computed.
  const row = page.locator('#validation-rows tr[data-id="korthikanti-t5-22b-selective-sp"]');
  const iteration = Number(await row.getAttribute('data-iteration'));
  const link = await row.getByRole('link').getAttribute('href');
  await row.getByRole('button').click();
  await page.locator('#iteration-time').waitFor({ timeout: 5000 });
  const pageIt = Number(await page.locator('#iteration-time').getAttribute('data-value'));
  check(close(pageIt, iteration), `the row opens in the calculator: ${pageIt} s = validation's ${iteration} s`);
  // With what the source measured beside the model's figure, until the scenario changes.
  const rowWant = want.find((w) => w.id === 'korthikanti-t5-22b-selective-sp');
  const said = await page.locator('#yardstick').innerText();
  check(said.includes('korthikanti-t5-22b-selective-sp') && said.includes(`(${(rowWant.error * 100 >= 0 ? '+' : '')}${(rowWant.error * 100).toFixed(1)} %)`)
    && close(Number(await page.locator('#yardstick-measured').innerText()), rowWant.measured, 1e-3),
    `the calculator says what the run measured and the model's error: ${said.slice(0, 140)}...`);
  await page.locator('.card', { has: page.locator('#scenario-summary') }).screenshot({ path: join(shots, 'validation-row-in-calculator.png') });
  check(await page.locator('#mode-default').isChecked(), 'on the default model');
  const cliIt = cli(bin, scenarioOfLink(link)).iteration_ms / 1000;
  check(close(cliIt, iteration), `the row's link is the same scenario (CLI ${cliIt} s)`);

  // The mixture-of-experts run opens as one: its experts in the form, the validation's time,
  // and what the published MoE run showed instead of "unknown".
  await page.click('nav >> text=Validation');
  const moeId = 'flagperf-mixtral-8x7b-h100-n32-tp8-pp2-dp2';
  const moeRow = page.locator(`#validation-rows tr[data-id="${moeId}"]`);
  const moeIt = Number(await moeRow.getAttribute('data-iteration'));
  await moeRow.getByRole('button').click();
  await page.locator('#iteration-time').waitFor({ timeout: 5000 });
  await settled(page);
  const experts = [await page.locator('#f-model-num_experts').inputValue(), await page.locator('#f-model-num_active_experts').inputValue()];
  const moeRuns = (await page.locator('#runs-sentence').textContent()).trim();
  check(close(Number(await page.locator('#iteration-time').getAttribute('data-value')), moeIt) && experts.join('/') === '8/2'
    && /mixture-of-experts LLM .*Mixtral-8x7B and Qwen3-235B-A22B on 32 H100s and 256 H100s/.test(moeRuns),
    `the Mixtral run opens with its 8 experts, 2 a token, at the validation's ${moeIt} s, and says what it showed: ${moeRuns.slice(0, 90)}...`);
  await page.locator('.card', { has: page.locator('#scenario-summary') }).screenshot({ path: join(shots, 'validation-moe-in-calculator.png') });

  // A serving row opens with what it measured drawn on the throughput-latency chart: a dashed
  // line, listed in the chart's numbers.
  await page.click('nav >> text=Validation');
  const served = page.locator('#validation-rows tr[data-id="vllm-2192-llama2-70b-tp4-custom"]');
  await served.getByRole('button').click();
  await page.locator('#chart-serving').waitFor({ timeout: 5000 });
  const servingFigure = page.locator('figure', { has: page.locator('#chart-serving') });
  const measuredRow = servingFigure.locator('tr', { hasText: 'measured (vLLM pull request #2192' });
  await measuredRow.waitFor({ state: 'attached', timeout: 20000 });
  const servingLabel = await page.locator('#chart-serving').getAttribute('aria-label');
  check(/1\.12 k tokens\/s/.test(await measuredRow.textContent()) && /dashed line is what the source measured/.test(servingLabel),
    `the serving chart draws what vLLM measured: ${(await measuredRow.textContent()).trim()}`);
  await settled(page);
  await servingFigure.screenshot({ path: join(shots, 'validation-serving-measured.png') });
  // A static batch's measured latency is drawn as the tokens/s it makes: the batch's generated
  // tokens over that time.
  await page.click('nav >> text=Validation');
  const ftId = 'ftguide-20b-tp2-b16-i128-o20';
  const ftWant = want.find((w) => w.id === ftId);
  await page.locator(`#validation-rows tr[data-id="${ftId}"]`).getByRole('button').click();
  await page.locator('#chart-serving').waitFor({ timeout: 5000 });
  check((await page.locator('#yardstick').innerText()).includes('Batch latency (ms) measured'), 'the calculator names the row\'s metric');
  const ftRow = servingFigure.locator('tr', { hasText: 'measured (NVIDIA FasterTransformer GPT guide' });
  await ftRow.waitFor({ state: 'attached', timeout: 20000 });
  const ftText = (await ftRow.textContent()).trim();
  const ftRate = /([\d.]+) (k )?tokens\/s/.exec(ftText);
  const rate = ftRate ? Number(ftRate[1]) * (ftRate[2] ? 1e3 : 1) : NaN;
  check(close(rate, 16 * 20 / (ftWant.measured / 1e3), 5e-3), `the serving chart draws FasterTransformer's latency as tokens/s: ${ftText}`);
  await settled(page);
  await servingFigure.screenshot({ path: join(shots, 'validation-serving-latency.png') });
  await page.goBack();
  await page.locator('#validation-rows').waitFor();
  await page.goBack();
  await page.locator('#chart-serving').waitFor();
  await page.goBack();
  await page.locator('#validation-rows').waitFor();
  await page.goBack();
  await page.locator('#iteration-time').waitFor();

  // The row's link, opened fresh, shows the same.
  const fresh = await watchedPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url);
  await fresh.goto(link);
  await fresh.locator('#iteration-time').waitFor({ timeout: 20000 });
  const freshIt = Number(await fresh.locator('#iteration-time').getAttribute('data-value'));
  check(close(freshIt, iteration), `the row's link reproduces it in a fresh browser (${freshIt} s)`);

  // The tightest published run (MPT-1B, the largest micro-batch its authors could fit): it ran,
  // and the calculator shows it fitting, close to the GPU's memory.
  await fresh.goto(`${server.url}?view=validation`);
  await fresh.locator('#validation-rows').waitFor({ timeout: 20000 });
  await fresh.selectOption('#filter-source', 'MosaicML llm-foundry MPT training benchmarks');
  const tight = fresh.locator('#validation-rows tr[data-id="mpt-1b-a100-40g-n32-mb10"]');
  check(/MosaicML/.test(await tight.innerText()), 'the MPT-1B row is listed');
  await tight.getByRole('button').click();
  await fresh.locator('#iteration-time').waitFor({ timeout: 20000 });
  check(await fresh.locator('#limit-memory').count() === 0, 'a published run that ran is not said not to fit');
  await fresh.locator('#chart-memory').screenshot({ path: join(shots, 'memory-tight.png') });

  // A link to the page itself opens it; the page is not settled until its rows, fetched and
  // predicted, are drawn (tests and benchmarks wait for that state).
  await fresh.goto(`${server.url}?view=validation`);
  await settled(fresh);
  check(await fresh.locator('#validation-rows tbody tr').count() === 100, '?view=validation opens the validation page, settled once its rows are drawn');

  // On a phone: the chart fills the width and stays legible; the table scrolls.
  const phone = await watchedPage(await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 }), server.url);
  await phone.goto(`${server.url}?view=validation`);
  await phone.locator('#chart-validation').waitFor({ timeout: 20000 });
  const box = await phone.locator('#chart-validation').boundingBox();
  check(box && box.width >= 300 && box.width <= 390, `on a phone the chart is ${Math.round(box?.width)} px wide`);
  const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `on a phone the page does not scroll sideways (${overflow} px)`);
  check(await canvasInked(phone, 'chart-validation') > 2000, 'on a phone the chart is drawn');
  // #20 item 9: the legend is beside the data, not over it, and GPUs are named as people name
  // them ("A100 80GB"), not by their CSV ids ("a100-80g"), in the filter and the table.
  const legendBox = await phone.locator('#validation-legend').boundingBox();
  check(legendBox && (legendBox.y >= box.y + box.height - 1 || legendBox.y + legendBox.height <= box.y + 1),
    `on a phone the legend does not cover the chart (chart ${Math.round(box.y)}-${Math.round(box.y + box.height)} px, legend from ${Math.round(legendBox?.y)} px)`);
  const gpuNames = [...await phone.locator('#filter-gpu option').allTextContents(),
    ...await phone.locator('#validation-rows tbody tr').evaluateAll((trs) => trs.map((tr) => tr.innerText))];
  const rawId = gpuNames.find((t) => /\b[a-z]+\d+-\d+g\b/.test(t));
  check(gpuNames.length > 10 && rawId === undefined, `GPUs are named, not given by CSV id: ${rawId ?? 'none raw'}`);
  await phone.locator('.validation').screenshot({ path: join(shots, 'validation-phone.png') });

  // A file that cannot be fetched: the page says which and what to do, and the calculator
  // works as before. (Its own page: the failed request is logged as a console error.)
  const broken = await (await browser.newContext()).newPage();
  await broken.route('**/added.csv', (route) => route.fulfill({ status: 404, body: 'gone' }));
  await broken.goto(`${server.url}?view=validation`);
  const failure = await broken.locator('#validation-failed').innerText({ timeout: 30000 });
  check(/added\.csv/.test(failure) && /HTTP 404/.test(failure) && /reload/.test(failure), `a missing file is named, with what to do: "${failure}"`);
  await broken.goto(`${server.url}?view=learn`);
  const storiesFailure = await broken.locator('#stories-failed').innerText({ timeout: 30000 });
  check(/added\.csv/.test(storiesFailure), `the library says so too: "${storiesFailure}"`);
  await broken.goto(server.url);
  await broken.locator('#iteration-time').waitFor({ timeout: 30000 });
  check(/\d/.test(await broken.locator('#iteration-time').innerText()), 'the calculator still computes');

  for (const p of [page, fresh, phone]) check(p.problems.length === 0, `no console errors or outside requests: ${p.problems}`);
});
