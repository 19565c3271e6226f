/**
 * The browser tests' own safety net (browser.ts): on the real dashboard with its real CSP header,
 * each kind of problem a page can report fails the test that caused it, and one the test announced
 * does not. Without this, a watch that silently stopped listening would let every browser test pass.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axe, inPage, startServerAndBrowser } from './browser.ts';
import type { DashboardServer } from './dashboard-server.ts';

describe('browser tests: the page watch', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;

  before(async () => {
    ({ server, browser } = await startServerAndBrowser());
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const onLogin = (act: (page: Page) => Promise<unknown>) =>
    inPage(browser, base, async (page) => {
      await page.goto('/login');
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await act(page);
    });

  test('a clean page passes', () => onLogin(async () => undefined));

  test('an inline script is blocked by the CSP and fails the test', async () => {
    await assert.rejects(
      onLogin((page) =>
        page.evaluate(`{
          const script = document.createElement('script');
          script.textContent = 'window.injected = true';
          document.head.append(script);
        }`),
      ),
      /CSP violation: script-src-elem blocked inline/,
    );
  });

  test('an image from another origin is blocked by the CSP and fails the test', async () => {
    await assert.rejects(
      onLogin((page) =>
        page.evaluate(`{
          const img = document.createElement('img');
          img.alt = '';
          img.src = 'https://tiles.example.invalid/1/2/3.png';
          document.body.append(img);
        }`),
      ),
      /CSP violation: img-src blocked https:\/\/tiles\.example\.invalid/,
    );
  });

  test('a console error fails the test', async () => {
    await assert.rejects(
      onLogin((page) => page.evaluate(`console.error('something broke')`)),
      /console error: something broke/,
    );
  });

  test('an uncaught exception fails the test', async () => {
    await assert.rejects(
      onLogin((page) => page.evaluate(`setTimeout(() => { throw new Error('unhandled in a timer'); })`)),
      /uncaught in the page: Error: unhandled in a timer/,
    );
  });

  test('an HTTP error the test did not announce fails it; an announced one does not', async () => {
    const call = `fetch('/api/v1/nope', { headers: { accept: 'application/json' } }).then((r) => r.status)`;
    await assert.rejects(
      onLogin((page) => page.evaluate(call)),
      /HTTP 404: GET \/api\/v1\/nope/,
    );
    await inPage(browser, base, async (page, watch) => {
      watch.allowHttpError(404, '/api/v1/nope');
      await page.goto('/login');
      assert.equal(await page.evaluate(call), 404);
    });
  });

  test('a second tab of the test is watched too', async () => {
    await assert.rejects(
      inPage(browser, base, async (_page, _watch, context) => {
        const second = await context.newPage();
        await second.goto('/login');
        await second.evaluate(`console.error('broken in the second tab')`);
        await second.evaluate(`setTimeout(() => { throw new Error('thrown in the second tab'); })`);
        await second.evaluate(`fetch('/api/v1/nope', { headers: { accept: 'application/json' } })`);
      }),
      (error: Error) =>
        /console error: broken in the second tab/.test(error.message) &&
        /uncaught in the page: Error: thrown in the second tab/.test(error.message) &&
        /HTTP 404: GET \/api\/v1\/nope/.test(error.message),
    );
  });

  test('axe fails on a serious violation and names it', async () => {
    await assert.rejects(
      onLogin(async (page) => {
        await page.evaluate(`{
          const img = document.createElement('img');
          img.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
          document.querySelector('main').append(img);
        }`);
        await axe(page);
      }),
      /image-alt \(critical\)/,
    );
  });
});
