// layout.mjs ORIGIN SUBMISSION - the dashboard at 1280 px wide
// (tests/610-web-layout.t): the submission page of a smoke-suite series fits
// two screens (its document at most 2,000 px tall), its parameters are shown
// once per table, its badge says the word its text says; and no page scrolls
// sideways, nor any table inside its box (scrollWidth <= clientWidth), the
// Alerts page with a bisected alert's history chart open included.  The
// Alerts page's alerts come from a fixture served in place of
// /api/v1/alerts (long commit ranges, a bisection of several steps, a
// history of many commits); a history of one point says "1 point".
// Output: TAP lines (see browser.mjs); screenshots in $TEST_OUTPUT/layout-*.png.
import { join } from 'node:path';
import { drive, check, outDir } from './browser.mjs';

const [origin, sub] = process.argv.slice(2);
const WIDTH = 1280;
const MAX_HEIGHT = 2000;
const out = outDir();

const hex = (n) => n.toString(16).padStart(40, 'a');
const now = new Date().toISOString();
const history = Array.from({ length: 40 }, (_, i) => ({ seq: i + 1, value: i < 24 ? 1.0e6 + (i % 5) * 4e3 : 0.8e6 + (i % 5) * 4e3 }));
const ALERTS = {
  alerts: [
    {
      id: 7, state: 'bisected', state_by: 'tracker', state_at: now, tree: 'mainline', branch: 'master',
      workload: 'hot', lock: 'kmutex', metric: 'ops_per_sec', unit: 'ops/s', params: 'cs_loops=10,duration_ms=50,threads=4',
      machine_class: 'x86_64-2cpu', change: -0.2, before: 1.0e6, after: 0.8e6,
      commit: hex(0xc0ffee), subject: 'locking/kmutex: spin on the owner while it runs on another CPU', author: 'Dev One <dev@example.org>',
      range: `${hex(1)}..${hex(2)}`, bisect_range: `${hex(1)}..${hex(2)}`,
      steps: Array.from({ length: 6 }, (_, i) => ({ commit: hex(100 + i), verdict: i % 2 ? 'regression' : 'no-change', submission: 40 + i })),
      history, seqs: { good: 24, bad: 25, commit: 25 },
    },
    {
      id: 8, state: 'new', state_by: 'tracker', state_at: now, tree: 'mainline', branch: 'master',
      workload: 'unc', lock: 'ticket', metric: 'ns_per_pair', unit: 'ns', params: 'duration_ms=50,threads=1',
      machine_class: 'x86_64-2cpu', change: 0.12, before: 30, after: 33.6,
      reason: 'the bisection was inconclusive twice at the same commit', range: `${hex(3)}..${hex(4)}`, bisect_range: `${hex(5)}..${hex(6)}`,
      steps: [], history: [{ seq: 1, value: 30 }], seqs: { good: 1, bad: 1 },
    },
  ],
};

const widthProblems = (page) => page.evaluate(() => {
  const bad = [];
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth) bad.push(`document ${doc.scrollWidth} > ${doc.clientWidth}`);
  for (const e of document.querySelectorAll('.table-wrap, main, figure, .plot')) {
    if (e.scrollWidth > e.clientWidth + 1) bad.push(`${e.tagName.toLowerCase()}.${e.className || ''}#${e.id || ''} ${e.scrollWidth} > ${e.clientWidth}`);
  }
  return bad;
});

await drive(origin, async ({ page, context }) => {
  await context.route(`${origin}/api/v1/alerts`, (route) => route.fulfill({ json: ALERTS }));

  // --- the submission page of the smoke suite ------------------------------
  await page.goto(`${origin}/#/submissions/${sub}`);
  await page.locator('#sub-verdict[data-state=done]').waitFor({ timeout: 60000 });
  await page.locator('table.verdicts tbody tr').first().waitFor();
  await page.locator('#comparisons details.charts-box, #comparisons figure.chart').first().waitFor();
  await page.waitForTimeout(500); // charts settle their size
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  check(height <= MAX_HEIGHT, `the smoke suite's submission page fits two screens at ${WIDTH} px (${height} px tall, at most ${MAX_HEIGHT})`, `${height} px`);
  await page.screenshot({ path: join(out, 'layout-submission.png'), fullPage: true });

  const api = await (await fetch(`${origin}/api/v1/submissions/${sub}`)).json();
  const cells = await page.locator('table.verdicts tbody td.params').allInnerTexts();
  const common = await page.locator('.params-common').allInnerTexts();
  const repeated = cells.filter((c) => /duration_ms=/.test(c)).length;
  check(common.length > 0 && common.every((c) => /duration_ms=/.test(c)) && repeated === 0,
    'the parameters every row shares are said once per table, not on each row',
    `shared: ${common.join(' | ')}`, `rows with duration_ms: ${repeated} of ${cells.length}`);
  check(cells.length === api.verdicts.length, 'the table still has a row per verdict row', `${cells.length} vs ${api.verdicts.length}`);

  const badge = (await page.locator('.facts .badge[class*="v-"]').first().innerText()).trim();
  const said = await page.locator('#sub-verdict').innerText();
  check(said === `verdict: ${badge}` && badge === api.verdict, 'the verdict badge and the text beside it say the same word',
    `badge "${badge}", text "${said}", API ${api.verdict}`);

  // --- every page at 1280 px: nothing scrolls sideways ----------------------
  const pages = [
    ['submissions', '#/submissions', '#submissions tbody tr'],
    ['submission', `#/submissions/${sub}`, 'table.verdicts tbody tr'],
    ['submit', '#/submit', '#f-submit'],
    ['machines', '#/machines', '#agents tbody tr'],
    ['history', '#/history', '#history-out figure, #history-out .empty, #history-out .one-point'],
    ['alerts', '#/alerts', '#alerts tbody tr[data-id="7"]'],
  ];
  for (const [name, hash, ready] of pages) {
    await page.goto(`${origin}/${hash}`);
    await page.locator(ready).first().waitFor({ timeout: 30000 });
    if (name === 'submission') {
      // with its charts open too
      for (const d of await page.locator('#comparisons details.charts-box:not([open]) > summary').all()) await d.click();
      await page.locator('#comparisons figure.chart').first().waitFor();
    }
    if (name === 'alerts') {
      await page.locator('#alerts tr.chart-row[data-alert="7"] summary').click();
      await page.locator('#alerts tr.chart-row[data-alert="7"] canvas').first().waitFor();
    }
    await page.waitForTimeout(300);
    const bad = await widthProblems(page);
    check(bad.length === 0, `the ${name} page fits ${WIDTH} px without scrolling sideways`, ...bad);
    await page.screenshot({ path: join(out, `layout-${name}.png`), fullPage: true });
  }

  // the alert's chart is readable: as wide as most of the page, not a column's
  const chartWidth = await page.locator('#alerts tr.chart-row[data-alert="7"] canvas').first().evaluate((c) => c.getBoundingClientRect().width);
  check(chartWidth >= 600, 'the alert\'s history chart gets a readable width', `${chartWidth} px`);
  // a history of one commit is said in words
  await page.locator('#alerts tr.chart-row[data-alert="8"] summary').click();
  const one = await page.locator('#alerts tr.chart-row[data-alert="8"] details').innerText();
  check(/1 point/.test(one) && await page.locator('#alerts tr.chart-row[data-alert="8"] canvas').count() === 0,
    'a history of one point says "1 point" and draws no axis', one.replace(/\s+/g, ' '));
}, { width: WIDTH, height: 900 });
