/**
 * A webhook URL must name its host (ADR 009, contract §5): `http:///x` and `http:x` read as host `x`
 * by WHATWG URL parsing but as an empty host by RFC 3986, so they are refused (422 at
 * ["body", "url"]) on create and on update.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import { issuesOf } from '../helpers/validation-issues.ts';

describe('webhook URL host', () => {
  let t: TestApp;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'hooks')).tokens.access_token };
  });
  after(async () => t?.close());

  const NO_HOST = ['http:///x', 'https:///x/y', 'http:x', 'https:/x', 'http://', 'http:\\\\x'];
  const hostIssue = {
    type: 'value_error',
    loc: ['body', 'url'],
    msg: 'URL should name a host, as in https://host/path',
  };

  test('create: URLs without a written host are 422 at body.url', async () => {
    for (const url of NO_HOST) {
      const res = await call(t, '/webhooks', { ...jwt, body: { name: 'w', url } });
      const issues = issuesOf(res, url);
      assert.equal(issues[0]?.type, 'value_error', url);
      assert.deepEqual(issues[0]?.loc, ['body', 'url'], url);
    }
    const created = await call(t, '/webhooks', { ...jwt, body: { name: 'w', url: 'https://example.com/h' } });
    assert.equal(expectStatus<{ url: string }>(created, 201, 'valid').url, 'https://example.com/h');
  });

  test('update: the same rule', async () => {
    const created = expectStatus<{ id: string }>(
      await call(t, '/webhooks', { ...jwt, body: { name: 'w', url: 'https://example.com/h' } }),
      201,
      'create',
    );
    const res = await call(t, `/webhooks/${created.id}`, {
      ...jwt,
      method: 'PATCH',
      body: { url: 'http:///x' },
    });
    assert.deepEqual(issuesOf(res, 'patch'), [hostIssue]);
    const read = expectStatus<{ url: string }>(await call(t, `/webhooks/${created.id}`, jwt), 200, 'get');
    assert.equal(read.url, 'https://example.com/h');
  });
});
