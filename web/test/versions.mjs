// versions.mjs ORIGIN ID TOTAL SQL - the submission page of an old version
// (ID, v2, still queued so the page follows it) of a series with more
// versions than its page embeds (tests/420-mail-trailers.t): it shows the
// newest 20 of TOTAL and its own version in its place, says so, and its
// button loads the older ones from GET /api/v1/submissions/{id}/versions
// until every version is a column.  An error of that load shows even when a
// refresh redrew the section meanwhile.  Versions added while the page is
// open (SQL, run by psql with the test's PG* environment and the psql
// variables :from and :to) move the embedded window: no version goes
// missing between it and the loaded ones.
// Output: TAP lines (see browser.mjs).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { drive, check, outDir } from './browser.mjs';

const [origin, id, total, addSql] = process.argv.slice(2);
let n = Number(total);
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

/* versions n+1..to join the series (the page sees them at its next refresh) */
function addVersions(to) {
  execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', `from=${n + 1}`, '-v', `to=${to}`],
    { input: addSql, stdio: ['pipe', 'ignore', 'inherit'] });
  n = to;
}

await drive(origin, async ({ page, requests, consoleErrors }) => {
  await page.goto(`${origin}/#/submissions/${id}`);
  const table = page.locator('#versions table.versions');
  await table.waitFor();
  const heads = () => table.locator('thead th[data-version]').evaluateAll((ths) => ths.map((th) => Number(th.dataset.version)));
  // wait (at most 20 s, some page refreshes) until the columns are want
  const columns = async (want) => {
    await page.waitForFunction((w) => [...document.querySelectorAll('#versions table.versions thead th[data-version]')]
      .map((th) => th.dataset.version).join() === w.join(), want, { timeout: 20000 }).catch(() => {});
    return heads();
  };
  const buttonCount = () => page.locator('#versions-load').count();

  // the page of v2: the newest 20 and v2 in its place, leftmost
  let vs = await heads();
  check(same(vs, [2, ...range(n - 19, n)]), `the page of v2 shows the newest 20 of the ${n} versions and v2 itself, oldest on the left`, vs.join(','));
  const current = await table.locator('thead th.current').evaluateAll((ths) => ths.map((th) => `${th.dataset.version} ${th.textContent}`));
  check(current.length === 1 && current[0] === `2 v2 (#${id}, this page)`, 'v2 is the column of this page', current.join('\n'));
  const count = await page.locator('#versions-count').innerText();
  check(count === `21 of ${n} versions shown: the newest 20 and this one (v2).`, 'and says how many there are', count);
  const button = page.locator('#versions-load');
  check((await button.innerText()) === `Load ${n - 21} older`, 'a button loads the older ones', await button.innerText());

  // a load whose answer comes after a refresh redrew the section, and fails
  const versionsUrl = (u) => u.pathname === `/api/v1/submissions/${id}/versions`;
  await page.route(versionsUrl, async (route) => {
    await page.evaluate(() => { document.querySelector('#versions-load').dataset.stale = '1'; });
    await page.waitForFunction(() => {
      const b = document.querySelector('#versions-load');
      return b && !b.dataset.stale;
    }, null, { timeout: 20000 }).catch(() => {});
    await route.fulfill({ status: 500, contentType: 'application/json', body: '{"error": "test", "detail": "made by the test"}' });
  });
  await button.click();
  const err = page.locator('#versions-error');
  await page.waitForFunction(() => /could not be loaded/.test(document.querySelector('#versions-error')?.textContent || ''), null, { timeout: 25000 }).catch(() => {});
  check(await err.count() === 1 && /^The older versions could not be loaded: HTTP 500 test — made by the test$/.test(await err.innerText()),
    'a failed load says so on the page, though a refresh redrew the versions meanwhile', await err.count() ? await err.innerText() : '(no #versions-error)');
  check(await buttonCount() === 1 && !(await button.isDisabled()), 'and the button can be pressed again');
  await page.unroute(versionsUrl);
  const expected = consoleErrors.findIndex((m) => /status of 500/.test(m));
  if (expected >= 0) consoleErrors.splice(expected, 1);

  await button.click();
  vs = await columns(range(1, n));
  check(same(vs, range(1, n)), 'after it every version is a column, once, in order', vs.join(','));
  check(requests.some((u) => u.includes(`/api/v1/submissions/${id}/versions?limit=20&before=`)), 'loaded from the paged endpoint');
  check(await buttonCount() === 0, 'with every version shown the button is gone');
  const errText = await err.count() ? await err.innerText() : '';
  check(!errText, 'and the error with it', errText);

  // a new version arrives: the embedded window moves past the oldest one it held
  const fills = () => requests.filter((u) => /\/versions\?limit=1&before=/.test(u)).length;
  addVersions(n + 1);
  vs = await columns(range(1, n));
  check(same(vs, range(1, n)), `v${n} arrives and every version stays a column, the one that left the embedded window too`, vs.join(','));
  check(fills() === 1, 'that one was fetched once', requests.filter((u) => u.includes('/versions?')).join('\n'));
  check(await buttonCount() === 0, 'no button: nothing older is left');

  // the same while only some older ones are loaded (the review's case)
  addVersions(n + 20);
  await page.reload();
  await table.waitFor();
  vs = await columns([2, ...range(n - 19, n)]);
  check(same(vs, [2, ...range(n - 19, n)]), `with ${n} versions the page shows the newest 20 and v2`, vs.join(','));
  await button.click();
  vs = await columns([2, ...range(n - 39, n)]);
  check(same(vs, [2, ...range(n - 39, n)]), 'a load adds the next 20 older ones', vs.join(','));
  addVersions(n + 1);
  vs = await columns([2, ...range(n - 40, n)]);
  check(same(vs, [2, ...range(n - 40, n)]), `v${n} arrives: the one that left the embedded window is still a column`, vs.join(','));
  check(fills() === 2, 'fetched once', requests.filter((u) => u.includes('/versions?')).join('\n'));
  check((await button.innerText()) === `Load ${n - 42} older`, 'the button loads the rest', await button.innerText());
  await button.click();
  vs = await columns(range(1, n));
  check(same(vs, range(1, n)), 'and then every version is a column, once, in order', vs.join(','));
  check(await buttonCount() === 0, 'and the button is gone');
  await page.screenshot({ path: join(outDir(), 'web-versions-paged.png'), fullPage: true });
});
