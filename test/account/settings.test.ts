/**
 * Account settings (contract §2.5): GET defaults, partial PATCH, time-zone check, and the
 * read-modify-write in one transaction with the row locked: concurrent PATCHes of different fields
 * all survive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';

interface Settings {
  timezone: string;
  email_notifications: boolean;
  notify_on: string[];
}

describe('account settings', () => {
  let t: TestApp;

  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  const patch = (token: string, body: Record<string, unknown>) =>
    call(t, '/account/settings', { token, method: 'PATCH', body });

  test('defaults, then a PATCH changes only the fields it names', async () => {
    const { tokens } = await signUp(t, 'settings');
    const token = tokens.access_token;
    assert.deepEqual(expectStatus<Settings>(await call(t, '/account/settings', { token }), 200), {
      timezone: 'UTC',
      email_notifications: false,
      notify_on: ['dlq', 'quota', 'api_key'],
    });
    assert.deepEqual(expectStatus<Settings>(await patch(token, { timezone: 'Europe/Berlin' }), 200), {
      timezone: 'Europe/Berlin',
      email_notifications: false,
      notify_on: ['dlq', 'quota', 'api_key'],
    });
    assert.deepEqual(expectStatus<Settings>(await patch(token, { notify_on: ['quota'] }), 200), {
      timezone: 'Europe/Berlin',
      email_notifications: false,
      notify_on: ['quota'],
    });
    assert.deepEqual(expectStatus<Settings>(await call(t, '/account/settings', { token }), 200), {
      timezone: 'Europe/Berlin',
      email_notifications: false,
      notify_on: ['quota'],
    });
  });

  test('an unknown time zone → 422 at body.timezone, nothing saved', async () => {
    const { tokens } = await signUp(t, 'settings-tz');
    const token = tokens.access_token;
    const refused = expectError(
      await patch(token, { timezone: 'Mars/Olympus_Mons', email_notifications: true }),
      422,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(refused.detail, [
      { type: 'value_error', loc: ['body', 'timezone'], msg: 'Unknown IANA time zone' },
    ]);
    const settings = expectStatus<Settings>(await call(t, '/account/settings', { token }), 200);
    assert.equal(settings.email_notifications, false, 'the valid field of a refused PATCH is not saved');
  });

  test('PATCHes of different fields sent at the same moment all survive', async () => {
    const { tokens } = await signUp(t, 'settings-race');
    const token = tokens.access_token;
    const zones = ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Africa/Lagos'];
    const topics = [['dlq'], ['quota'], ['api_key'], ['dlq', 'quota']];
    for (let round = 0; round < 12; round++) {
      const expected: Settings = {
        timezone: zones[round % zones.length] ?? 'UTC',
        email_notifications: round % 2 === 0,
        notify_on: topics[round % topics.length] ?? [],
      };
      // Each PATCH reads the row and writes all three columns back: without the transaction and
      // its row lock, one of them would write back a field another had just changed.
      const answers = await Promise.all([
        patch(token, { timezone: expected.timezone }),
        patch(token, { email_notifications: expected.email_notifications }),
        patch(token, { notify_on: expected.notify_on }),
      ]);
      for (const answer of answers) expectStatus(answer, 200, `round ${round}`);
      assert.deepEqual(
        expectStatus<Settings>(await call(t, '/account/settings', { token }), 200),
        expected,
        `round ${round}`,
      );
    }
  });
});
