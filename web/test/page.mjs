// page.mjs: what the previewer's browser tests share (browser_test.mjs,
// debugger_test.mjs), as tests/interop/lib/previewer.py shares their Python
// side: puppeteer-core from NPM_MODULES, Debian's Chromium started headless
// with a page of the tests' size, the page's errors collected, a waitFor
// that bounds every wait and, when one runs out, says what the page was
// doing (its errors, its last requests) and keeps a screenshot, and the
// checks' count. Waits are bounds on waiting, never pass/fail timings.
import { createRequire } from 'node:module';
import path from 'node:path';

export const WAIT_MS = 30000; // bound on any wait for the page

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let failures = 0;
// One check: printed "ok:" or "FAILED:", counted.
export function ok(condition, what) {
  if (condition) console.log(`  ok: ${what}`);
  else { console.log(`  FAILED: ${what}`); failures++; }
}

// The page's last requests (protocol.js keeps them): what it asked, and whether it had its answer.
async function recentRequests(page) {
  return page.evaluate(async () => {
    const { conn } = await import(new URL('js/session.js', location.href).href);
    const now = performance.now();
    return conn ? conn.recent.map((r) => `${r.kind} ${((r.sent - now) / 1000).toFixed(1)} s ` +
      (r.error ? `failed: ${r.error}` : r.answered === null ? 'unanswered' : `answered in ${r.answered - r.sent} ms`))
      : ['no connection'];
  }).catch((err) => [err.message]);
}

// Starts Chromium (CHROMIUM, else /usr/bin/chromium) and a 1600x900 page.
// shots: the screenshot directory; failedShot: the file a wait that runs
// out saves. Returns { browser, page, pageErrors, waitFor }; the caller
// closes the browser (in a finally: a test that throws still closes it,
// and fails by the exception) and then calls report.
export async function startPage(shots, failedShot) {
  const require = createRequire(path.join(path.resolve(process.env.NPM_MODULES), 'noop.js'));
  const puppeteer = require('puppeteer-core');
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic', '--enable-unsafe-swiftshader', '--use-angle=swiftshader',
      '--window-size=1600,900'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1600, height: 900 });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const waitFor = async (fn, ...args) => {
    try {
      await page.waitForFunction(fn, { timeout: WAIT_MS, polling: 50 }, ...args);
    } catch (e) {
      const errors = await page.evaluate(() => window.previewer && window.previewer.state.errors).catch(() => []);
      console.log(`  the page's last requests:\n    ${(await recentRequests(page)).join('\n    ')}`);
      await page.screenshot({ path: path.join(shots, failedShot) }).catch(() => {}); // what it looked like
      throw new Error(`waiting for ${fn.toString().slice(0, 160)}: ${e.message}; page errors: ` +
        `${pageErrors.join('; ') || 'none'}; request errors: ${(errors || []).join('; ') || 'none'}`);
    }
  };
  return { browser, page, pageErrors, waitFor };
}

// Prints "NAME: passed" or "NAME: N failed" and exits with the checks' status.
export function report(name) {
  console.log(failures ? `${name}: ${failures} failed` : `${name}: passed`);
  process.exit(failures ? 1 : 0);
}
