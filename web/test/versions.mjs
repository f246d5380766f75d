// versions.mjs ORIGIN ID TOTAL - the submission page of a series with more
// versions than its page embeds (tests/42-mail-trailers.t): it shows the
// newest 20 of TOTAL and says so, and its button loads the older ones from
// GET /api/v1/submissions/{id}/versions until every version is a column.
// Output: TAP lines (see browser.mjs).
import { join } from 'node:path';
import { drive, check, outDir } from './browser.mjs';

const [origin, id, total] = process.argv.slice(2);
const n = Number(total);

await drive(origin, async ({ page, requests }) => {
  await page.goto(`${origin}/#/submissions/${id}`);
  const table = page.locator('#versions table.versions');
  await table.waitFor();
  const heads = () => table.locator('thead th[data-version]').evaluateAll((ths) => ths.map((th) => Number(th.dataset.version)));
  let vs = await heads();
  check(vs.length === 20 && vs[0] === n - 19 && vs[19] === n, `the page shows the newest 20 of the ${n} versions, oldest of them on the left`, vs.join(','));
  const count = await page.locator('#versions-count').innerText();
  check(count === `20 of ${n} versions shown, the newest.`, 'and says how many there are', count);
  const button = page.locator('#versions-load');
  check((await button.innerText()) === `Load ${Math.min(20, n - 20)} older`, 'a button loads the older ones', await button.innerText());
  await button.click();
  await page.waitForFunction((want) => document.querySelectorAll('#versions table.versions thead th[data-version]').length === want, Math.min(n, 40));
  vs = await heads();
  check(vs.length === Math.min(n, 40) && vs[vs.length - 1] === n && vs.every((v, i) => i === 0 || v > vs[i - 1]),
    'after it the older versions are columns too, in order', vs.join(','));
  check(requests.some((u) => u.includes(`/api/v1/submissions/${id}/versions?limit=20&before=`)), 'loaded from the paged endpoint');
  if (n <= 40) {
    check(await page.locator('#versions-load').count() === 0, 'with every version shown the button is gone');
    check(vs[0] === 1, 'and v1 is the leftmost column', vs.join(','));
  }
  await page.screenshot({ path: join(outDir(), 'web-versions-paged.png'), fullPage: true });
});
