/**
 * How the server serves the built dashboard (src/dashboard): index.html revalidated on every visit
 * with a strict CSP, hashed assets immutable, the dashboard's own addresses answered with
 * index.html for a browser while API clients keep the contract's 404, `/config.json` from
 * MAP_TILE_URL (whose host the CSP lets images come from) and GEOCODER_URL (whose origin the CSP
 * lets the page fetch from), and a build whose index.html names only
 * files that exist.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { ensureDashboardBuilt, WEB_DIST } from '../web/build.ts';

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** The `/assets/…` addresses index.html loads (scripts, styles, preloads). */
function referencedFiles(html: string): string[] {
  return [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)]
    .map((m) => m[1] ?? '')
    .filter((ref) => !ref.startsWith('data:'));
}

function directives(csp: string): Map<string, string[]> {
  return new Map(
    csp.split(';').map((part) => {
      const [name = '', ...values] = part.trim().split(/\s+/);
      return [name, values];
    }),
  );
}

describe('dashboard serving', () => {
  let t: TestApp;
  let indexHtml: string;

  before(async () => {
    await ensureDashboardBuilt();
    indexHtml = fs.readFileSync(path.join(WEB_DIST, 'index.html'), 'utf8');
    t = await startTestApp();
  });
  after(() => t?.close());

  test('/ is index.html, revalidated on every visit, with a strict CSP and framing refused', async () => {
    const res = await t.app.inject({ url: '/', headers: { accept: HTML } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.body, indexHtml);
    const csp = directives(String(res.headers['content-security-policy']));
    assert.deepEqual(csp.get('default-src'), ["'self'"]);
    assert.deepEqual(csp.get('script-src'), ["'self'"], 'no inline or eval');
    assert.deepEqual(csp.get('style-src'), ["'self'"]);
    assert.deepEqual(csp.get('connect-src'), ["'self'"]);
    assert.deepEqual(
      csp.get('img-src'),
      ["'self'", 'data:', 'blob:'],
      'no tile host when MAP_TILE_URL is unset',
    );
    assert.deepEqual(csp.get('object-src'), ["'none'"]);
    assert.deepEqual(csp.get('frame-ancestors'), ["'none'"]);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
  });

  test('hashed assets are immutable for a year, with their content type; an unknown one is a 404', async () => {
    const script = referencedFiles(indexHtml).find((ref) => ref.endsWith('.js'));
    assert.ok(script, 'index.html loads a script');
    const res = await t.app.inject({ url: script });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], IMMUTABLE);
    assert.match(String(res.headers['content-type']), /^text\/javascript/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.rawPayload.length, fs.statSync(path.join(WEB_DIST, script)).size);

    const missing = await t.app.inject({ url: '/assets/index-doesnotexist.js' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { detail: 'Not found', error_code: 'NOT_FOUND' });
    assert.notEqual(missing.headers['cache-control'], IMMUTABLE, 'a miss is never cached for a year');
  });

  test('a dashboard page asked for as HTML is index.html (e-mail links included)', async () => {
    for (const url of ['/geofences', '/devices?view=1,2,3', '/reset-password?token=abc', '/no/such/page']) {
      const res = await t.app.inject({ url, headers: { accept: HTML } });
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.body, indexHtml, url);
      assert.equal(res.headers['cache-control'], 'no-cache', url);
      assert.ok(res.headers['content-security-policy'], url);
    }
  });

  test('the same address asked for as JSON is the contract’s 404', async () => {
    for (const accept of ['application/json', '*/*']) {
      const res = await t.app.inject({ url: '/geofences', headers: { accept } });
      assert.equal(res.statusCode, 404, accept);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      assert.deepEqual(res.json(), { detail: 'Not found', error_code: 'NOT_FOUND' });
    }
    const post = await t.app.inject({ method: 'POST', url: '/geofences', headers: { accept: HTML } });
    assert.equal(post.statusCode, 404, 'only GET and HEAD can be a page');
    assert.deepEqual(post.json(), { detail: 'Not found', error_code: 'NOT_FOUND' });
  });

  test('an unknown API address is a JSON 404 even when a browser asks for HTML', async () => {
    for (const url of ['/api/v1/nope', '/api/v1/geofences/x/y/z', '/api', '/api?x=1', '/docs/nope?y=2']) {
      const res = await t.app.inject({ url, headers: { accept: HTML } });
      assert.equal(res.statusCode, 404, url);
      assert.deepEqual(res.json(), { detail: 'Not found', error_code: 'NOT_FOUND' }, url);
    }
  });

  test('/config.json without MAP_TILE_URL: no tiles (the map draws a graticule)', async () => {
    const res = await t.app.inject({ url: '/config.json' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.deepEqual(res.json(), { map_tile_url: null, map_tile_attribution: null, geocoder_url: null });
  });

  test('the built index.html loads only files under /assets/ that exist and are served', async () => {
    const refs = referencedFiles(indexHtml);
    assert.ok(refs.length >= 2, `a script and a stylesheet at least: ${refs.join(', ')}`);
    for (const ref of refs) {
      assert.match(ref, /^\/assets\/[\w.-]+$/, `${ref} is a hashed asset of this origin`);
      assert.ok(fs.existsSync(path.join(WEB_DIST, ref)), `${ref} exists in web/dist`);
      assert.equal((await t.app.inject({ url: ref })).statusCode, 200, `${ref} is served`);
    }
    assert.doesNotMatch(
      indexHtml,
      /<script(?![^>]*\bsrc=)[^>]*>/,
      'no inline script (the CSP would block it)',
    );
    assert.doesNotMatch(indexHtml, /<style/, 'no inline style (the CSP would block it)');
  });
});

describe('dashboard serving with MAP_TILE_URL', () => {
  test('/config.json reflects MAP_TILE_URL and MAP_TILE_ATTRIBUTION; img-src allows the tile host', async () => {
    const t = await startTestApp({
      env: {
        MAP_TILE_URL: 'https://tiles.example.org/{z}/{x}/{y}.png',
        MAP_TILE_ATTRIBUTION: '© Example contributors',
      },
    });
    try {
      const config = await t.app.inject({ url: '/config.json' });
      assert.deepEqual(config.json(), {
        map_tile_url: 'https://tiles.example.org/{z}/{x}/{y}.png',
        map_tile_attribution: '© Example contributors',
        geocoder_url: null,
      });
      const page = await t.app.inject({ url: '/', headers: { accept: HTML } });
      const csp = directives(String(page.headers['content-security-policy']));
      assert.deepEqual(csp.get('img-src'), ["'self'", 'data:', 'blob:', 'https://tiles.example.org']);
      assert.deepEqual(csp.get('connect-src'), ["'self'"], 'tiles are images: no fetch to the tile host');
    } finally {
      await t.close();
    }
  });

  test('a {s} subdomain placeholder becomes a wildcard host in img-src (pages served by the fallback too)', async () => {
    const t = await startTestApp({ env: { MAP_TILE_URL: 'https://{s}.tile.example.org/{z}/{x}/{y}.png' } });
    try {
      for (const url of ['/', '/devices']) {
        const page = await t.app.inject({ url, headers: { accept: HTML } });
        const csp = directives(String(page.headers['content-security-policy']));
        assert.deepEqual(csp.get('img-src'), ["'self'", 'data:', 'blob:', 'https://*.tile.example.org'], url);
      }
    } finally {
      await t.close();
    }
  });

  test('an invalid MAP_TILE_URL is a configuration error naming it', () => {
    for (const value of [
      'tiles.example.org/{z}/{x}/{y}.png',
      'https://tiles.example.org/tile.png',
      'ftp://tiles.example.org/{z}/{x}/{y}.png',
      'https://tiles.example.org/{x}/{y}.png',
    ]) {
      assert.throws(
        () => loadConfig({ MAP_TILE_URL: value }),
        (error: unknown) =>
          error instanceof ConfigError && error.problems.some((p) => p.startsWith('MAP_TILE_URL')),
        value,
      );
    }
  });
});

describe('dashboard serving with GEOCODER_URL', () => {
  test('/config.json names the geocoder; connect-src allows exactly its origin (pages served by the fallback too)', async () => {
    const t = await startTestApp({
      env: { GEOCODER_URL: 'https://nominatim.example.org:8443/search?countrycodes=de' },
    });
    try {
      const config = await t.app.inject({ url: '/config.json' });
      assert.equal(config.json().geocoder_url, 'https://nominatim.example.org:8443/search?countrycodes=de');
      for (const url of ['/', '/geofences']) {
        const page = await t.app.inject({ url, headers: { accept: HTML } });
        const csp = directives(String(page.headers['content-security-policy']));
        assert.deepEqual(csp.get('connect-src'), ["'self'", 'https://nominatim.example.org:8443'], url);
        assert.deepEqual(csp.get('img-src'), ["'self'", 'data:', 'blob:'], url);
      }
    } finally {
      await t.close();
    }
  });
});

describe('dashboard not built', () => {
  test('/ explains how to build it (503) instead of an empty page; the API is unaffected', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'dashboard-missing-'));
    const t = await startTestApp({ env: { DASHBOARD_DIR: empty } });
    try {
      const res = await t.app.inject({ url: '/', headers: { accept: HTML } });
      assert.equal(res.statusCode, 503);
      assert.match(res.body, /npm run build:web/);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
    } finally {
      await t.close();
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
