// faultalert.mjs ORIGIN ID COMMIT - the Alerts page with a fault's alert
// (tests/351-track-fault.t): alert ID, bisected to COMMIT, is a crash, not a
// figure: its Change cell says crash, its Before → after says clean → crash,
// and in place of a history chart the page says no figure moved.
// Output: TAP lines (see browser.mjs).
import { drive, check } from './browser.mjs';

const [origin, id, commit] = process.argv.slice(2);

await drive(origin, async ({ page }) => {
  const row = page.locator(`#alerts tbody tr[data-id="${id}"]`);
  await page.goto(`${origin}/#/alerts`);
  await row.waitFor({ timeout: 20000 });
  const cell = (label) => row.locator(`td[data-label="${label}"]`).innerText();
  check((await cell('Change')).trim() === 'crash', 'the Change cell names the fault', await cell('Change'));
  check((await cell('Before → after')).trim() === 'clean → crash', 'before and after: clean, then the fault', await cell('Before → after'));
  check((await cell('Commit')).includes(commit.slice(0, 12)), 'the bisected commit is shown', await cell('Commit'));
  const below = await page.locator(`#alerts tbody tr[data-alert="${id}"]`).innerText();
  check(/no figure moved/.test(below) && (await page.locator(`#alerts tbody tr[data-alert="${id}"] canvas`).count()) === 0,
    'in place of a history chart, the page says no figure moved', below);
});
