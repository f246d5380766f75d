// setaside.mjs ORIGIN STRAY RESEND - the submission pages of two series that
// held patch mails they do not test (tests/430-mail-styles.t): STRAY had a
// part 3/2 past its numbering, RESEND had part 1/2 sent twice.  The Patches
// section lists the tested patches and, apart under "Not tested", each mail
// set aside with why, its diff behind a click.
// Output: TAP lines (see browser.mjs).
import { drive, check } from './browser.mjs';

const [origin, stray, resend] = process.argv.slice(2);

await drive(origin, async ({ page }) => {
  const open = async (id) => {
    await page.goto(`${origin}/#/submissions/${id}`);
    const box = page.locator('#patches #set-aside');
    await box.waitFor({ timeout: 20000 });
    return box;
  };

  let box = await open(stray);
  let text = await box.innerText();
  check(/Not tested: 1 mail set aside/.test(text), 'the page of the series with a stray part says one mail was set aside', text);
  check(/\[PATCH 3\/2\][^\n]*part 3\/2 is past the series' numbering/.test(text), 'it names the part and why', text);
  check(await page.locator('#patches ol.patches > li').count() === 3, 'the tested mails are listed apart: cover, 1/2 and 2/2');
  await box.locator('summary').first().click();
  check(await box.locator('pre.diff').first().isVisible(), 'the diff of the part set aside opens with a click');

  box = await open(resend);
  text = await box.innerText();
  check(/an earlier copy of part 1\/2: the later copy above is tested/.test(text),
    'the page of the resent series shows the earlier copy of part 1/2 beside the tested one', text);
});
