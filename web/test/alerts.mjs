// alerts.mjs ORIGIN BISECTED RANGE REWRITTEN MERGEBASE TOKEN - the Alerts page
// (tests/344-track-force.t): every alert listed with its state and who set
// it, the bisected one with its commit and its history chart, the ones
// bisection could not name with the reason, and the force-pushed branch;
// an admin sets an alert's state from the page (a wrong token is refused
// and says why).
// Output: TAP lines (see browser.mjs).
import { join } from 'node:path';
import { drive, check, outDir, inkedPixels } from './browser.mjs';

const [origin, bisected, range, rewritten, mergeBase, token] = process.argv.slice(2);

await drive(origin, async ({ page, consoleErrors }) => {
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

  // the chart has a row of its own under its alert's
  const details = page.locator(`#alerts tbody tr.chart-row[data-alert="${bisected}"] details`);
  const summary = await details.locator('summary').innerText();
  check(/^history \([1-9][0-9]* commits\)$/.test(summary), 'the bisected alert carries its history', summary);
  await details.locator('summary').click();
  await details.locator('.chart canvas').first().waitFor({ timeout: 20000 });
  const legend = await details.locator('.chart').innerText();
  check(/runs/.test(legend) && /confirmed step/.test(legend) && /bisected commit/.test(legend),
    'its history chart has the runs, the step and the commit', legend.replace(/\s+/g, ' ').slice(0, 200));
  const ink = await inkedPixels(details.locator('.chart canvas').first());
  check(ink > 200, 'and is drawn', `${ink} inked pixels`);

  // the state form: a wrong token changes nothing and the page says why
  const form = page.locator('#alert-state');
  await form.locator('#a-alert').selectOption(range);
  await form.locator('#a-state').selectOption('invalid');
  await form.locator('#a-who').fill('tester');
  await form.locator('#a-token').fill(`${token}-wrong`);
  await form.locator('button[type=submit]').click();
  await form.locator('#a-result .error').waitFor({ timeout: 10000 });
  const refused = await form.locator('#a-result').innerText();
  check(/HTTP 40[13]/.test(refused) && /was not changed/.test(refused), 'a wrong admin token is refused, and the page says so', refused);
  // the browser logs the refused request itself: that one line is expected
  const expected = consoleErrors.findIndex((m) => /status of 40[13]/.test(m));
  if (expected >= 0) consoleErrors.splice(expected, 1);
  const still = await row(range).locator('td[data-label="State"]').innerText();
  check(!/^invalid/.test(still), 'and the alert keeps its state', still);
  await form.locator('#a-token').fill(token);
  await form.locator('button[type=submit]').click();
  await form.locator('#a-result .ok').waitFor({ timeout: 10000 });
  await page.waitForFunction((id) => {
    const td = document.querySelector(`#alerts tbody tr[data-id="${id}"] td[data-label="State"]`);
    return td && /^invalid\s+tester, /.test(td.innerText);
  }, range, { timeout: 10000 }).catch(() => {});
  const now = await row(range).locator('td[data-label="State"]').innerText();
  check(/^invalid\s+tester, /.test(now), 'with the admin token the page sets the alert invalid, by tester', now);
  await page.screenshot({ path: join(outDir(), 'web-alerts.png'), fullPage: true });
});
