/**
 * Credentials on the tracker routes (contract §4.6, §2.3b): a device token or an API key with
 * `locations:write`, as Bearer, X-API-Key, the HTTP Basic password (or a lone user name) or
 * `?token=`. A device token reports only its own device (another device's location route 404,
 * any other route 403) and is refused at once after revocation; no credential, an unknown one or a
 * wrong Basic password is 401; a token in the URL is never written to the log.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { call, expectError } from '../helpers/identity.ts';
import {
  type Answer,
  basic,
  deviceByExternalId,
  expectAnswer,
  fixIso,
  fixIsoSeconds,
  fixSeconds,
  locationCount,
  locationsOf,
  newApiKey,
  type RawRequest,
  send,
  trackedDevice,
  trackerFixture,
} from './helpers.ts';

type Route = 'owntracks' | 'osmand' | 'overland';
/** How the credential travels. */
type Carrier = 'bearer' | 'x-api-key' | 'basic' | 'query' | 'query-behind-proxy-basic';

const ROUTES: Route[] = ['owntracks', 'osmand', 'overland'];
const CARRIERS: Carrier[] = ['bearer', 'x-api-key', 'basic', 'query', 'query-behind-proxy-basic'];
const ANSWER: Record<Route, unknown> = {
  owntracks: [],
  osmand: { result: 'ok' },
  overland: { result: 'ok' },
};

/** One location for `route` at `step`, naming the device `externalId` in the route's own way. */
function trackerRequest(route: Route, step: number, externalId = 'named-by-payload'): RawRequest {
  switch (route) {
    case 'owntracks':
      return {
        method: 'POST',
        path: '/ingest/owntracks',
        headers: { 'content-type': 'application/json; charset=utf-8', 'x-limit-d': externalId },
        body: JSON.stringify({ _type: 'location', lat: 45, lon: 7, tst: fixSeconds(step), tid: 'ab' }),
      };
    case 'osmand':
      return {
        method: 'POST',
        path: '/ingest/osmand',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
        body: `id=${externalId}&lat=45&lon=7&timestamp=${fixSeconds(step)}`,
      };
    case 'overland':
      return {
        method: 'POST',
        path: '/ingest/overland',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          locations: [
            {
              type: 'Feature',
              geometry: { type: 'Point', coordinates: [7, 45] },
              properties: { timestamp: fixIsoSeconds(step), device_id: externalId },
            },
          ],
        }),
      };
  }
}

function withCredential(request: RawRequest, carrier: Carrier, secret: string): RawRequest {
  const headers = { ...request.headers };
  let path = request.path;
  if (carrier === 'bearer') headers.authorization = `Bearer ${secret}`;
  if (carrier === 'x-api-key') headers['x-api-key'] = secret;
  if (carrier === 'basic') headers.authorization = basic('anna', secret);
  // A reverse proxy's own Basic login in front of the service: its password is not ours, so the
  // `token` parameter still decides.
  if (carrier === 'query-behind-proxy-basic') headers.authorization = basic('proxy-user', 'proxy password');
  if (carrier === 'query' || carrier === 'query-behind-proxy-basic')
    path = `${path}${path.includes('?') ? '&' : '?'}token=${encodeURIComponent(secret)}`;
  return { ...request, headers, path };
}

function expectUnauthenticated(res: Answer, what: string): void {
  assert.equal(res.status, 401, `${what}: expected 401, got ${res.status} ${res.text}`);
  const body = res.json<{ detail: unknown; error_code: unknown }>();
  assert.equal(typeof body.detail, 'string', `${what}: detail`);
}

describe('tracker route credentials', () => {
  const fixture = trackerFixture();

  test('a device token works as Bearer, X-API-Key, Basic password, Basic user name and ?token= on every route', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    let step = 0;
    for (const route of ROUTES) {
      for (const carrier of CARRIERS) {
        const res = await send(t, withCredential(trackerRequest(route, step++), carrier, token));
        expectAnswer(res, ANSWER[route], `${route} with ${carrier}`);
      }
    }
    assert.equal(await locationCount(t, device.id), step, 'every location on the token’s device');
    const [latest] = await locationsOf(t, device.id);
    assert.equal(latest?.timestamp, fixIso(step - 1));
  });

  test('an API key needs locations:write; with it, the payload names the device', async () => {
    const { t } = fixture;
    const reader = await newApiKey(t, ['devices:read', 'events:read']);
    for (const route of ROUTES) {
      const res = await send(t, withCredential(trackerRequest(route, 0, `ro-${route}`), 'bearer', reader));
      assert.equal(res.status, 403, `${route} with a read-only key: ${res.text}`);
      assert.equal(res.json<{ error_code: string }>().error_code, 'INSUFFICIENT_PERMISSIONS');
    }
    const writer = await newApiKey(t);
    for (const route of ROUTES) {
      const res = await send(t, withCredential(trackerRequest(route, 1, `rw-${route}`), 'query', writer));
      expectAnswer(res, ANSWER[route], `${route} with a locations:write key`);
      const created = await deviceByExternalId(t, `rw-${route}`);
      assert.ok(created, `device rw-${route} created`);
      assert.equal(await locationCount(t, created.id), 1);
      assert.equal(
        await deviceByExternalId(t, `ro-${route}`),
        undefined,
        'nothing created for the read-only key',
      );
    }
  });

  test("a device token: another device's location route → 404, GET /geofences → 403", async () => {
    const { t } = fixture;
    const own = await trackedDevice(t, { name: 'own' });
    const other = await trackedDevice(t, { name: 'other' });
    const res = await call(t.h.t, `/devices/${other.device.id}/locations`, {
      token: own.token,
      body: { coordinates: [7, 45], timestamp: fixIso(0) },
    });
    const notFound = expectError(res, 404, 'NOT_FOUND', "another device's location route");
    assert.equal(notFound.detail, 'Device not found');
    expectError(
      await call(t.h.t, '/geofences', { token: own.token }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'geofences',
    );
    expectError(
      await call(t.h.t, '/geofences', { apiKey: own.token }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'geofences (X-API-Key)',
    );
    assert.equal(await locationCount(t, other.device.id), 0);
    // Naming the other device in a tracker payload still reports the token's own device.
    expectAnswer(
      await send(t, withCredential(trackerRequest('osmand', 1, other.device.id), 'query', own.token)),
      ANSWER.osmand,
      'payload naming another device',
    );
    assert.equal(await locationCount(t, own.device.id), 1);
    assert.equal(await locationCount(t, other.device.id), 0);
  });

  test('after revocation the token is refused at once on every tracker route and carrier', async () => {
    const { t } = fixture;
    const { device, token, tokenId } = await trackedDevice(t);
    expectAnswer(
      await send(t, withCredential(trackerRequest('osmand', 0), 'query', token)),
      ANSWER.osmand,
      'before revocation (and cached)',
    );
    const revoked = await call(t.h.t, `/devices/${device.id}/tokens/${tokenId}`, {
      token: t.h.token,
      method: 'DELETE',
    });
    assert.equal(revoked.statusCode, 204, revoked.body);
    let step = 1;
    for (const route of ROUTES) {
      for (const carrier of CARRIERS) {
        expectUnauthenticated(
          await send(t, withCredential(trackerRequest(route, step++), carrier, token)),
          `${route} with ${carrier} after revocation`,
        );
      }
    }
    assert.equal(await locationCount(t, device.id), 1, 'nothing stored after revocation');
  });

  test('no credential, an unknown token, a wrong Basic password → 401', async () => {
    const { t } = fixture;
    const { device, token } = await trackedDevice(t);
    for (const route of ROUTES) {
      expectUnauthenticated(await send(t, trackerRequest(route, 0)), `${route} without a credential`);
      expectUnauthenticated(
        await send(t, withCredential(trackerRequest(route, 0), 'query', `gf_dev_${'x'.repeat(43)}`)),
        `${route} with an unknown token`,
      );
      const wrongPassword = withCredential(trackerRequest(route, 0), 'basic', 'not-the-token');
      expectUnauthenticated(await send(t, wrongPassword), `${route} with a wrong Basic password`);
      // The token as the user name does not rescue a wrong password: the password is the credential.
      const tokenAsUser = {
        ...trackerRequest(route, 0),
        headers: { ...trackerRequest(route, 0).headers, authorization: basic(token, 'wrong') },
      };
      expectUnauthenticated(
        await send(t, tokenAsUser),
        `${route} with the token as user and a wrong password`,
      );
      // The token as the user name with no password: the user name is never the credential (OwnTracks
      // sends it on in X-Limit-U and topic, which are stored with the location).
      expectUnauthenticated(
        await send(t, {
          ...trackerRequest(route, 0),
          headers: { ...trackerRequest(route, 0).headers, authorization: basic(token, '') },
        }),
        `${route} with the token as the user name only`,
      );
      const noColon = {
        ...trackerRequest(route, 0),
        headers: {
          ...trackerRequest(route, 0).headers,
          authorization: `Basic ${Buffer.from(token).toString('base64')}`,
        },
      };
      expectUnauthenticated(await send(t, noColon), `${route} with Basic without a colon`);
      expectUnauthenticated(
        await send(t, withCredential(trackerRequest(route, 0), 'bearer', '')),
        `${route} with an empty Bearer`,
      );
    }
    assert.equal(await locationCount(t, device.id), 0);
  });

  test('a token in the URL is never written to the log: success, 400 and 401 alike', async () => {
    const { t } = fixture;
    const { device, token, tokenId } = await trackedDevice(t);
    const logs = t.h.t.logs;
    const from = logs.length;

    // GPSLogger-style GET (200), a bad one (400), a malformed JSON body (400), an unknown route
    // under the token (404), then the revoked token (401) and a made-up one (401).
    expectAnswer(
      await send(t, {
        method: 'GET',
        path: `/ingest/osmand?id=gl&lat=45&lon=7&timestamp=${fixSeconds(0)}&token=${token}`,
      }),
      { result: 'ok' },
      'stored',
    );
    const bad = await send(t, { method: 'GET', path: `/ingest/osmand?id=gl&lat=91&lon=7&token=${token}` });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.text.includes(token), false, 'the 400 answer does not echo the token');
    const malformed = await send(t, {
      method: 'POST',
      path: `/ingest/overland?token=${token}`,
      headers: { 'content-type': 'application/json' },
      body: '{"locations": [',
    });
    assert.equal(malformed.status, 400, malformed.text);
    const first = await send(t, {
      method: 'POST',
      path: `/ingest/owntracks?token=${token}&u=anna&d=phone`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ _type: 'location', lat: 45, lon: 7, tst: fixSeconds(1) }),
    });
    expectAnswer(first, [], 'token between other parameters');
    // The parameter's name percent-encoded is still `token` to the server, and to the redaction.
    expectAnswer(
      await send(t, {
        method: 'GET',
        path: `/ingest/osmand?id=gl&lat=45&lon=7&timestamp=${fixSeconds(2)}&tok%65n=${token}`,
      }),
      { result: 'ok' },
      'an encoded parameter name',
    );
    const revoked = await call(t.h.t, `/devices/${device.id}/tokens/${tokenId}`, {
      token: t.h.token,
      method: 'DELETE',
    });
    assert.equal(revoked.statusCode, 204, revoked.body);
    const made = `gf_dev_${'y'.repeat(43)}`;
    expectUnauthenticated(
      await send(t, { method: 'GET', path: `/ingest/osmand?token=${token}&id=gl&lat=45&lon=7` }),
      'revoked token in the URL',
    );
    expectUnauthenticated(
      await send(t, { method: 'GET', path: `/ingest/osmand?id=gl&lat=45&lon=7&token=${made}` }),
      'made-up token in the URL',
    );

    const written = logs
      .slice(from)
      .map((line) => JSON.stringify(line))
      .join('\n');
    assert.ok(written.includes('[redacted]'), `the URLs are logged, redacted:\n${written}`);
    for (const secret of [token, made, token.slice(7), made.slice(7)]) {
      assert.equal(written.includes(secret), false, `a secret in the log:\n${written}`);
    }
    const urls = logs
      .slice(from)
      .map((line) => line.url)
      .filter((url): url is string => typeof url === 'string' && url.includes('/ingest/'));
    assert.ok(urls.length >= 7, `one line per request: ${JSON.stringify(urls)}`);
    for (const url of urls) {
      assert.match(url, /(token|tok%65n)=\[redacted\]/, url);
      // The query is a person's position: its values are not logged, its names are.
      assert.equal(/lat=\d/.test(url), false, url);
      if (url.includes('lat=')) assert.match(url, /lat=\[redacted\]&lon=\[redacted\]/, url);
    }
  });
});
