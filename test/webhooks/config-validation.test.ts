/**
 * Every validation error of the webhook record (contract §1, §5): 422 with the detail array for
 * schema and field rules, 400 for a literal private target address.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createGeofence, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import { assertIssue, issuesOf } from '../helpers/validation-issues.ts';

describe('webhook configuration: validation', () => {
  let t: TestApp;
  let jwt: { token: string };
  const create = async (body: Record<string, unknown>) =>
    expectStatus<{ id: string; secret: string }>(
      await call(t, '/webhooks', { ...jwt, body }),
      201,
      'create webhook',
    );

  before(async () => {
    t = await startIdentityApp({ env: { DEFAULT_PLAN: 'business' } });
    jwt = { token: (await signUp(t, 'webhooks-validation')).tokens.access_token };
  });
  after(async () => t?.close());

  describe('validation (422 with the detail array)', () => {
    const base = { name: 'V', url: 'https://v.example/' };
    const cases: Array<[string, Record<string, unknown>, string, Array<string | number>]> = [
      ['missing name', { url: base.url }, 'missing', ['body', 'name']],
      ['missing url', { name: 'V' }, 'missing', ['body', 'url']],
      ['empty name', { ...base, name: '' }, 'string_too_short', ['body', 'name']],
      ['long name', { ...base, name: 'n'.repeat(256) }, 'string_too_long', ['body', 'name']],
      ['secret supplied', { ...base, secret: 'whsec_mine' }, 'extra_forbidden', ['body', 'secret']],
      ['unknown field', { ...base, colour: 'red' }, 'extra_forbidden', ['body', 'colour']],
      ['method DELETE', { ...base, method: 'DELETE' }, 'enum', ['body', 'method']],
      ['method lower case', { ...base, method: 'post' }, 'enum', ['body', 'method']],
      ['timeout 0', { ...base, timeout_seconds: 0 }, 'greater_than_equal', ['body', 'timeout_seconds']],
      ['timeout 61', { ...base, timeout_seconds: 61 }, 'less_than_equal', ['body', 'timeout_seconds']],
      ['timeout as text', { ...base, timeout_seconds: '5' }, 'int_parsing', ['body', 'timeout_seconds']],
      ['timeout 1.5', { ...base, timeout_seconds: 1.5 }, 'int_parsing', ['body', 'timeout_seconds']],
      [
        'rate 0',
        { ...base, rate_limit_per_minute: 0 },
        'greater_than_equal',
        ['body', 'rate_limit_per_minute'],
      ],
      [
        'rate 10001',
        { ...base, rate_limit_per_minute: 10001 },
        'less_than_equal',
        ['body', 'rate_limit_per_minute'],
      ],
      ['no events', { ...base, events: [] }, 'too_short', ['body', 'events']],
      ['webhook.test event', { ...base, events: ['webhook.test'] }, 'enum', ['body', 'events', 0]],
      [
        'unknown event',
        { ...base, events: ['geofence.enter', 'device.moved'] },
        'enum',
        ['body', 'events', 1],
      ],
      [
        'repeated event',
        { ...base, events: ['geofence.enter', 'geofence.enter'] },
        'value_error',
        ['body', 'events'],
      ],
      ['events not a list', { ...base, events: 'geofence.enter' }, 'list_type', ['body', 'events']],
      [
        'geofence id not a uuid',
        { ...base, geofence_ids: ['abc'] },
        'value_error',
        ['body', 'geofence_ids', 0],
      ],
      ['empty geofence ids', { ...base, geofence_ids: [] }, 'too_short', ['body', 'geofence_ids']],
      ['headers not an object', { ...base, headers: ['X-A'] }, 'dict_type', ['body', 'headers']],
      [
        'header value not text',
        { ...base, headers: { 'X-A': 1 } },
        'string_type',
        ['body', 'headers', 'X-A'],
      ],
      ['enabled as text', { ...base, enabled: 'yes' }, 'bool_parsing', ['body', 'enabled']],
      [
        'content type without subtype',
        { ...base, content_type: 'json' },
        'value_error',
        ['body', 'content_type'],
      ],
      [
        'content type with CRLF',
        { ...base, content_type: 'text/plain\r\nX-Evil: 1' },
        'value_error',
        ['body', 'content_type'],
      ],
      ['url ftp', { ...base, url: 'ftp://files.example/' }, 'value_error', ['body', 'url']],
      ['url javascript', { ...base, url: 'javascript:alert(1)' }, 'value_error', ['body', 'url']],
      ['url not a url', { ...base, url: 'not a url' }, 'value_error', ['body', 'url']],
      [
        'url with credentials',
        { ...base, url: 'https://user:pw@v.example/' },
        'value_error',
        ['body', 'url'],
      ],
      ['url empty', { ...base, url: '' }, 'string_too_short', ['body', 'url']],
      [
        'invalid header name',
        { ...base, headers: { 'Bad Header': 'x' } },
        'value_error',
        ['body', 'headers', 'Bad Header'],
      ],
      [
        'header name with colon',
        { ...base, headers: { 'X-A:': 'x' } },
        'value_error',
        ['body', 'headers', 'X-A:'],
      ],
      [
        'header value with CRLF',
        { ...base, headers: { 'X-A': 'a\r\nX-B: b' } },
        'value_error',
        ['body', 'headers', 'X-A'],
      ],
      [
        'same header twice',
        { ...base, headers: { 'X-A': '1', 'x-a': '2' } },
        'value_error',
        ['body', 'headers', 'x-a'],
      ],
    ];
    for (const [what, body, type, loc] of cases) {
      test(what, async () => {
        const issues = issuesOf(await call(t, '/webhooks', { ...jwt, body }), what);
        const issue = assertIssue(issues, type, loc, what);
        assert.ok(issue.msg.length > 0);
      });
    }

    test('the same rules apply to PATCH (absent fields are not required)', async () => {
      const created = await create(base);
      for (const [what, body, type, loc] of cases.filter(([w]) => !w.startsWith('missing'))) {
        const res = await call(t, `/webhooks/${created.id}`, { ...jwt, method: 'PATCH', body });
        assertIssue(issuesOf(res, `PATCH ${what}`), type, loc, `PATCH ${what}`);
      }
      // Nothing of the refused PATCHes stuck.
      const { secret: _secret, ...record } = created;
      assert.deepEqual(expectStatus(await call(t, `/webhooks/${created.id}`, jwt), 200), record);
    });

    test('reserved headers are refused with a message saying why', async () => {
      const reserved = [
        'X-SVC-Signature',
        'x-svc-event-id',
        'X-SVC-Attempt',
        'X-SVC-Anything-New',
        'X-Idempotency-Key',
        'X-Geofencing-Service-Signature',
        'X-Geofencing-Service-Event-ID',
        'X-Geofencing-Service-Attempt',
        'Content-Type',
        'content-length',
        'Host',
        'User-Agent',
        'Transfer-Encoding',
        'Connection',
      ];
      for (const name of reserved) {
        const issues = issuesOf(
          await call(t, '/webhooks', { ...jwt, body: { ...base, headers: { [name]: 'x' } } }),
          name,
        );
        const issue = assertIssue(issues, 'value_error', ['body', 'headers', name], name);
        assert.match(issue.msg, new RegExp(`^Header "${name}" is reserved: `));
      }
      const contentType = issuesOf(
        await call(t, '/webhooks', { ...jwt, body: { ...base, headers: { 'Content-Type': 'text/plain' } } }),
        'content-type',
      );
      assert.match(contentType[0]?.msg ?? '', /content_type field/);
      const signature = issuesOf(
        await call(t, '/webhooks', {
          ...jwt,
          body: { ...base, headers: { 'X-SVC-Signature': 'sha256=00' } },
        }),
        'signature',
      );
      assert.match(signature[0]?.msg ?? '', /cannot override/);
    });

    test('geofence ids must be geofences of the workspace', async () => {
      const stranger = await signUp(t, 'webhooks-fence');
      const theirs = await createGeofence(
        t,
        { token: stranger.tokens.access_token },
        {
          name: 'Theirs',
          geometry: { type: 'Polygon', coordinates: [rect(5, 5, 6, 6)] },
        },
      );
      const mine = await createGeofence(t, jwt, {
        name: 'Mine',
        geometry: { type: 'Polygon', coordinates: [rect(7, 7, 8, 8)] },
      });
      const unknown = randomUUID();
      const issues = issuesOf(
        await call(t, '/webhooks', {
          ...jwt,
          body: { ...base, geofence_ids: [mine.id, theirs.id, unknown] },
        }),
        'foreign geofence',
      );
      assert.deepEqual(
        issues.map((i) => i.loc),
        [
          ['body', 'geofence_ids', 1],
          ['body', 'geofence_ids', 2],
        ],
      );
      assert.match(issues[0]?.msg ?? '', new RegExp(theirs.id));
    });

    test('a body that is not JSON → 400', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: { authorization: `Bearer ${jwt.token}`, 'content-type': 'application/json' },
        payload: '{"name": "x",',
      });
      expectError(res, 400, 'VALIDATION_ERROR');
    });
  });
});
