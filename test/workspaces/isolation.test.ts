/**
 * Tenant isolation, table-driven from the OpenAPI document (contract §1: another workspace's
 * resource is 404, never 403). Every /api/v1 operation with a `{…}` path parameter is called by
 * workspace A's owner (and A's all-scopes API key where keys are allowed) with workspace B's ids.
 * A path parameter this file does not know fails the test for that route, so a new route must
 * bring its own case here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  type ApiKeyOut,
  type ApiOperation,
  apiOperations,
  type CreatedApiKey,
  call,
  callOperation,
  createApiKey,
  expectError,
  expectStatus,
  fetchOpenApi,
  type OpenApiDocument,
  type Page,
  type RegisteredUser,
  registerUser,
  type SignedUpUser,
  signUp,
  startIdentityApp,
  type WorkspaceOut,
} from '../helpers/identity.ts';

interface MemberOut {
  user_id: string;
  role: string;
}
interface InvitationOut {
  id: string;
  expires_at: string;
}
interface NotificationOut {
  id: string;
  read: boolean;
}
interface GeofenceOut {
  id: string;
  name: string;
  enabled: boolean;
  geometry: unknown;
}
interface BatchOut {
  created: Array<GeofenceOut & { workspace_id: string }>;
  updated: Array<GeofenceOut & { workspace_id: string }>;
  rejected: unknown[];
}

const DELETE_LAST = (a: ApiOperation, b: ApiOperation) =>
  Number(a.method === 'DELETE') - Number(b.method === 'DELETE') || a.label.localeCompare(b.label);

describe('tenant isolation: every route with an id answers 404 for another workspace’s ids', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  let a: SignedUpUser;
  let aKey: CreatedApiKey;
  let b: SignedUpUser;
  let bMember: RegisteredUser;
  let bKey: CreatedApiKey;
  let bNotification: NotificationOut;
  let bInvitation: InvitationOut;
  let bGeofence: GeofenceOut;
  /** B's device with one location (inside B's geofence: one event) and an active session. */
  let bDevice: { id: string; name: string };
  let bDeviceTokenId: string;
  let bSession: { id: string; status: string };
  let bEvent: { id: string };
  /** Path-parameter name → an id that exists in workspace B (or belongs to B's people). */
  let bIds: Record<string, string>;
  /** A's own workflow: B's run must not be reachable under it either. */
  let aWorkflowId: string;

  before(async () => {
    t = await startIdentityApp();
    doc = await fetchOpenApi(t);
    a = await signUp(t, 'tenant-a', { workspace_name: 'Tenant A' });
    aKey = await createApiKey(t, a.tokens.access_token, ['*'], { name: 'A all scopes' });
    b = await signUp(t, 'tenant-b', { workspace_name: 'Tenant B' });
    bMember = await registerUser(t);
    expectStatus(
      await call(t, `/workspaces/${b.workspace.id}/members`, {
        token: b.tokens.access_token,
        body: { email: bMember.email, role: 'member' },
      }),
      201,
      'B adds a member',
    );
    bInvitation = expectStatus<InvitationOut>(
      await call(t, `/workspaces/${b.workspace.id}/members`, {
        token: b.tokens.access_token,
        body: { email: 'not-yet-a-user@example.com', role: 'member' },
      }),
      202,
      'B invites someone without an account',
    );
    bKey = await createApiKey(t, b.tokens.access_token, ['events:read'], { name: 'B key' });
    const notifications = expectStatus<Page<NotificationOut>>(
      await call(t, '/account/notifications', { token: b.tokens.access_token }),
      200,
    );
    const first = notifications.results[0];
    assert.ok(first, 'creating B’s key gave B’s owner a notification');
    bNotification = first;
    bGeofence = expectStatus<GeofenceOut>(
      await call(t, '/geofences', {
        token: b.tokens.access_token,
        body: {
          name: 'B fence',
          external_id: 'shared-ref',
          geometry: { type: 'Circle', coordinates: [13.4, 52.5], radius: 500 },
        },
      }),
      201,
      'B creates a geofence',
    );
    const bToken = { token: b.tokens.access_token };
    bDevice = expectStatus(
      await call(t, '/devices', { ...bToken, body: { name: 'B device' } }),
      201,
      'B creates a device',
    );
    const located = expectStatus<{ events: Array<{ id: string }> }>(
      await call(t, `/devices/${bDevice.id}/locations`, { ...bToken, body: { coordinates: [13.4, 52.5] } }),
      201,
      'B records a location',
    );
    assert.ok(located.events[0], 'B’s location entered B’s geofence');
    bEvent = located.events[0];
    bSession = expectStatus(
      await call(t, `/devices/${bDevice.id}/sessions`, { ...bToken, body: {} }),
      201,
      'B starts a session',
    );
    const bDeviceToken = expectStatus<{ id: string }>(
      await call(t, `/devices/${bDevice.id}/tokens`, { ...bToken, body: { name: 'B phone' } }),
      201,
      'B makes a device token',
    );
    bDeviceTokenId = bDeviceToken.id;
    // A webhook (its URL is never called: the test app runs no delivery worker), a test delivery
    // and a dead-letter entry for that delivery, written directly (reaching one through the API
    // takes the whole retry schedule, which test/webhooks/delivery-schedule.test.ts covers).
    const bWebhook = expectStatus<{ id: string; name: string; url: string }>(
      await call(t, '/webhooks', { ...bToken, body: { name: 'B hook', url: 'https://example.com/hook' } }),
      201,
      'B creates a webhook',
    );
    const bDelivery = expectStatus<{ delivery_id: string }>(
      await call(t, `/webhooks/${bWebhook.id}/test`, { ...bToken, method: 'POST' }),
      202,
      'B sends a test delivery',
    );
    const bDeadLetterId = crypto.randomUUID();
    const now = t.clock.now();
    await t.deps.database.db
      .insertInto('webhook_dead_letters')
      .values({
        id: bDeadLetterId,
        workspace_id: b.workspace.id,
        delivery_id: bDelivery.delivery_id,
        webhook_id: bWebhook.id,
        webhook_name: bWebhook.name,
        webhook_url: bWebhook.url,
        event_type: 'webhook.test',
        event_id: 'webhook_test_0',
        error_message: 'HTTP 500',
        retry_count: 7,
        last_attempt_at: now,
        queued_at: now,
        requeued: false,
        requeued_at: null,
      })
      .execute();
    // A workflow on B's geofence and a test run of it (pending: no worker runs its action).
    const bWorkflow = expectStatus<{ id: string }>(
      await call(t, '/workflows', {
        ...bToken,
        body: {
          name: 'B flow',
          trigger: { geofence_id: bGeofence.id, event_types: ['enter'] },
          actions: [{ type: 'webhook', config: { webhook_id: bWebhook.id } }],
        },
      }),
      201,
      'B creates a workflow',
    );
    const bRun = expectStatus<{ run_id: string }>(
      await call(t, `/workflows/${bWorkflow.id}/test`, { ...bToken, method: 'POST' }),
      202,
      'B test-runs its workflow',
    );
    // A "retry all matching" job of B's (matching nothing: done at once, B's entry stays as it is).
    const bRetryJob = expectStatus<{ job_id: string }>(
      await call(t, '/webhooks/dlq/retry-matching', {
        ...bToken,
        body: { error_contains: 'matches no entry' },
      }),
      202,
      'B starts a retry job',
    );
    const aToken = { token: a.tokens.access_token };
    const aGeofence = expectStatus<GeofenceOut>(
      await call(t, '/geofences', {
        ...aToken,
        body: { name: 'A fence', geometry: { type: 'Circle', coordinates: [2.35, 48.85], radius: 500 } },
      }),
      201,
      'A creates a geofence',
    );
    aWorkflowId = expectStatus<{ id: string }>(
      await call(t, '/workflows', {
        ...aToken,
        body: {
          name: 'A flow',
          trigger: { geofence_id: aGeofence.id, event_types: ['exit'] },
          actions: [{ type: 'email', config: { to: ['ops@example.com'] } }],
        },
      }),
      201,
      'A creates a workflow',
    ).id;
    bIds = {
      webhook_id: bWebhook.id,
      delivery_id: bDelivery.delivery_id,
      dlq_id: bDeadLetterId,
      workspace_id: b.workspace.id,
      user_id: bMember.user.id,
      api_key_id: bKey.id,
      notification_id: bNotification.id,
      invitation_id: bInvitation.id,
      geofence_id: bGeofence.id,
      device_id: bDevice.id,
      token_id: bDeviceTokenId,
      session_id: bSession.id,
      event_id: bEvent.id,
      workflow_id: bWorkflow.id,
      run_id: bRun.run_id,
      job_id: bRetryJob.job_id,
    };
  });
  after(async () => t?.close());

  test('the B-side ids are real: B’s owner reaches each of them', async () => {
    const token = b.tokens.access_token;
    expectStatus(await call(t, `/workspaces/${b.workspace.id}`, { token }), 200, 'B workspace');
    const members = expectStatus<Page<MemberOut>>(
      await call(t, `/workspaces/${b.workspace.id}/members`, { token }),
      200,
    );
    assert.ok(
      members.results.some((m) => m.user_id === bMember.user.id),
      'B member listed',
    );
    const keys = expectStatus<Page<ApiKeyOut>>(await call(t, '/account/api-keys', { token }), 200);
    assert.ok(
      keys.results.some((k) => k.id === bKey.id),
      'B key listed',
    );
  });

  test('A’s owner and A’s * key get 404 NOT_FOUND on every route given B’s ids', async (ctx) => {
    const operations = apiOperations(doc)
      .filter((op) => op.pathParams.length > 0)
      .sort(DELETE_LAST);
    const labels = operations.map((op) => op.label);
    for (const known of [
      'GET /api/v1/workspaces/{workspace_id}',
      'PATCH /api/v1/workspaces/{workspace_id}/members/{user_id}',
      'DELETE /api/v1/account/api-keys/{api_key_id}',
      'POST /api/v1/account/notifications/{notification_id}/read',
      'GET /api/v1/geofences/{geofence_id}',
      'PATCH /api/v1/geofences/{geofence_id}',
      'DELETE /api/v1/geofences/{geofence_id}',
      'POST /api/v1/webhooks/deliveries/{delivery_id}/retry',
      'POST /api/v1/webhooks/dlq/{dlq_id}/retry',
    ]) {
      assert.ok(labels.includes(known), `the document lists ${known}`);
    }

    for (const op of operations) {
      await ctx.test(op.label, async () => {
        const declared = (op.operation.parameters ?? [])
          .filter((p) => p.in === 'path')
          .map((p) => p.name)
          .sort();
        assert.deepEqual(declared, [...op.pathParams].sort(), `${op.label}: path parameters are documented`);
        const unknown = op.pathParams.filter((name) => !(name in bIds));
        if (unknown.length > 0) {
          assert.fail(
            `${op.label}: no workspace-B id for path parameter(s) ${unknown.map((n) => `{${n}}`).join(', ')}; ` +
              'create such a resource in B in this test’s set-up and add it to bIds',
          );
        }
        const variants: Array<{ name: string; values: Record<string, string> }> = [
          { name: 'all ids from B', values: bIds },
        ];
        if (op.pathParams.includes('workspace_id') && op.pathParams.length > 1) {
          variants.push({
            name: 'A’s workspace, B’s other ids',
            values: { ...bIds, workspace_id: a.workspace.id },
          });
        }
        if (op.pathParams.includes('run_id')) {
          variants.push({ name: 'A’s workflow, B’s run', values: { ...bIds, workflow_id: aWorkflowId } });
        }
        const callers: Array<{ name: string; credentials: { token?: string; apiKey?: string } }> = [
          { name: 'A owner (JWT)', credentials: { token: a.tokens.access_token } },
        ];
        if (op.operation['x-auth-via'] !== 'user') {
          callers.push({ name: 'A’s * API key', credentials: { apiKey: aKey.key } });
        }
        for (const variant of variants) {
          for (const caller of callers) {
            const res = await callOperation(t, doc, op, variant.values, caller.credentials);
            expectError(res, 404, 'NOT_FOUND', `${op.label} as ${caller.name} with ${variant.name}`);
          }
        }
      });
    }
  });

  test('batch and export (no id in their path) act on the caller’s workspace only', async () => {
    // A's batch names B's external_id: it creates (then updates) A's own geofence, never B's.
    const item = (name: string) => ({
      name,
      external_id: 'shared-ref',
      geometry: { type: 'Circle', coordinates: [2.35, 48.85], radius: 300 },
    });
    const first = expectStatus<BatchOut>(
      await call(t, '/geofences/batch', {
        token: a.tokens.access_token,
        body: { geofences: [item('A one')] },
      }),
      200,
      'A’s batch (JWT)',
    );
    assert.equal(first.created.length, 1, 'created in A');
    assert.equal(first.created[0]?.workspace_id, a.workspace.id);
    const second = expectStatus<BatchOut>(
      await call(t, '/geofences/batch', {
        apiKey: aKey.key,
        body: {
          type: 'FeatureCollection',
          features: [
            {
              type: 'Feature',
              geometry: item('x').geometry,
              properties: { name: 'A two', external_id: 'shared-ref' },
            },
          ],
        },
      }),
      200,
      'A’s batch (API key, GeoJSON)',
    );
    assert.deepEqual(
      second.updated.map((g) => [g.id, g.workspace_id, g.name]),
      [[first.created[0]?.id, a.workspace.id, 'A two']],
      'A’s own geofence updated',
    );
    for (const credentials of [{ token: a.tokens.access_token }, { apiKey: aKey.key }]) {
      const exported = expectStatus<{ features: Array<{ id: string }> }>(
        await call(t, '/geofences/export', credentials),
        200,
        'A’s export',
      );
      const ids = exported.features.map((f) => f.id);
      assert.ok(!ids.includes(bGeofence.id), 'B’s geofence is not in A’s export');
      assert.ok(ids.includes(first.created[0]?.id ?? ''), 'A’s is');
    }
    const bExport = expectStatus<{ features: Array<{ id: string; properties: { name: string } }> }>(
      await call(t, '/geofences/export', { token: b.tokens.access_token }),
      200,
      'B’s export',
    );
    assert.deepEqual(
      bExport.features.map((f) => [f.id, f.properties.name]),
      [[bGeofence.id, 'B fence']],
      'B’s export: its one geofence, as it was',
    );
  });

  test('the delivery log, the dead-letter list and bulk retry (no id in their path) see the caller’s workspace only', async () => {
    const bLogIds = async () =>
      expectStatus<Page<{ id: string }>>(
        await call(t, '/webhooks/deliveries', { token: b.tokens.access_token }),
        200,
      ).results.map((d) => d.id);
    const bLogBefore = await bLogIds();
    assert.ok(bLogBefore.includes(bIds.delivery_id ?? ''), 'B’s log lists B’s delivery');
    for (const credentials of [{ token: a.tokens.access_token }, { apiKey: aKey.key }]) {
      const all = expectStatus<Page<{ id: string }>>(
        await call(t, '/webhooks/deliveries', credentials),
        200,
        'A’s delivery log',
      );
      assert.ok(!all.results.some((d) => d.id === bIds.delivery_id), 'B’s delivery is not in A’s log');
      const named = expectStatus<Page<unknown>>(
        await call(t, '/webhooks/deliveries', {
          ...credentials,
          query: { webhook_id: bIds.webhook_id ?? '' },
        }),
        200,
      );
      assert.equal(named.pagination.total, 0, 'naming B’s webhook matches nothing');
      const dlq = expectStatus<Page<unknown>>(
        await call(t, '/webhooks/dlq', { ...credentials, query: { webhook_id: bIds.webhook_id ?? '' } }),
        200,
      );
      assert.equal(dlq.pagination.total, 0, 'nor in the dead-letter list');
      const bulk = expectStatus<{
        retried: unknown[];
        failed: Array<{ dlq_id: string; error_code: string }>;
      }>(
        await call(t, '/webhooks/dlq/retry', { ...credentials, body: { dlq_ids: [bIds.dlq_id] } }),
        202,
        'A’s bulk retry naming B’s entry',
      );
      assert.deepEqual(bulk.retried, []);
      assert.deepEqual(
        bulk.failed.map((f) => [f.dlq_id, f.error_code]),
        [[bIds.dlq_id, 'NOT_FOUND']],
      );
    }
    const bEntries = expectStatus<Page<{ dlq_id: string; requeued: boolean }>>(
      await call(t, '/webhooks/dlq', { token: b.tokens.access_token }),
      200,
    );
    assert.deepEqual(
      bEntries.results.map((e) => [e.dlq_id, e.requeued]),
      [[bIds.dlq_id, false]],
      'B’s entry was not retried',
    );
    assert.deepEqual(await bLogIds(), bLogBefore, 'B’s log: no retry added');
  });

  test('nothing of B changed after A’s attempts', async () => {
    const token = b.tokens.access_token;
    const workspace = expectStatus<WorkspaceOut>(
      await call(t, `/workspaces/${b.workspace.id}`, { token }),
      200,
    );
    assert.equal(workspace.name, 'Tenant B');
    assert.deepEqual(workspace.settings, b.workspace.settings);
    const members = expectStatus<Page<MemberOut>>(
      await call(t, `/workspaces/${b.workspace.id}/members`, { token }),
      200,
    );
    assert.deepEqual(
      members.results.map((m) => [m.user_id, m.role]).sort(),
      [
        [b.user.id, 'owner'],
        [bMember.user.id, 'member'],
      ].sort(),
    );
    const invitations = expectStatus<Page<InvitationOut>>(
      await call(t, `/workspaces/${b.workspace.id}/invitations`, { token }),
      200,
    );
    // The creation answer alone carries `accept_url` (the token is never readable again).
    const { accept_url: _shownOnce, ...asListed } = bInvitation as InvitationOut & { accept_url?: string };
    assert.deepEqual(invitations.results, [asListed], 'B’s invitation as sent, still pending');
    expectStatus(await call(t, '/auth/test-api-key', { apiKey: bKey.key }), 200, 'B key still valid');
    const notifications = expectStatus<Page<NotificationOut>>(
      await call(t, '/account/notifications', { token }),
      200,
    );
    assert.equal(notifications.results.find((n) => n.id === bNotification.id)?.read, false, 'still unread');
    assert.equal((await call(t, '/auth/me', { token })).statusCode, 200, 'B owner still signed in');
    const geofence = expectStatus<GeofenceOut>(await call(t, `/geofences/${bGeofence.id}`, { token }), 200);
    assert.deepEqual(geofence, bGeofence, 'B’s geofence unchanged');
    // A never sees B's geofence, neither listed nor by location.
    const aToken = a.tokens.access_token;
    const aList = expectStatus<Page<GeofenceOut>>(await call(t, '/geofences', { token: aToken }), 200);
    assert.ok(!aList.results.some((g) => g.id === bGeofence.id), 'not in A’s list');
    const aContains = expectStatus<Page<GeofenceOut>>(
      await call(t, '/geofences/contains', { apiKey: aKey.key, query: { lng: '13.4', lat: '52.5' } }),
      200,
    );
    assert.ok(!aContains.results.some((g) => g.id === bGeofence.id), 'not in A’s contains');
    const bContains = expectStatus<Page<GeofenceOut>>(
      await call(t, '/geofences/contains', { token, query: { lng: '13.4', lat: '52.5' } }),
      200,
    );
    assert.deepEqual(
      bContains.results.map((g) => g.id),
      [bGeofence.id],
      'still in B’s contains',
    );
    // B's device, its session and its event are untouched; A's location posts stored nothing.
    const device = expectStatus<{ name: string }>(await call(t, `/devices/${bDevice.id}`, { token }), 200);
    assert.equal(device.name, 'B device');
    const session = expectStatus<{ status: string }>(
      await call(t, `/sessions/${bSession.id}`, { token }),
      200,
    );
    assert.equal(session.status, 'active');
    expectStatus(await call(t, `/events/${bEvent.id}`, { token }), 200, 'B’s event');
    const locations = expectStatus<Page<unknown>>(
      await call(t, `/devices/${bDevice.id}/locations`, { token }),
      200,
    );
    assert.equal(locations.pagination.total, 1, 'only B’s own location');
    // The map snapshot of each workspace holds its own devices only (the live stream's isolation,
    // over a socket, is in test/stream/stream.test.ts).
    const positionIds = async (credentials: { token?: string; apiKey?: string }) =>
      expectStatus<{ features: Array<{ id: string }> }>(
        await call(t, '/devices/positions', credentials),
        200,
      ).features.map((f) => f.id);
    assert.deepEqual(await positionIds({ token }), [bDevice.id], 'B’s map shows B’s device');
    assert.ok(!(await positionIds({ apiKey: aKey.key })).includes(bDevice.id), 'A’s map does not');
    // B's workflow kept its name and state, and its one run.
    const workflow = expectStatus<{ name: string; enabled: boolean }>(
      await call(t, `/workflows/${bIds.workflow_id}`, { token }),
      200,
    );
    assert.deepEqual([workflow.name, workflow.enabled], ['B flow', true]);
    const runs = expectStatus<Page<{ id: string }>>(
      await call(t, `/workflows/${bIds.workflow_id}/runs`, { token }),
      200,
    );
    assert.deepEqual(
      runs.results.map((r) => r.id),
      [bIds.run_id],
    );
  });
});
