/**
 * One event and what it caused (contract §4.3, §5, §6), as the event page reads it: GET
 * /events/{id}/payload (the body its receivers got), its deliveries (GET /webhooks/deliveries?event_id=:
 * the subscription's and each workflow `webhook` action's) and GET /events/{id}/workflow-runs. Two
 * devices entering one geofence in the same second make two events with one seed §6.3 `event_id`:
 * each event has its own deliveries and runs only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { circle, createGeofence } from '../geofences/helpers.ts';
import { call, createApiKey, expectError, expectStatus, type Page } from '../helpers/identity.ts';
import { createWebhook, Receiver, type WebhookOut } from '../webhooks/delivery-helpers.ts';
import {
  createWorkflow,
  listRuns,
  type RunOut,
  runDue,
  type WorkflowOut,
  workflowFixture,
} from '../workflows/workflow-helpers.ts';

interface DeliveryOut {
  id: string;
  webhook_id: string | null;
  origin: string;
  event_record_id: string | null;
  event_id: string;
  status: string;
}

interface EventRunOut {
  id: string;
  workflow_id: string;
  workflow_name: string;
  status: string;
  created_at: string;
  finished_at: string | null;
}

describe('an event, its payload, its deliveries and its workflow runs', () => {
  const fixture = workflowFixture();
  let receiver: Receiver;
  let webhook: WebhookOut;
  /** Two workflows on the same trigger: every event starts one run of each. */
  let workflows: WorkflowOut[];
  /** The two events (device one's, device two's), one `event_id`. */
  let events: Array<{ id: string; event_id: string; device_id: string }>;

  const get = async <T>(path: string, query?: Record<string, string>): Promise<T> =>
    expectStatus<T>(
      await call(fixture.h.t, path, { token: fixture.h.token, ...(query ? { query } : {}) }),
      200,
      path,
    );

  before(async () => {
    const { h } = fixture;
    receiver = await Receiver.start(() => h.t.clock.now().getTime());
    const geofence = await createGeofence(
      h.t,
      { token: h.token },
      { name: 'Depot', geometry: circle(13.4, 52.5, 200), metadata: { site: 'north' } },
    );
    webhook = await createWebhook(h, { name: 'Dispatch', url: receiver.url, events: ['geofence.enter'] });
    // Named by the actions too: the webhook gets one delivery from each (contract §6).
    workflows = [];
    for (const name of ['Arrivals', 'Yard log']) {
      workflows.push(
        await createWorkflow(h, {
          name,
          trigger: { geofence_id: geofence.id, event_types: ['enter'] },
          actions: [{ type: 'webhook', config: { webhook_id: webhook.id } }],
        }),
      );
    }
    const timestamp = new Date(h.t.clock.now().getTime() - 60_000).toISOString();
    events = [];
    for (const name of ['truck one', 'truck two']) {
      const device = expectStatus<{ id: string }>(
        await call(h.t, '/devices', { token: h.token, body: { name, user_id: name } }),
        201,
      );
      const stored = expectStatus<{ events: Array<{ id: string; event_id: string; device_id: string }> }>(
        await call(h.t, `/devices/${device.id}/locations`, {
          token: h.token,
          body: { coordinates: [13.4, 52.5], timestamp, metadata: { driver: name } },
        }),
        201,
      );
      assert.equal(stored.events.length, 1, `${name} entered`);
      events.push(stored.events[0] as (typeof events)[number]);
    }
    assert.equal(events[0]?.event_id, events[1]?.event_id, 'one seed §6.3 event_id for both');
    await runDue(h);
    assert.equal(receiver.requests.length, 6, 'three deliveries per event');
  });
  after(async () => receiver?.close());

  test('GET /events/{id}/payload is the body its deliveries sent, less their own id', async () => {
    for (const [i, event] of events.entries()) {
      const payload = await get<Record<string, unknown>>(`/events/${event.id}/payload`);
      const sent = receiver.requests
        .map((r) => JSON.parse(r.body.toString('utf8')) as { id: string; data: { device_id: string } })
        .filter((body) => body.data.device_id === event.device_id);
      assert.equal(sent.length, 3, 'the subscription and two workflow deliveries');
      for (const { id, ...body } of sent) {
        assert.ok(id, 'every delivery has its own id');
        assert.deepEqual(payload, body);
      }
      assert.deepEqual((payload.data as { metadata: unknown }).metadata, {
        geofence_metadata: { site: 'north' },
        event_metadata: { driver: i === 0 ? 'truck one' : 'truck two' },
      });
    }
  });

  test('each event has its own deliveries, of every origin', async () => {
    const seen = new Set<string>();
    for (const event of events) {
      const page = await get<Page<DeliveryOut>>('/webhooks/deliveries', { event_id: event.id });
      assert.equal(page.pagination.total, 3);
      assert.deepEqual(page.results.map((d) => d.origin).sort(), ['subscription', 'workflow', 'workflow']);
      for (const d of page.results) {
        assert.equal(seen.has(d.id), false, 'no delivery belongs to both events');
        seen.add(d.id);
        assert.equal(d.webhook_id, webhook.id);
        assert.equal(d.event_record_id, event.id);
        assert.equal(d.event_id, event.event_id);
        assert.equal(d.status, 'success');
      }
    }
    assert.equal(seen.size, 6);
  });

  test('each event lists the runs it started, one per workflow, with their records', async () => {
    const all = new Map<string, RunOut>();
    for (const w of workflows) for (const r of (await listRuns(fixture.h, w.id)).results) all.set(r.id, r);
    assert.equal(all.size, 4);
    const found = new Set<string>();
    for (const event of events) {
      const page = await get<Page<EventRunOut>>(`/events/${event.id}/workflow-runs`);
      assert.deepEqual(page.pagination, { total: 2, limit: 50, offset: 0, has_more: false });
      assert.deepEqual(page.results.map((r) => r.workflow_name).sort(), ['Arrivals', 'Yard log']);
      for (const run of page.results) {
        const listed = all.get(run.id);
        assert.ok(listed, 'a run of one of the workflows');
        assert.equal(found.has(run.id), false, 'no run belongs to both events');
        found.add(run.id);
        assert.deepEqual(run, {
          id: listed.id,
          workflow_id: listed.workflow_id,
          workflow_name: workflows.find((w) => w.id === listed.workflow_id)?.name,
          status: 'success',
          created_at: listed.created_at,
          finished_at: listed.finished_at,
        });
      }
      const order = page.results.map((r) => `${r.created_at} ${r.id}`);
      assert.deepEqual(order, [...order].sort().reverse(), 'newest first');
      const first = await get<Page<EventRunOut>>(`/events/${event.id}/workflow-runs`, { limit: '1' });
      assert.deepEqual(first.pagination, { total: 2, limit: 1, offset: 0, has_more: true });
      const second = await get<Page<EventRunOut>>(`/events/${event.id}/workflow-runs`, {
        limit: '1',
        offset: '1',
      });
      assert.deepEqual([...first.results, ...second.results], page.results);
    }
  });

  test('a test run belongs to no event; a renamed workflow is listed by its name now', async () => {
    const { h } = fixture;
    const [arrivals] = workflows;
    assert.ok(arrivals);
    expectStatus(await call(h.t, `/workflows/${arrivals.id}/test`, { token: h.token, method: 'POST' }), 202);
    expectStatus(
      await call(h.t, `/workflows/${arrivals.id}`, {
        token: h.token,
        method: 'PATCH',
        body: { name: 'Depot arrivals' },
      }),
      200,
    );
    for (const event of events) {
      const page = await get<Page<EventRunOut>>(`/events/${event.id}/workflow-runs`);
      assert.deepEqual(page.results.map((r) => r.workflow_name).sort(), ['Depot arrivals', 'Yard log']);
    }
  });

  test('an unknown event is 404; the runs need events:read and workflows:read', async () => {
    const { h } = fixture;
    for (const path of ['/events/nope', '/events/nope/payload', '/events/nope/workflow-runs']) {
      expectError(await call(h.t, path, { token: h.token }), 404, 'NOT_FOUND', path);
    }
    const id = events[0]?.id ?? '';
    const path = `/events/${id}/workflow-runs`;
    const eventsOnly = await createApiKey(h.t, h.token, ['events:read']);
    expectStatus(await call(h.t, `/events/${id}/payload`, { apiKey: eventsOnly.key }), 200);
    expectError(await call(h.t, path, { apiKey: eventsOnly.key }), 403, 'INSUFFICIENT_PERMISSIONS');
    const workflowsOnly = await createApiKey(h.t, h.token, ['workflows:read']);
    expectError(await call(h.t, path, { apiKey: workflowsOnly.key }), 403, 'INSUFFICIENT_PERMISSIONS');
    const both = await createApiKey(h.t, h.token, ['events:read', 'workflows:read']);
    expectStatus(await call(h.t, path, { apiKey: both.key }), 200);
  });
});
