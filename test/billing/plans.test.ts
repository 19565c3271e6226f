/**
 * Plans and subscriptions (contract §7 and §0): the default table, PLANS_FILE replacing it (and a
 * bad file stopping the server with exit 2), the current subscription of a workspace (calendar
 * month UTC), plan changes by owners and admins only, and `cli set-plan` with custom limits.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/billing/plans.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  createApiKey,
  expectError,
  expectStatus,
  login,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { plan, plansFile } from './helpers.ts';

interface PlanOut {
  id: string;
  name: string;
  price_cents_per_month: number | null;
  limits: Record<string, number | null>;
  self_service: boolean;
}

interface SubscriptionOut {
  plan: string;
  status: string;
  current_period_start: string;
  current_period_end: string;
  limits: Record<string, number | null>;
}

describe('plans and subscriptions', () => {
  let t: TestApp;
  let owner: SignedUpUser;

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'plans');
  });
  after(async () => t?.close());

  test('GET /subscriptions/plans lists the contract table in the list envelope', async () => {
    const page = expectStatus<Page<PlanOut>>(
      await call(t, '/subscriptions/plans', { token: owner.tokens.access_token }),
      200,
    );
    assert.deepEqual(
      page.results.map((p) => p.id),
      ['free', 'pro', 'business', 'enterprise'],
    );
    assert.deepEqual(page.pagination, { total: 4, limit: 50, offset: 0, has_more: false });
    const byId = new Map(page.results.map((p) => [p.id, p]));
    assert.deepEqual(
      ['free', 'pro', 'business'].map((id) => byId.get(id)?.limits),
      [
        { api_requests_per_hour: 100, events_per_month: 10_000, geofences: 50, webhooks: 5, devices: 100 },
        {
          api_requests_per_hour: 1_000,
          events_per_month: 250_000,
          geofences: 5_000,
          webhooks: 50,
          devices: 10_000,
        },
        {
          api_requests_per_hour: 5_000,
          events_per_month: 2_500_000,
          geofences: 100_000,
          webhooks: 500,
          devices: 250_000,
        },
      ],
    );
    assert.equal(byId.get('enterprise')?.limits.api_requests_per_hour, null, 'custom = no fixed limit');
    assert.deepEqual(
      page.results.map((p) => [p.id, p.self_service]),
      [
        ['free', true],
        ['pro', true],
        ['business', true],
        ['enterprise', false],
      ],
    );
  });

  test('PUT /subscriptions/current cannot choose enterprise: 403 asking to contact us', async () => {
    const user = await signUp(t, 'plans-enterprise');
    const token = user.tokens.access_token;
    const refused = expectError(
      await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'enterprise' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    assert.match(String(refused.detail), /contact /);
    // Nothing changed: still the default plan and its limits.
    const current = expectStatus<SubscriptionOut>(await call(t, '/subscriptions/current', { token }), 200);
    assert.equal(current.plan, 'free');
    assert.equal(current.limits.api_requests_per_hour, 100);
    // An API key with subscriptions:write is refused the same way.
    const writer = await createApiKey(t, token, ['subscriptions:write']);
    expectError(
      await call(t, '/subscriptions/current', {
        method: 'PUT',
        apiKey: writer.key,
        body: { plan: 'enterprise' },
      }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
  });

  test('a workspace without a subscription is on DEFAULT_PLAN for the calendar month', async () => {
    t.clock.set('2026-03-10T12:00:00.000Z');
    const current = expectStatus<SubscriptionOut>(
      await call(t, '/subscriptions/current', { token: owner.tokens.access_token }),
      200,
    );
    assert.equal(current.plan, 'free');
    assert.equal(current.status, 'active');
    assert.equal(current.current_period_start, '2026-03-01T00:00:00.000Z');
    assert.equal(current.current_period_end, '2026-04-01T00:00:00.000Z');
  });

  test('PUT /subscriptions/current: owners and admins only, known plans only, at once', async () => {
    const token = owner.tokens.access_token;
    expectError(
      await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'platinum' } }),
      422,
      'VALIDATION_ERROR',
    );
    expectError(
      await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'pro', extra: 1 } }),
      422,
      'VALIDATION_ERROR',
    );
    // A member of the workspace may read but not change it.
    const member = await signUp(t, 'plans-member');
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token,
        body: { email: member.email, role: 'member' },
      }),
      201,
    );
    const memberTokens = await login(t, member.email, member.password, { workspaceId: owner.workspace.id });
    expectStatus(await call(t, '/subscriptions/current', { token: memberTokens.access_token }), 200);
    expectError(
      await call(t, '/subscriptions/current', {
        method: 'PUT',
        token: memberTokens.access_token,
        body: { plan: 'business' },
      }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    // An API key needs subscriptions:write.
    const reader = await createApiKey(t, token, ['subscriptions:read']);
    expectError(
      await call(t, '/subscriptions/current', { method: 'PUT', apiKey: reader.key, body: { plan: 'pro' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    const changed = expectStatus<SubscriptionOut>(
      await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'business' } }),
      200,
    );
    assert.equal(changed.plan, 'business');
    assert.equal(changed.limits.geofences, 100_000);
    const read = expectStatus<SubscriptionOut>(
      await call(t, '/subscriptions/current', { apiKey: reader.key }),
      200,
    );
    assert.equal(read.plan, 'business');
  });
});

describe('PLANS_FILE', () => {
  test('replaces the table; DEFAULT_PLAN picks the plan of new workspaces', async () => {
    const file = plansFile([
      plan('starter', { api_requests_per_hour: 7 }),
      { ...plan('scale', { geofences: null }), overage_cents_per_1000_events: 12 },
    ]);
    const t = await startIdentityApp({ env: { PLANS_FILE: file, DEFAULT_PLAN: 'starter' } });
    try {
      const user = await signUp(t, 'plans-file');
      const page = expectStatus<Page<PlanOut>>(
        await call(t, '/subscriptions/plans', { token: user.tokens.access_token }),
        200,
      );
      assert.deepEqual(
        page.results.map((p) => p.id),
        ['starter', 'scale'],
      );
      const current = expectStatus<SubscriptionOut>(
        await call(t, '/subscriptions/current', { token: user.tokens.access_token }),
        200,
      );
      assert.equal(current.plan, 'starter');
      assert.equal(current.limits.api_requests_per_hour, 7);
    } finally {
      await t.close();
    }
  });

  test('a plan may be closed to self-service; GET shows it and PUT refuses it', async () => {
    const file = plansFile([
      plan('starter', {}),
      plan('partner', { geofences: null }, { self_service: false }),
      { ...plan('enterprise', {}), self_service: undefined },
    ]);
    const t = await startIdentityApp({ env: { PLANS_FILE: file, DEFAULT_PLAN: 'starter' } });
    try {
      const user = await signUp(t, 'plans-closed');
      const token = user.tokens.access_token;
      const page = expectStatus<Page<PlanOut>>(await call(t, '/subscriptions/plans', { token }), 200);
      assert.deepEqual(
        page.results.map((p) => [p.id, p.self_service]),
        [
          ['starter', true],
          ['partner', false],
          ['enterprise', false],
        ],
        'absent: open, but never for enterprise',
      );
      for (const closed of ['partner', 'enterprise']) {
        const refused = expectError(
          await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: closed } }),
          403,
          'INSUFFICIENT_PERMISSIONS',
        );
        assert.match(String(refused.detail), /contact /, closed);
      }
      // An operator can still assign it; the workspace can then move back to an open plan itself.
      await t.deps.billing.subscriptions.change(user.workspace.id, 'partner');
      const current = expectStatus<SubscriptionOut>(await call(t, '/subscriptions/current', { token }), 200);
      assert.equal(current.plan, 'partner');
      expectStatus(
        await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'starter' } }),
        200,
      );
    } finally {
      await t.close();
    }
  });

  test('self_service is validated: a boolean, and never true for enterprise', () => {
    const problems = (plans: unknown): string => {
      try {
        loadConfig({ PLANS_FILE: plansFile(plans) });
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.problems.join('\n');
      }
      assert.fail('the file was accepted');
    };
    assert.match(
      problems([plan('free', {}, { self_service: 'yes' as never })]),
      /\[0\]\.self_service must be/,
    );
    assert.match(
      problems([plan('free', {}), plan('enterprise', {}, { self_service: true })]),
      /\[1\]\.self_service cannot be true/,
    );
  });

  test('a bad file is a configuration error naming each problem', () => {
    const file = plansFile([
      { id: 'Bad Id', name: '', price_cents_per_month: -1, limits: { geofences: 'many' } },
    ]);
    assert.throws(
      () => loadConfig({ PLANS_FILE: file }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        const text = error.problems.join('\n');
        for (const needle of ['[0].id', '[0].name', '[0].price_cents_per_month', '[0].limits.geofences']) {
          assert.ok(text.includes(needle), `${needle} in ${text}`);
        }
        return true;
      },
    );
    assert.throws(() => loadConfig({ PLANS_FILE: '/nonexistent/plans.json' }), ConfigError);
    assert.throws(() => loadConfig({ DEFAULT_PLAN: 'gold' }), /DEFAULT_PLAN "gold"/);
    // The defaults load, and the shipped table passes its own validation.
    assert.deepEqual(loadConfig({}).plans, DEFAULT_PLANS);
    assert.deepEqual(loadConfig({ PLANS_FILE: plansFile(DEFAULT_PLANS) }).plans, DEFAULT_PLANS);
  });

  test('the server refuses to start on a bad file with exit code 2', () => {
    const file = plansFile({ not: 'an array' });
    const result = spawnSync(process.execPath, ['src/server.ts'], {
      env: { ...process.env, PLANS_FILE: file, PORT: '0', DATA_DIR: os.tmpdir() },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /PLANS_FILE .*must be a non-empty JSON array/);
  });
});

describe('cli set-plan', () => {
  test('switches a workspace to enterprise with custom limits', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-set-plan-'));
    const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}` };
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['src/cli.ts', ...args], { env, encoding: 'utf8', timeout: 30_000 });
    try {
      const created = cli(
        'create-user',
        '--email',
        'ops@example.com',
        '--password',
        'a long password',
        '--workspace',
        'Ops',
      );
      assert.equal(created.status, 0, created.stderr);
      const workspaceId = (JSON.parse(created.stdout) as { workspace: { id: string } }).workspace.id;
      const set = cli(
        'set-plan',
        '--workspace',
        workspaceId,
        '--plan',
        'enterprise',
        '--api-requests-per-hour',
        '20000',
        '--events-per-month',
        '5000000',
        '--price-cents',
        '150000',
      );
      assert.equal(set.status, 0, set.stderr);
      const out = JSON.parse(set.stdout) as SubscriptionOut & { price_cents_per_month: number };
      assert.equal(out.plan, 'enterprise');
      assert.equal(out.limits.api_requests_per_hour, 20_000);
      assert.equal(out.limits.events_per_month, 5_000_000);
      assert.equal(out.limits.geofences, null);
      assert.equal(out.price_cents_per_month, 150_000);
      const bad = cli('set-plan', '--workspace', workspaceId, '--plan', 'enterprise', '--devices', 'lots');
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /--devices must be an integer/);
      const unknown = cli('set-plan', '--workspace', workspaceId, '--plan', 'gold');
      assert.equal(unknown.status, 1);
      assert.match(unknown.stderr, /Unknown plan "gold"/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
