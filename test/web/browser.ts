/**
 * Browser tests of the dashboard: Debian's Chromium driven by playwright-core (chromium.ts). One
 * browser per test file, a fresh context (cookies, storage, permissions) per test. Everything the
 * page reports that a user would call broken fails the test: console errors, uncaught exceptions, Content-Security-Policy violations, failed
 * requests and HTTP errors the test did not announce. Helpers for axe-core and screenshots.
 *
 * The test code runs in Node (no DOM types): code for the page is passed as strings.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchBrowser } from './chromium.ts';
import { DATABASE_NAME, type DashboardServer, startDashboardServer } from './dashboard-server.ts';

export const LAPTOP = { width: 1366, height: 768 };
export const PHONE = { width: 390, height: 844 };

/** Screenshots of both database runs side by side, so neither overwrites the other's. */
export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../.screenshots', DATABASE_NAME);

/**
 * The server and the browser of a test file, started side by side (both take a while). If either
 * fails, the other is closed again before the error is thrown: the caller gets nothing to close.
 */
export async function startServerAndBrowser(
  env: Record<string, string> = {},
): Promise<{ server: DashboardServer; browser: Browser }> {
  const [server, browser] = await Promise.allSettled([startDashboardServer(env), launchBrowser()]);
  if (server.status === 'fulfilled' && browser.status === 'fulfilled') {
    return { server: server.value, browser: browser.value };
  }
  if (server.status === 'fulfilled') await server.value.stop();
  if (browser.status === 'fulfilled') await browser.value.close();
  throw server.status === 'rejected' ? server.reason : (browser as PromiseRejectedResult).reason;
}

export interface PageWatch {
  /** An answer with this status to a request whose path matches is part of the test, not a problem. */
  allowHttpError(status: number, pathPattern: string | RegExp): void;
  /** What went wrong in the page so far. */
  problems(): string[];
}

/**
 * Reports every CSP violation to the test. Chromium also logs most of them to the console, but the
 * event is the one place that names the directive for every kind (images, styles, inline script).
 */
const CSP_WATCH = `document.addEventListener('securitypolicyviolation', (e) => {
  window.__reportCspViolation(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline code') +
    ' (' + (e.sourceFile || 'document') + ':' + e.lineNumber + ')');
});`;

/**
 * Runs `run` in a new page of a new context on `base`, then fails if the page (or another page the
 * test opened in `context`) reported a problem. The context may read and write the clipboard (the
 * API key's copy button).
 */
export async function inPage(
  browser: Browser,
  base: string,
  run: (page: Page, watch: PageWatch, context: BrowserContext) => Promise<void>,
): Promise<void> {
  const context = await browser.newContext({
    baseURL: base,
    viewport: LAPTOP,
    locale: 'en-GB',
    timezoneId: 'UTC',
    colorScheme: 'light',
    reducedMotion: 'reduce',
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const problems: string[] = [];
  const allowed: Array<{ status: number; pattern: string | RegExp }> = [];
  await context.exposeBinding('__reportCspViolation', (_source, text: string) => {
    problems.push(`CSP violation: ${text}`);
  });
  await context.addInitScript({ content: CSP_WATCH });
  // The context's events cover every page of it: a test may open a second tab beside the first.
  context.on('console', (message) => {
    // A failed resource is reported below with its address and status, or allowed by the test.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  context.on('page', (page) =>
    page.on('pageerror', (error) => problems.push(`uncaught in the page: ${error.stack ?? error.message}`)),
  );
  context.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText ?? 'failed';
    // Navigating away aborts what the previous page still had in flight.
    if (reason !== 'net::ERR_ABORTED')
      problems.push(`request failed: ${request.method()} ${request.url()} ${reason}`);
  });
  context.on('response', (response) => {
    const status = response.status();
    if (status < 400) return;
    const where = new URL(response.url());
    const ok = allowed.some(
      (a) =>
        a.status === status &&
        (typeof a.pattern === 'string' ? where.pathname === a.pattern : a.pattern.test(where.pathname)),
    );
    if (!ok) problems.push(`HTTP ${status}: ${response.request().method()} ${where.pathname}${where.search}`);
  });
  const page = await context.newPage();
  const watch: PageWatch = {
    allowHttpError: (status, pattern) => allowed.push({ status, pattern }),
    problems: () => [...problems],
  };

  let failure: unknown;
  try {
    await run(page, watch, context);
    // Events the page queued (a blocked image's violation) fire within a frame or two; messages
    // sent before this round trip have been delivered once it returns.
    if (!page.isClosed()) await painted(page);
  } catch (error) {
    failure = error;
  }
  await context.close();
  if (failure !== undefined) {
    if (failure instanceof Error && problems.length > 0) {
      failure.message += `\nThe page also reported:\n${problems.map((p) => `  - ${p}`).join('\n')}`;
    }
    throw failure;
  }
  assert.deepEqual(
    problems,
    [],
    `the page reported problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
  );
}

let axeSource: string | undefined;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: Array<{ target: string; html: string; summary: string }>;
}

/**
 * Runs axe-core on the page as it is now and fails on any serious or critical violation, listed
 * readably. The source is evaluated through the DevTools protocol rather than added as a
 * `<script>` element: the dashboard's CSP forbids inline scripts, so a tag would be blocked (and
 * reported as a violation), while protocol evaluation is outside the page's policy.
 */
export async function axe(page: Page, what = page.url()): Promise<void> {
  axeSource ??= fs.readFileSync(
    path.join(path.dirname(createRequire(import.meta.url).resolve('axe-core')), 'axe.min.js'),
    'utf8',
  );
  if (!(await page.evaluate<boolean>("typeof window.axe === 'object'"))) await page.evaluate(axeSource);
  // Colours are judged as they end up: short transitions and animations (a map popup fading in,
  // 0.2 s) finish first; long decorative ones (a new row's 6 s highlight) are not waited for.
  await page.evaluate(`Promise.race([
    Promise.all(document.getAnimations()
      .filter((a) => { const d = a.effect?.getTiming().duration; return typeof d === 'number' && d <= 1000; })
      .map((a) => a.finished.catch(() => undefined))),
    new Promise((resolve) => setTimeout(resolve, 1500)),
  ])`);
  const violations = await page.evaluate<AxeViolation[]>(`window.axe
    .run(document, { resultTypes: ['violations'] })
    .then((result) => result.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
      nodes: v.nodes.map((n) => ({ target: n.target.join(' '), html: n.html, summary: n.failureSummary || '' })),
    })))`);
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  if (serious.length === 0) return;
  const report = serious
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help}\n    ${v.helpUrl}\n` +
        v.nodes
          .map((n) => `    at ${n.target}\n      ${n.html}\n      ${n.summary.replace(/\n/g, '\n      ')}`)
          .join('\n'),
    )
    .join('\n');
  assert.fail(`accessibility: ${serious.length} serious or critical violation(s) on ${what}\n${report}`);
}

/** Waits until the page has painted what it has now (two animation frames). */
export function painted(page: Page): Promise<unknown> {
  return page.evaluate(
    'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(0))))',
  );
}

/**
 * Writes `<name>-1366x768.png` and `<name>-390x844.png` (laptop and phone) into `.screenshots/<db>/`,
 * then puts the viewport back; `show` is scrolled into view first.
 */
export async function screenshot(page: Page, name: string, show?: Locator): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const original = page.viewportSize() ?? LAPTOP;
  for (const size of [LAPTOP, PHONE]) {
    await page.setViewportSize(size);
    if (show) await show.scrollIntoViewIfNeeded();
    await painted(page);
    await page.screenshot({
      path: path.join(SCREENSHOTS, `${name}-${size.width}x${size.height}.png`),
      animations: 'disabled',
    });
  }
  await page.setViewportSize(original);
  await painted(page);
}

/** Signs in through the login page (the page must be on it) and waits to leave it. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname !== '/login');
}
