// refuse.mjs ORIGIN - refused submissions show the server's reason verbatim,
// API errors on other pages are shown too, the pages are keyboard reachable,
// and no request leaves the origin (with a self-check that the recorder
// would see one that did).  Output: TAP lines (see browser.mjs).
import { join } from 'node:path';
import { launch, check, done, outDir } from './browser.mjs';

const [origin] = process.argv.slice(2);
const out = outDir();
const b = await launch(origin);
const { page } = b;

/* What the server answers to body, asked directly. */
async function serverSays(body) {
  const r = await fetch(`${origin}/api/v1/submissions`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: r.status, ...(await r.json()) };
}

async function submitForm(fill) {
  await page.goto(`${origin}/#/submit`);
  await page.locator('#submit-form').waitFor();
  await fill();
  await page.locator('#f-submit').click();
  const refused = page.locator('#submit-refused');
  await refused.or(page.locator('#submit-ok')).waitFor();
  return refused;
}

try {
  // 1. a file:// URL
  let want = await serverSays({ url: 'file:///etc/passwd', suites: ['quick'] });
  check(want.status === 400 && want.detail.length > 0, 'the server refuses a file:// URL', JSON.stringify(want));
  let refused = await submitForm(async () => {
    await page.getByLabel('Patch URL', { exact: true }).check();
    await page.locator('#f-url').fill('file:///etc/passwd');
  });
  check(await refused.count() === 1, 'the form shows a refusal for the file:// URL');
  let detail = await refused.locator('.error-detail').textContent().catch(() => '');
  check(detail === want.detail, 'with the server\'s reason verbatim', `page: ${detail}`, `server: ${want.detail}`);
  let code = await refused.locator('.error-code').textContent().catch(() => '');
  check(code === `HTTP ${want.status} ${want.error}`, 'and its status and code', code);
  check(await refused.locator('[role=alert]').count() === 1, 'as an alert for screen readers');
  await page.screenshot({ path: join(out, 'web-refused-url.png'), fullPage: true });

  // 2. an mbox without a patch
  const mbox = 'From dev Mon Sep 17 00:00:00 2001\nFrom: Dev <dev@example.org>\nSubject: [PATCH] locking: words only\nMessage-ID: <words@example.org>\n\nThere is no diff in this mail.\n';
  want = await serverSays({ mbox, suites: ['smoke'] });
  check(want.status === 422, 'the server refuses an mbox without a patch (422)', JSON.stringify(want));
  refused = await submitForm(async () => {
    await page.getByLabel('Pasted mbox').check();
    await page.locator('#f-mbox').fill(mbox);
    await page.locator('input[name=suite][value=quick]').uncheck();
    await page.locator('input[name=suite][value=smoke]').check();
  });
  detail = await refused.locator('.error-detail').textContent().catch(() => '');
  check(detail === want.detail, 'the page shows why the mbox was refused, verbatim', `page: ${detail}`, `server: ${want.detail}`);
  await page.screenshot({ path: join(out, 'web-refused-mbox.png'), fullPage: true });

  // 3. a git ref that looks like an option
  want = await serverSays({ git: { url: 'https://git.example.org/linux.git', ref: '--upload-pack=x' }, suites: ['quick'] });
  refused = await submitForm(async () => {
    await page.getByLabel('Git URL + ref').check();
    await page.locator('#f-git-url').fill('https://git.example.org/linux.git');
    await page.locator('#f-git-ref').fill('--upload-pack=x');
  });
  detail = await refused.locator('.error-detail').textContent().catch(() => '');
  check(want.status === 400 && detail === want.detail, 'a bad git ref is refused with the server\'s reason', `page: ${detail}`, `server: ${want.detail}`);

  const list = await (await fetch(`${origin}/api/v1/submissions`)).json();
  check(list.submissions.length === 0, 'nothing refused was stored', JSON.stringify(list));

  // API errors on the other pages
  await page.goto(`${origin}/#/submissions/424242`);
  const err = page.locator('.error[role=alert]');
  await err.waitFor();
  const errText = await err.innerText();
  check(/HTTP 404/.test(errText) && /no such submission/.test(errText), 'a missing submission says the server\'s 404 and reason', errText);
  await page.goto(`${origin}/#/submissions`);
  await page.locator('#submissions td.empty').waitFor();
  check(true, 'an empty list says there is nothing yet');
  await page.goto(`${origin}/#/history`);
  await page.locator('#history-out .empty').waitFor();
  check(true, 'an empty history says so');
  await page.goto(`${origin}/#/machines`);
  await page.locator('#agents tbody tr').first().waitFor();
  check(/No agent/.test(await page.locator('#agents tbody').innerText()), 'Machines without agents says how to add one');
  await page.goto(`${origin}/#/nowhere`);
  check(/No such page/.test(await page.locator('main').innerText()), 'an unknown page says so');

  // keyboard: the skip link first, then the pages, each with a visible focus
  await page.goto(`${origin}/?fresh=1#/submissions`); // a new document: focus starts at the top
  await page.locator('#submissions').waitFor();
  await page.keyboard.press('Tab');
  check(await page.evaluate(() => document.activeElement.className) === 'skip', 'Tab first reaches the skip link');
  const seen = [];
  for (let i = 0; i < 6; i++) {
    await page.keyboard.press('Tab');
    seen.push(await page.evaluate(() => [document.activeElement.textContent.trim(), getComputedStyle(document.activeElement).outlineStyle]));
  }
  const names = seen.map(([t]) => t);
  check(['Submit', 'Submissions', 'Machines', 'History'].every((n) => names.includes(n)), 'every page is reachable with Tab', names.join(', '));
  check(seen.every(([, o]) => o !== 'none'), 'focused links show an outline', JSON.stringify(seen));
  await page.keyboard.press('Enter'); // on whatever link has focus: it navigates by keyboard
  await page.goto(`${origin}/#/machines`);
  await page.locator('#agents').waitFor();

  check(b.requests.length > 10, 'the recorder saw the page\'s requests', `${b.requests.length}`);
  check(b.offOrigin().length === 0, 'no request left the origin', b.offOrigin().join('\n'));
  // self-check: an off-origin request is seen (and aborted), so the check above can fail
  await page.evaluate(() => { const i = new Image(); i.src = 'http://127.0.0.2:9/pixel.png'; document.body.append(i); });
  await page.waitForEvent('requestfailed');
  check(b.offOrigin().length === 1, 'the recorder does see an off-origin request (self-check)', b.offOrigin().join('\n'));
  const unexpected = b.consoleErrors.filter((e) => !/status of (400|404|422)|127\.0\.0\.2|ERR_FAILED/.test(e));
  check(unexpected.length === 0, 'no script error in the console (besides the refused requests)', unexpected.join('\n'));
} catch (e) {
  check(false, 'the browser session ran to the end', e.stack || e);
  await page.screenshot({ path: join(out, 'web-refuse-failure.png'), fullPage: true }).catch(() => {});
} finally {
  await b.close();
  done();
}
