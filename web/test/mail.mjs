// mail.mjs ORIGIN V1 V2 - the submission page of a series that came by mail
// (tests/420-mail-trailers.t): v2's page shows both versions side by side,
// v1's the trailers the list gave; a trailer holding markup is text.
// Output: TAP lines (see browser.mjs).
import { join } from 'node:path';
import { drive, check, outDir } from './browser.mjs';

const [origin, v1, v2] = process.argv.slice(2);

await drive(origin, async ({ page }) => {
  await page.goto(`${origin}/#/submissions/${v2}`);
  const table = page.locator('#versions table.versions');
  await table.waitFor();
  const heads = await table.locator('thead th[data-version]').allInnerTexts();
  check(heads.length === 2 && /^v1 \(#\d+\)$/.test(heads[0]) && /^v2 \(#\d+, this page\)$/.test(heads[1]),
    'the page of v2 shows v1 and v2 side by side, oldest first', heads.join(' | '));
  const link = table.locator(`thead a[href="#/submissions/${v1}"]`);
  check(await link.count() === 1, 'the v1 column links to its submission');
  const rows = await table.locator('tbody tr[data-seq]').evaluateAll((trs) => trs.map((tr) => tr.dataset.seq));
  check(rows.join(',') === '0,1,2', 'a row for the cover letter and each patch', rows.join(','));
  const p2 = await table.locator('tbody tr[data-seq="2"] td').allInnerTexts();
  const t2 = await table.locator('tbody tr[data-seq="2"] td .title').allInnerTexts();
  check(t2.join(' | ') === 'locking: add pickup | locking: add pickup, checked' && !/new or retitled/.test(p2[0])
    && /new or retitled/.test(p2[1]), 'patch 2 of each version, the retitled one marked', p2.join(' | '));
  check(/· 1 trailer$/.test(p2[0]) && /· 1 trailer$/.test(p2[1]), 'with the trailers each version got', p2.join(' | '));
  const p1 = await table.locator('tbody tr[data-seq="1"] td').allInnerTexts();
  check(p1.length === 2 && /^locking: add handoff/.test(p1[1]) && !/new or retitled/.test(p1[1]),
    'an unchanged patch is not marked', p1.join(' | '));
  await page.screenshot({ path: join(outDir(), 'web-versions.png'), fullPage: true });

  await link.click();
  await page.waitForURL(`**/#/submissions/${v1}`);
  const trailers = page.locator('#trailers table');
  await trailers.waitFor();
  const lines = await trailers.locator('tbody tr td:nth-child(2)').allInnerTexts();
  check(lines.length === 4, 'the page of v1 lists the four trailers given on the list', lines.join(' | '));
  check(lines.includes('Reviewed-by: Rëv One <rev1@example.org>') && lines.includes('Acked-by: Maint Ainer <maint@example.org>'),
    'each as the reviewer wrote it', lines.join(' | '));
  const whole = await trailers.locator('tbody tr[data-seq="0"] td:first-child').allInnerTexts();
  check(whole.length === 2 && whole.every((t) => /^the whole series \(\[PATCH 0\/2\] locking: handoff and pickup\)$/.test(t)),
    'an Acked-by in reply to the cover letter is for the whole series', whole.join(' | '));
  check(await page.locator('#trailers img').count() === 0 && lines.some((l) => l.includes('<img src=x onerror=alert(1)>')),
    'a trailer holding markup is shown as text, no element made');
  check((await page.locator('#versions table.versions thead th[data-version]').count()) === 2,
    'the page of v1 shows the versions too');
  await page.screenshot({ path: join(outDir(), 'web-trailers.png'), fullPage: true });
});
