// e2e.mjs ORIGIN MBOX - submit a series through the dashboard's form against
// a running server + agent + PostgreSQL, follow it to its verdict without
// reloading, read the table, the charts, every report format and the reply
// (reached by keyboard), visit Machines and History, take screenshots, and
// check that no request left the origin.  Output: TAP lines (see browser.mjs).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, check, done, inkedPixels, outDir } from './browser.mjs';

const [origin, mboxFile] = process.argv.slice(2);
const mbox = readFileSync(mboxFile, 'utf8');
const out = outDir();
const WAIT_VERDICT_MS = 15 * 60 * 1000; // a deadline for a hung run, not a timed assertion
const b = await launch(origin);
const { page } = b;
const shot = (name, p = page) => p.screenshot({ path: join(out, name), fullPage: true });

try {
  // --- Submit ---------------------------------------------------------------
  await page.goto(`${origin}/#/submit`);
  await page.getByLabel('Pasted mbox').check();
  await page.locator('#f-mbox').fill(mbox);
  await page.locator('input[name=suite][value=quick]').uncheck();
  await page.locator('input[name=suite][value=smoke]').check();
  await page.locator('#f-submit').click();
  const okBox = page.locator('#submit-ok');
  const refused = page.locator('#submit-refused');
  await okBox.or(refused).waitFor();
  const okText = (await okBox.count()) ? await okBox.innerText() : '';
  check(/Submission #\d+ queued/.test(okText), 'the form answers with the new submission',
    okText || await refused.innerText());
  check(/2 patches/.test(okText), 'it says the series has two patches', okText);
  const id = Number((okText.match(/#(\d+)/) || [])[1]);
  await shot('web-submit.png');

  // a second tab follows the list while the job runs (no reload anywhere)
  const list = await b.context.newPage();
  await list.goto(`${origin}/#/submissions`);
  const listRow = list.locator(`#submissions tr[data-id="${id}"]`);
  await listRow.waitFor();
  const firstState = await listRow.getAttribute('data-state');
  check(['queued', 'running'].includes(firstState), `the list shows #${id} queued or running first`, firstState);

  // --- the submission page follows the job to its verdict -----------------
  await page.locator('#submit-link').click();
  await page.waitForURL(`**/#/submissions/${id}`);
  await page.locator('#sub-verdict').waitFor();
  const running = page.locator('#sub-verdict[data-state=running]');
  const finished = page.locator('#sub-verdict[data-state=done], #sub-verdict[data-state=failed]');
  await running.or(finished).waitFor({ timeout: WAIT_VERDICT_MS });
  if (await running.count()) {
    const prog = page.locator('#jobs progress');
    check(await prog.count() > 0, 'a running job shows its rounds as progress');
    await list.locator(`#submissions tr[data-id="${id}"][data-state=running]`).waitFor({ timeout: WAIT_VERDICT_MS }).catch(() => {});
    if (await list.locator(`#submissions tr[data-id="${id}"][data-state=running] progress`).count()) {
      await shot('web-list-running.png', list);
    }
  }
  await finished.waitFor({ timeout: WAIT_VERDICT_MS });
  const state = await page.locator('#sub-verdict').getAttribute('data-state');
  const verdict = await page.locator('#sub-verdict').getAttribute('data-verdict');
  check(state === 'done', 'the page reaches the verdict without a reload', `state ${state}`);
  check(['no-change', 'inconclusive', 'improvement'].includes(verdict),
    'a comment-only series is no regression and no lockup', `verdict ${verdict}`);
  const api = await (await fetch(`${origin}/api/v1/submissions/${id}`)).json();
  check(api.verdict === verdict, 'the page shows the verdict the API has', `${api.verdict} vs ${verdict}`);

  // the verdict table: a row per API verdict row, numbers right-aligned
  const rows = page.locator('table.verdicts tbody tr');
  await rows.first().waitFor();
  check(await rows.count() === api.verdicts.length, 'the verdict table has a row per verdict row',
    `${await rows.count()} rows, API ${api.verdicts.length}`);
  const align = await page.locator('table.verdicts tbody td.num').first().evaluate((e) => getComputedStyle(e).textAlign);
  check(align === 'right', 'numbers are right-aligned', align);
  const heads = await page.locator('table.verdicts thead th').allInnerTexts();
  check(heads.some((h) => /^patch-1\b/.test(h)), 'a two-patch series gets a patch-1 column', heads.join(' | '));
  const kmutexRow = await page.locator('table.verdicts tbody tr', { hasText: 'kmutex' }).count();
  check(kmutexRow > 0, 'kmutex, the lock the series touches, is in the table');

  // charts: a figure per workload+lock+metric, drawn (non-blank canvas)
  const groups = new Set(api.verdicts.filter((v) => v.metric !== 'lockup' && v.users >= 0)
    .map((v) => `${v.workload}|${v.lock}|${v.metric}|${v.params.split(',').filter((p) => !/^(threads|users)=/.test(p)).join(',')}`));
  // many charts wait under their summary (the page stays about two screens tall)
  for (const d of await page.locator('#comparisons details.charts-box:not([open]) > summary').all()) await d.click();
  const canvases = page.locator('figure.chart canvas');
  await canvases.first().waitFor();
  check(await page.locator('figure.chart').count() === groups.size, 'one chart per workload, lock and metric',
    `${await page.locator('figure.chart').count()} charts, ${groups.size} groups`);
  const ink = await inkedPixels(canvases.first());
  check(ink > 2000, 'the first chart is drawn (non-blank canvas)', `${ink} inked pixels`);
  const legend = await page.locator('figure.chart').first().locator('.u-legend').innerText();
  check(/base/.test(legend) && /patched/.test(legend) && /patch-1/.test(legend),
    'charts have base, patch-1 and patched series', legend);
  await shot('web-submission.png');
  await page.locator('#comparisons .charts').first().evaluate((e) => e.scrollIntoView());
  await page.evaluate(() => window.scrollBy(0, -120));
  await page.screenshot({ path: join(out, 'web-dashboard.png') });

  // every report format, shown as the API renders it
  for (const f of ['text', 'aim7', 'perf', 'lkp']) {
    await page.locator(`#tab-${f}`).click();
    await page.locator(`#report[data-loaded="${f}"]`).waitFor();
    const want = await (await fetch(`${origin}/api/v1/submissions/${id}/report?format=${f}`)).text();
    const got = await page.locator('#report').textContent();
    check(got === want && want.length > 0, `the ${f} report is shown verbatim`, `got ${got.length} chars, want ${want.length}`);
  }

  // the reply mail, reached with the keyboard alone
  await page.locator('#main').focus();
  let reached = false;
  for (let i = 0; i < 400 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement && document.activeElement.id === 'show-reply');
  }
  check(reached, 'the reply button is reachable with Tab');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  check(outline !== 'none', 'the focused button shows a focus outline', outline);
  await page.keyboard.press('Enter');
  await page.locator('#reply:not([hidden])').waitFor();
  const reply = await page.locator('#reply').textContent();
  const wantReply = await (await fetch(`${origin}/api/v1/submissions/${id}/reply`)).text();
  check(reply === wantReply, 'the reply mail is shown as it will be sent', reply.slice(0, 400));
  check(/^In-Reply-To: </m.test(reply) && /^Subject: Re: /m.test(reply), 'it threads to the series', reply.slice(0, 600));
  const mails = (await (await fetch(`${origin}/api/v1/outbox?submission=${id}`)).json()).mails;
  const mailStates = await page.locator('#mails tbody tr').evaluateAll((rows) => rows.map((r) => r.dataset.state));
  check(mails.length === 1 && mailStates.join() === mails.map((m) => m.state).join(),
    'the reply\'s delivery state is shown beside it', `${mailStates} vs ${mails.map((m) => m.state)}`);
  await page.locator('#reply').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(out, 'web-reply.png') });

  // raw JSON links
  const rawHref = await page.getByRole('link', { name: 'result documents JSON (lockbench-result/1)' }).getAttribute('href');
  const raw = await (await fetch(`${origin}${rawHref}`)).json();
  check(raw.results.length >= 6 && raw.results.every((r) => r.document.schema === 'lockbench-result/1'),
    'the raw JSON link gives the stored result documents', `${raw.results.length} documents`);

  // the list followed the job without a reload
  await list.locator(`#submissions tr[data-id="${id}"][data-state=done]`).waitFor();
  const badge = await list.locator(`#submissions tr[data-id="${id}"] .badge[class*="v-"]`).innerText();
  check(badge.length > 0, 'the list, never reloaded, shows the submission done with its verdict badge', badge);
  await list.selectOption('#filter-verdict', 'regression');
  const shown = await list.locator(`#submissions tr[data-id="${id}"]`).count();
  check(shown === 0, 'the verdict filter hides it under "regression"');
  await list.selectOption('#filter-verdict', api.verdict);
  check(await list.locator(`#submissions tr[data-id="${id}"]`).count() === 1, `and shows it under "${api.verdict}"`);
  await list.selectOption('#filter-verdict', '');
  await shot('web-list.png', list);
  await list.close();

  // Machines and History
  await page.goto(`${origin}/#/machines`);
  const agentRow = page.locator('#agents tbody tr', { hasText: 'lab1' });
  await agentRow.waitFor();
  const agentText = await agentRow.innerText();
  check(/cpus/.test(agentText) && /ago|just now/.test(agentText), 'Machines lists the agent with its hardware and last heartbeat', agentText);
  await shot('web-machines.png');
  await page.goto(`${origin}/#/history`);
  // one submission is one point: said in words, no axis drawn around a dot
  await page.locator('#history-out figure.chart .one-point').waitFor();
  const hText = await page.locator('#history-out figure.chart .one-point').innerText();
  check(/: 1 point, at time /.test(hText) && /base /.test(hText) && await page.locator('#history-out figure.chart canvas').count() === 0,
    'History says a metric of one point is "1 point", with its figures, and draws no axis', hText);
  check(await page.locator('#history-out table tbody tr', { hasText: `#${id}` }).count() > 0, 'and lists this submission as a point');
  await shot('web-history.png');

  // a phone
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${origin}/#/submissions/${id}`);
  await page.locator('#comparisons details.charts-box').first().waitFor();
  for (const d of await page.locator('#comparisons details.charts-box:not([open]) > summary').all()) await d.click();
  await page.locator('figure.chart canvas').first().waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, 'at 390 px the page does not scroll sideways (tables scroll in their box)', `${overflow} px too wide`);
  await page.screenshot({ path: join(out, 'web-phone-submission.png') });
  await page.goto(`${origin}/#/submissions`);
  await page.locator(`#submissions tr[data-id="${id}"]`).waitFor();
  await page.screenshot({ path: join(out, 'web-phone-list.png') });

  check(b.requests.length > 10, 'the recorder saw the page\'s requests', `${b.requests.length}`);
  check(b.offOrigin().length === 0, 'no request left the origin', b.offOrigin().join('\n'));
  check(b.consoleErrors.length === 0, 'no script error in the console', b.consoleErrors.join('\n'));
} catch (e) {
  check(false, 'the browser session ran to the end', e.stack || e);
  await shot('web-failure.png').catch(() => {});
} finally {
  await b.close();
  done();
}
