// alerts.mjs ORIGIN BISECTED RANGE REWRITTEN MERGEBASE - the Alerts page
// (tests/34-track-force.t): every alert listed with its state and who set
// it, the bisected one with its commit and its history chart, the ones
// bisection could not name with the reason, and the force-pushed branch.
// Output: TAP lines (see browser.mjs).
import { join } from 'node:path';
import { drive, check, outDir, inkedPixels } from './browser.mjs';

const [origin, bisected, range, rewritten, mergeBase] = process.argv.slice(2);

await drive(origin, async ({ page }) => {
  const row = (id) => page.locator(`#alerts tbody tr[data-id="${id}"]`);
  await page.goto(`${origin}/#/alerts`);
  await row(bisected).waitFor();
  const ids = await page.locator('#alerts tbody tr[data-id]').evaluateAll((trs) => trs.map((tr) => tr.dataset.id));
  check([bisected, range, rewritten].every((id) => ids.includes(id)), 'the page lists the alerts', ids.join(','));

  const state = await row(bisected).locator('td[data-label="State"]').innerText();
  check(/^wontfix\s+maintainer, /.test(state), 'an alert shows its state and who set it', state);
  const commit = await row(bisected).locator('td[data-label="Commit"]').innerText();
  check(/^[0-9a-f]{12} change 2\s+Dev One <dev@example.org>$/.test(commit),
    'the bisected alert names the commit: hash, subject, author', commit);

  const why = await row(range).locator('td[data-label="Commit"]').innerText();
  check(/inconclusive twice/.test(why) && /[0-9a-f]{40}\.\.[0-9a-f]{40}/.test(why),
    'an alert bisection could not name shows why, and the range', why);
  const dropped = await row(rewritten).locator('td[data-label="Commit"]').innerText();
  check(/force-pushed/.test(dropped), 'an alert whose range a force-push dropped says so', dropped);

  const rewrites = await page.locator('#rewrites li').allInnerTexts();
  check(rewrites.length === 1 && /^lab master was force-pushed /.test(rewrites[0])
    && rewrites[0].includes(mergeBase.slice(0, 12)),
    'the page names the force-pushed branch and the merge base its history goes on from', rewrites.join(' | '));

  const details = row(bisected).locator('details');
  const summary = await details.locator('summary').innerText();
  check(/^history \([1-9][0-9]* commits\)$/.test(summary), 'the bisected alert carries its history', summary);
  await details.locator('summary').click();
  await details.locator('.chart canvas').first().waitFor({ timeout: 20000 });
  const legend = await details.locator('.chart').innerText();
  check(/runs/.test(legend) && /confirmed step/.test(legend) && /bisected commit/.test(legend),
    'its history chart has the runs, the step and the commit', legend.replace(/\s+/g, ' ').slice(0, 200));
  const ink = await inkedPixels(details.locator('.chart canvas').first());
  check(ink > 200, 'and is drawn', `${ink} inked pixels`);
  await page.screenshot({ path: join(outDir(), 'web-alerts.png'), fullPage: true });
});
