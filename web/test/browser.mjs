// browser.mjs - Debian's chromium driven by playwright-core for the
// dashboard tests: a fresh profile per run, no network but the server's
// origin (off-origin requests are recorded and aborted), TAP-ish output
// that tests/60*-web-*.t turns into ok/not ok lines.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/* Launch chromium on a fresh --user-data-dir; returns {context, page, requests, offOrigin, consoleErrors, close}. */
export async function launch(origin, { width = 1280, height = 900 } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'locklab-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ARGS,
    headless: true,
    viewport: { width, height },
  });
  const requests = [];
  const consoleErrors = [];
  const watch = (page) => {
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  };
  // nothing may leave the origin: abort whatever tries (it is still recorded)
  await context.route((url) => !url.href.startsWith(`${origin}/`), (route) => route.abort());
  context.on('page', watch);
  const page = context.pages()[0] || await context.newPage();
  watch(page);
  return {
    context, page, requests, consoleErrors,
    offOrigin: () => requests.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:')),
    close: async () => { await context.close(); rmSync(profile, { recursive: true, force: true }); },
  };
}

let n = 0;
let failed = 0;
/* One result line: "ok - name" or "not ok - name" + "# diag" lines. */
export function check(cond, name, ...diag) {
  n++;
  if (cond) console.log(`ok ${n} - ${name}`);
  else {
    failed++;
    console.log(`not ok ${n} - ${name}`);
    for (const d of diag) for (const line of String(d).split('\n')) console.log(`# ${line}`);
  }
  return cond;
}
export function done() {
  console.log(`1..${n}`);
  process.exitCode = failed ? 1 : 0;
}

/* Count the canvas pixels that are not blank (transparent or white). */
export async function inkedPixels(locator) {
  return locator.evaluate((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let ink = 0;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0 && !(d[i] > 245 && d[i + 1] > 245 && d[i + 2] > 245)) ink++;
    }
    return ink;
  });
}

/*
 * Launch chromium on origin, run body(b) (b as launch returns it), then
 * check that nothing left the origin and the console has no error; an
 * exception in body is one failed check.  Closes the browser and prints
 * the plan.
 */
export async function drive(origin, body, opts) {
  const b = await launch(origin, opts);
  try {
    await body(b);
    check(b.offOrigin().length === 0, 'no request left the origin', b.offOrigin().join('\n'));
    check(b.consoleErrors.length === 0, 'no error in the console', b.consoleErrors.join('\n'));
  } catch (err) {
    check(false, 'the page could be driven', err.stack || err);
  } finally {
    await b.close();
    done();
  }
}

export function outDir() {
  const dir = process.env.TEST_OUTPUT || 'test-output';
  mkdirSync(dir, { recursive: true });
  return dir;
}
