// noiseplan.mjs ORIGIN SUB - the verdict table of a submission whose job was
// planned from its machine's noise (tests/385-server-noise-plan.t): every row
// shows its margin beside its change and interval, as the API has them; a
// row the machine cannot resolve says so beside its verdict, and whether its
// change moved past its margin.  Output: TAP lines (see browser.mjs).
import { join } from 'node:path';
import { drive, check, outDir } from './browser.mjs';

const [origin, sub] = process.argv.slice(2);

await drive(origin, async ({ page }) => {
  const api = await (await fetch(`${origin}/api/v1/submissions/${sub}`)).json();
  await page.goto(`${origin}/#/submissions/${sub}`);
  const table = page.locator('table.verdicts');
  await table.locator('tbody tr').first().waitFor();
  const heads = await table.locator('thead th').allInnerTexts();
  const col = (name) => heads.findIndex((h) => h === name) + 1;
  check(col('margin') > 0 && col('margin') === col('change [95% interval]') + 1,
    'the table has a margin column beside the change and its interval', heads.join(' | '));

  // every row's margin as the API gives it (a fraction), as +-X.X%
  const wrong = [];
  for (const v of api.verdicts.filter((x) => x.final && x.metric !== 'lockup')) {
    const key = `${v.workload}|${v.lock}|${v.params}|${v.metric}`;
    const tr = table.locator(`tbody tr[data-key="${key}"]`);
    const margin = await tr.locator(`td:nth-child(${col('margin')})`).innerText();
    const want = v.margin > 0 ? `±${(v.margin * 100).toFixed(1)}%` : '-';
    if (margin !== want) wrong.push(`${key}: ${margin}, want ${want}`);
  }
  check(wrong.length === 0 && api.verdicts.some((v) => v.margin > 0), 'every row shows the margin it was judged against',
    wrong.join('\n'));

  const row = (threads) => {
    const v = api.verdicts.find((x) => x.final && x.workload === 'hot' && x.metric === 'ops_per_sec'
      && new RegExp(`(^|,)threads=${threads}(,|$)`).test(x.params));
    return [v, table.locator(`tbody tr[data-key="${v.workload}|${v.lock}|${v.params}|${v.metric}"]`)];
  };
  const [v4, tr4] = row(4);
  const change4 = await tr4.locator(`td:nth-child(${col('change [95% interval]')})`).innerText();
  check(change4.startsWith(`${(v4.change * 100).toFixed(1)}% [`) && change4.includes(`${(v4.change_lo * 100).toFixed(1)}%`),
    'the row that moved shows its change and interval', change4);
  const verdict4 = await tr4.locator(`td:nth-child(${col('verdict')})`).innerText();
  check(/^inconclusive\s+not resolvable on this machine: 58\.9%; moved past its margin$/.test(verdict4),
    'the hot row at 4 threads says it is not resolvable here and moved past its margin', verdict4);
  const [, tr2] = row(2);
  const verdict2 = await tr2.locator(`td:nth-child(${col('verdict')})`).innerText();
  check(/^inconclusive\s+not resolvable on this machine: 58\.9%$/.test(verdict2),
    'the hot row at 2 threads says it is not resolvable here, and no more', verdict2);
  const legend = await page.locator('.comparison .legend').first().innerText();
  check(/margin = a row is no-change when/.test(legend) && /not resolvable on this machine: X%/.test(legend),
    'the legend says what the margin and "not resolvable" mean', legend);
  await page.screenshot({ path: join(outDir(), 'web-noise-plan.png'), fullPage: true });
});
