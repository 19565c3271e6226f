/**
 * Migration 0015 (ADR 020, "one job engine"): a database written by the previous release with jobs
 * queued, in flight and dead — raw inserts shaped exactly like that release's rows, where every
 * attempt of a workflow action was an attempt row — is migrated by starting the app on it; then
 * the new workers run it. No job is lost and none is repeated:
 *
 * | job | as the previous release left it | after the migration |
 * |---|---|---|
 * | S1 action | pending, due, never attempted | sent once at once |
 * | S2 action | pending, attempt 1 failed (a row), its retry due | sent once as attempt 2; both attempts shown |
 * | S3 action | leased by a worker that crashed, lease over | sent once at once |
 * | S4 action | leased, lease running until +45 s | not before +45 s, then once |
 * | S5 action | failed for good after 3 attempt rows, run failed | never sent; unchanged |
 * | S6 action | succeeded, its one attempt a row (old layout) | never sent; that one attempt, no double |
 * | S7 run | a `webhook` action pending (its delivery DW pending) beside a succeeded Slack action | DW sent once, the run ends |
 * | D1 delivery | pending, due, never attempted | sent once at once |
 * | D2 delivery | attempt 1 failed, attempt 2 leased by a crashed worker | sent once as attempt 2 |
 * | D3 delivery | dead: 3 failed attempts, a dead letter | never sent; unchanged |
 * | D4 delivery | leased, lease running until +30 s | not before +30 s, then once |
 * | D5 delivery | delivered | never sent again |
 * | D6 event | in the outbox, not dispatched yet | one delivery, sent once |
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import {
  createActionRuntime,
  createActionWorker,
  createDeliveryDispatcher,
  createDeliveryWorker,
  drainOutbox,
} from '../../src/engine.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { SecretBox } from '../../src/shared/encryption.ts';
import { sha256Hex } from '../../src/shared/random-secrets.ts';
import type { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import type { ActionWorker } from '../../src/workflows/action-worker.ts';
import type { ActionRuntime } from '../../src/workflows/actions/action.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { FakeChatServices, SLACK_PATH } from '../helpers/fake-chat-services.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { migrateUpTo } from '../helpers/previous-release.ts';
import {
  type DeadLetterOut,
  type AttemptOut as DeliveryAttemptOut,
  type DeliveryOut,
  Receiver,
} from '../webhooks/delivery-helpers.ts';
import type { AttemptOut, RunDetailOut } from '../workflows/workflow-helpers.ts';

const PREVIOUS = '0014_identity_lookups_by_user';
/** Attempts 1 and 2 are retried after 1 and 5 minutes; attempt 3 is the last. */
const RETRY_SCHEDULE = '1m,5m';
const MAX_ATTEMPTS = 3;
const NOW = Date.parse('2026-03-10T12:00:00.000Z');
/** `s` seconds from NOW. */
const at = (s: number): Date => new Date(NOW + s * 1000);
const isoAt = (s: number): string => at(s).toISOString();

const API_KEY = 'gf_live_queuedjobsmigration0123456789abcdefghijk';
const W = '01900000-0000-7000-8000-000000000001';
const OWNER = '01900000-0000-7000-8000-000000000002';
const KEY_ID = '01900000-0000-7000-8000-000000000003';
const GEOFENCE = '01900000-0000-7000-8000-000000000004';
const DEVICE = '01900000-0000-7000-8000-000000000005';
const WEBHOOK = '01900000-0000-7000-8000-000000000006';
const FLOW_SLACK = '01900000-0000-7000-8000-000000000007';
const FLOW_FORWARD = '01900000-0000-7000-8000-000000000008';
/** Ids of one kind of row: events 1, outbox 2, runs 3, actions 4, action attempts 5, deliveries 6, delivery attempts 7, dead letters 8. */
const idOf = (kind: number, n: number): string =>
  `01900000-0000-7000-8000-${kind}${String(n).padStart(11, '0')}`;

/** Worker ids of the previous release: one crashed, one still holding its lease. */
const CRASHED_ACTIONS = 'workflow-worker-01900000-0000-7000-8000-00000000dead';
const ALIVE_ACTIONS = 'workflow-worker-01900000-0000-7000-8000-0000000a11fe';
const CRASHED_DELIVERIES = 'worker-01900000-0000-7000-8000-00000000dead';
const ALIVE_DELIVERIES = 'worker-01900000-0000-7000-8000-0000000a11fe';

/** When the leases still running at start end (seconds from NOW). */
const S4_LEASE_END = 45;
const D4_LEASE_END = 30;

const SLACK_FAILURE = 'Slack answered HTTP 503 Service Unavailable';

interface OldAttempt {
  /** Seconds from NOW. */
  start: number;
  durationMs: number;
  status: number | null;
  error: string | null;
  excerpt: string | null;
}

const end = (a: OldAttempt): number => a.start + a.durationMs / 1000;

/** One geofence event; its `metadata.job` is the job's label, which every request carries. */
interface OldEvent {
  n: number;
  label: string;
  type: 'enter' | 'exit' | 'dwell';
  /** Seconds from NOW. */
  occurred: number;
  dispatched: boolean;
}

/** A Slack action of the "Notify" workflow, one per run: `n` numbers its event, run and action. */
interface OldAction {
  n: number;
  label: string;
  status: 'pending' | 'success' | 'failed';
  /** Every attempt recorded, each a row (the previous release's layout). */
  attempts: OldAttempt[];
  created: number;
  due: number;
  nextRetry: number | null;
  lease: string | null;
}

interface OldDelivery {
  n: number;
  label: string;
  status: 'pending' | 'success' | 'failed';
  attempts: OldAttempt[];
  created: number;
  due: number;
  nextRetry: number | null;
  lease: string | null;
  dead: boolean;
}

const failedSlack = (start: number): OldAttempt => ({
  start,
  durationMs: 250.5,
  status: 503,
  error: SLACK_FAILURE,
  excerpt: 'upstream unavailable',
});
const failedHook = (start: number): OldAttempt => ({
  start,
  durationMs: 120.25,
  status: 500,
  error: 'HTTP 500 Internal Server Error',
  excerpt: 'boom',
});

const S5_ATTEMPTS = [failedSlack(-3595), failedSlack(-3535), failedSlack(-3235)];
const S6_ATTEMPT: OldAttempt = { start: -7195, durationMs: 80.75, status: 200, error: null, excerpt: 'ok' };
const S7_SLACK_ATTEMPT: OldAttempt = {
  start: -54,
  durationMs: 60.5,
  status: 200,
  error: null,
  excerpt: 'ok',
};

const ACTIONS: OldAction[] = [
  {
    n: 1,
    label: 'S1',
    status: 'pending',
    attempts: [],
    created: -595,
    due: -595,
    nextRetry: null,
    lease: null,
  },
  {
    n: 2,
    label: 'S2',
    status: 'pending',
    attempts: [failedSlack(-200)],
    created: -895,
    // The retry, 1 minute after the failure ended.
    due: end(failedSlack(-200)) + 60,
    nextRetry: end(failedSlack(-200)) + 60,
    lease: null,
  },
  // Claimed at -300 (lease: timeout 30 s + margin 30 s); its worker crashed mid-attempt.
  {
    n: 3,
    label: 'S3',
    status: 'pending',
    attempts: [],
    created: -495,
    due: -240,
    nextRetry: null,
    lease: CRASHED_ACTIONS,
  },
  // Claimed at -15 by a worker whose lease still runs.
  {
    n: 4,
    label: 'S4',
    status: 'pending',
    attempts: [],
    created: -95,
    due: S4_LEASE_END,
    nextRetry: null,
    lease: ALIVE_ACTIONS,
  },
  {
    n: 5,
    label: 'S5',
    status: 'failed',
    attempts: S5_ATTEMPTS,
    created: -3595,
    due: end(S5_ATTEMPTS[2] as OldAttempt),
    nextRetry: null,
    lease: null,
  },
  {
    n: 6,
    label: 'S6',
    status: 'success',
    attempts: [S6_ATTEMPT],
    created: -7195,
    due: end(S6_ATTEMPT),
    nextRetry: null,
    lease: null,
  },
];

const D3_ATTEMPTS = [failedHook(-4995), failedHook(-4935), failedHook(-4635)];
const D5_ATTEMPT: OldAttempt = { start: -7995, durationMs: 40.5, status: 200, error: null, excerpt: 'ok' };

const DELIVERIES: OldDelivery[] = [
  // A new delivery's next_retry_at is its creation time (the previous release's `deliveryRow`).
  {
    n: 11,
    label: 'D1',
    status: 'pending',
    attempts: [],
    created: -235,
    due: -235,
    nextRetry: -235,
    lease: null,
    dead: false,
  },
  {
    n: 12,
    label: 'D2',
    status: 'pending',
    attempts: [{ ...failedHook(-995), status: 503, error: 'HTTP 503 Service Unavailable' }],
    created: -995,
    // Retry due at -935, claimed then (lease: timeout 10 s + margin 30 s); the worker crashed.
    due: -895,
    nextRetry: -935,
    lease: CRASHED_DELIVERIES,
    dead: false,
  },
  {
    n: 13,
    label: 'D3',
    status: 'failed',
    attempts: D3_ATTEMPTS,
    created: -4995,
    due: end(D3_ATTEMPTS[2] as OldAttempt),
    nextRetry: null,
    lease: null,
    dead: true,
  },
  // Claimed at -10 by a worker whose lease still runs.
  {
    n: 14,
    label: 'D4',
    status: 'pending',
    attempts: [],
    created: -25,
    due: D4_LEASE_END,
    nextRetry: -25,
    lease: ALIVE_DELIVERIES,
    dead: false,
  },
  {
    n: 15,
    label: 'D5',
    status: 'success',
    attempts: [D5_ATTEMPT],
    created: -7995,
    due: end(D5_ATTEMPT),
    nextRetry: null,
    lease: null,
    dead: false,
  },
];

/** S7: a run of the "Forward" workflow: a `webhook` action (delivery DW) and a Slack action. */
const S7 = { n: 7, runCreated: -55 };
const DW = { n: 17, label: 'S7' };
/** D6: an event the dispatcher had not reached yet. */
const D6 = { n: 16, label: 'D6' };

const EVENTS: OldEvent[] = [
  ...ACTIONS.map((a) => ({
    n: a.n,
    label: a.label,
    type: 'enter' as const,
    occurred: a.created - 5,
    dispatched: true,
  })),
  { n: S7.n, label: 'S7', type: 'dwell', occurred: S7.runCreated - 5, dispatched: true },
  ...DELIVERIES.map((d) => ({
    n: d.n,
    label: d.label,
    type: 'exit' as const,
    occurred: d.created - 5,
    dispatched: true,
  })),
  { n: D6.n, label: D6.label, type: 'exit', occurred: -20, dispatched: false },
];

const eventOf = (n: number): OldEvent => EVENTS.find((e) => e.n === n) as OldEvent;
const eventIdOf = (e: OldEvent): string =>
  `${GEOFENCE}_${e.type}_${Math.floor(at(e.occurred).getTime() / 1000)}`;
const POINT = { lng: 13.4, lat: 52.5 };

/** The seed §6.3 body the previous release stored for a delivery (and in a run's context). */
function payloadOf(e: OldEvent, id: string): string {
  return JSON.stringify({
    id,
    event: `geofence.${e.type}`,
    timestamp: isoAt(e.occurred),
    data: {
      event_id: eventIdOf(e),
      user_id: 'driver-7',
      device_id: DEVICE,
      geofence_id: GEOFENCE,
      geofence_name: 'Depot',
      event_type: e.type,
      point: { type: 'Point', coordinates: [POINT.lng, POINT.lat] },
      metadata: { geofence_metadata: { site: 'north' }, event_metadata: { job: e.label } },
    },
  });
}

/** The template context stored with a run (the previous release's `eventContext`). */
function contextOf(e: OldEvent, workflow: { id: string; name: string }, runId: string): string {
  return JSON.stringify({
    event: `geofence.${e.type}`,
    event_type: e.type,
    event_id: eventIdOf(e),
    occurred_at: isoAt(e.occurred),
    geofence: { id: GEOFENCE, name: 'Depot', metadata: { site: 'north' } },
    device: { id: DEVICE, name: 'truck', external_id: 'truck-1', user_id: 'driver-7', metadata: {} },
    point: { lat: POINT.lat, lng: POINT.lng },
    metadata: { job: e.label },
    workflow,
    payload_json: payloadOf(e, runId),
    test: false,
  });
}

const idempotencyKeyOf = (n: number): string => `0b0b0b0b-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The headers an attempt of the previous release recorded (migration 0011). */
function requestHeadersOf(e: OldEvent, n: number, attempt: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Service-Webhooks/1.0',
    'x-svc-signature': `t=${Math.floor(NOW / 1000)},v1=${'ab'.repeat(32)}`,
    'x-svc-event-id': eventIdOf(e),
    'x-idempotency-key': idempotencyKeyOf(n),
    'x-svc-attempt': String(attempt),
  };
}

interface Targets {
  slackUrl: string;
  slackOrigin: string;
  hookUrl: string;
}

/** The previous release's schema: every migration up to and including `PREVIOUS`. */
function migrateToPrevious(database: TestDatabase, targets: Targets): Promise<void> {
  return migrateUpTo(database, PREVIOUS, (db) => fill(db, targets));
}

/** Rows as the previous release wrote them. */
async function fill(db: Kysely<unknown>, targets: Targets): Promise<void> {
  const box = new SecretBox(TEST_ENCRYPTION_KEY);
  const created = at(-86_400);
  await sql`insert into workspaces (id, name, access_token_ttl_seconds, created_at, updated_at)
    values (${W}, ${'Old'}, ${900}, ${created}, ${created})`.execute(db);
  await sql`insert into users (id, email, name, password_hash, email_verified_at, created_at, updated_at)
    values (${OWNER}, ${'owner@example.com'}, ${'Owner'}, ${'$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA'},
      ${created}, ${created}, ${created})`.execute(db);
  await sql`insert into workspace_members (workspace_id, user_id, role, created_at)
    values (${W}, ${OWNER}, ${'owner'}, ${created})`.execute(db);
  await sql`insert into api_keys (id, workspace_id, created_by, name, prefix, key_hash, scopes, created_at)
    values (${KEY_ID}, ${W}, ${OWNER}, ${'old'}, ${API_KEY.slice(0, 12)}, ${sha256Hex(API_KEY)}, ${'["*"]'},
      ${created})`.execute(db);

  await sql`insert into geofences (id, workspace_id, name, description, external_id, geometry, metadata, enabled,
      bbox, vertex_count, version, created_at, updated_at, dwell_seconds, exit_buffer_m, max_accuracy_m)
    values (${GEOFENCE}, ${W}, ${'Depot'}, ${null}, ${null},
      ${JSON.stringify({ type: 'Circle', coordinates: [POINT.lng, POINT.lat], radius: 200 })},
      ${'{"site":"north"}'}, ${true}, ${JSON.stringify([13.397, 52.498, 13.403, 52.502])}, ${1}, ${1},
      ${created}, ${created}, ${60}, ${null}, ${null})`.execute(db);
  await sql`insert into geofence_versions (workspace_id, version) values (${W}, ${1})`.execute(db);
  await sql`insert into devices (id, workspace_id, name, external_id, user_id, metadata, inside_geofence_ids,
      active_session_id, created_at, updated_at)
    values (${DEVICE}, ${W}, ${'truck'}, ${'truck-1'}, ${'driver-7'}, ${'{}'}, ${'[]'}, ${null}, ${created},
      ${created})`.execute(db);

  await sql`insert into webhooks (id, workspace_id, name, url, method, content_type, timeout_seconds, headers,
      rate_limit_per_minute, events, geofence_ids, enabled, secret_sealed, created_at, updated_at)
    values (${WEBHOOK}, ${W}, ${'receiver'}, ${targets.hookUrl}, ${'POST'}, ${'application/json'}, ${10},
      ${'{}'}, ${60}, ${'["geofence.exit"]'}, ${null}, ${true},
      ${box.seal('whsec_oldreleasesecret0123456789abcdef')}, ${created}, ${created})`.execute(db);

  const slack = (message: string) =>
    JSON.stringify({
      type: 'slack',
      config: { webhook_url: `${targets.slackOrigin}/…3456`, message },
      sealed: { webhook_url: box.seal(targets.slackUrl) },
    });
  const slackAction = slack('job {{metadata.job}}');
  const forwardSlack = slack('job {{metadata.job}} slack');
  const forwardHook = JSON.stringify({ type: 'webhook', config: { webhook_id: WEBHOOK }, sealed: {} });
  for (const [id, name, types, actions] of [
    [FLOW_SLACK, 'Notify', '["enter"]', `[${slackAction}]`],
    [FLOW_FORWARD, 'Forward', '["dwell"]', `[${forwardHook},${forwardSlack}]`],
  ] as const) {
    await sql`insert into workflows (id, workspace_id, name, description, geofence_id, event_types, actions,
        enabled, created_at, updated_at, version)
      values (${id}, ${W}, ${name}, ${null}, ${GEOFENCE}, ${types}, ${actions}, ${true}, ${created}, ${created},
        ${1})`.execute(db);
  }

  for (const e of EVENTS) {
    await sql`insert into geofence_events (id, workspace_id, event_id, event_type, device_id, user_id, geofence_id,
        geofence_name, lng, lat, location_id, session_id, occurred_at, created_at, metadata)
      values (${idOf(1, e.n)}, ${W}, ${eventIdOf(e)}, ${e.type}, ${DEVICE}, ${'driver-7'}, ${GEOFENCE},
        ${'Depot'}, ${POINT.lng}, ${POINT.lat}, ${idOf(9, e.n)}, ${null}, ${at(e.occurred)},
        ${at(e.occurred + 1)},
        ${JSON.stringify({ geofence_metadata: { site: 'north' }, event_metadata: { job: e.label } })})`.execute(
      db,
    );
    await sql`insert into event_outbox (id, workspace_id, event_row_id, created_at, dispatched_at)
      values (${idOf(2, e.n)}, ${W}, ${idOf(1, e.n)}, ${at(e.occurred + 1)},
        ${e.dispatched ? at(e.occurred + 5) : null})`.execute(db);
  }

  const insertRun = async (
    n: number,
    workflow: { id: string; name: string },
    status: string,
    finished: number | null,
  ) => {
    const e = eventOf(n);
    await sql`insert into workflow_runs (id, workspace_id, workflow_id, origin, event_row_id, event_id, event_type,
        context, status, created_at, finished_at)
      values (${idOf(3, n)}, ${W}, ${workflow.id}, ${'event'}, ${idOf(1, n)}, ${eventIdOf(e)},
        ${`geofence.${e.type}`}, ${contextOf(e, workflow, idOf(3, n))}, ${status}, ${at(e.occurred + 5)},
        ${finished === null ? null : at(finished)})`.execute(db);
  };
  const insertActionRun = async (
    n: number,
    runN: number,
    workflowId: string,
    position: number,
    type: string,
    action: string,
    deliveryId: string | null,
    a: Pick<OldAction, 'status' | 'attempts' | 'created' | 'due' | 'nextRetry' | 'lease'>,
  ) => {
    const id = idOf(4, n);
    const last = a.attempts.at(-1);
    const finished = a.status === 'pending' || !last ? null : at(end(last));
    await sql`insert into workflow_action_runs (id, run_id, workspace_id, workflow_id, position, type, action,
        delivery_id, status, attempt_count, response_status_code, error_message, created_at, finished_at,
        next_retry_at, due_at, lease_owner)
      values (${id}, ${idOf(3, runN)}, ${W}, ${workflowId}, ${position}, ${type}, ${action}, ${deliveryId},
        ${a.status}, ${a.attempts.length}, ${last?.status ?? null}, ${last?.error ?? null}, ${at(a.created)},
        ${finished}, ${a.nextRetry === null ? null : at(a.nextRetry)}, ${at(a.due)}, ${a.lease})`.execute(db);
    for (const [i, t] of a.attempts.entries()) {
      await sql`insert into workflow_action_attempts (id, action_run_id, n, started_at, duration_ms,
          response_status_code, error_message, response_excerpt)
        values (${idOf(5, n * 10 + i + 1)}, ${id}, ${i + 1},
          ${at(t.start)}, ${t.durationMs}, ${t.status}, ${t.error}, ${t.excerpt})`.execute(db);
    }
  };

  for (const a of ACTIONS) {
    const last = a.attempts.at(-1);
    await insertRun(
      a.n,
      { id: FLOW_SLACK, name: 'Notify' },
      a.status,
      a.status === 'pending' || !last ? null : end(last),
    );
    await insertActionRun(a.n, a.n, FLOW_SLACK, 0, 'slack', slackAction, null, a);
  }

  const insertDelivery = async (
    n: number,
    origin: 'subscription' | 'workflow',
    eventN: number,
    d: Pick<OldDelivery, 'status' | 'attempts' | 'created' | 'due' | 'nextRetry' | 'lease' | 'dead'>,
  ) => {
    const e = eventOf(eventN);
    const last = d.attempts.at(-1);
    await sql`insert into webhook_deliveries (id, workspace_id, webhook_id, origin, event_row_id, geofence_id,
        event_type, event_id, idempotency_key, payload, url, method, status, attempt_count, response_status_code,
        response_time_ms, error_message, created_at, delivered_at, next_retry_at, due_at, lease_owner)
      values (${idOf(6, n)}, ${W}, ${WEBHOOK}, ${origin}, ${idOf(1, eventN)}, ${GEOFENCE}, ${`geofence.${e.type}`},
        ${eventIdOf(e)}, ${idempotencyKeyOf(n)}, ${payloadOf(e, idempotencyKeyOf(n))}, ${targets.hookUrl},
        ${'POST'}, ${d.status}, ${d.attempts.length}, ${last?.status ?? null}, ${last?.durationMs ?? null},
        ${last?.error ?? null}, ${at(d.created)}, ${d.status === 'success' && last ? at(end(last)) : null},
        ${d.nextRetry === null ? null : at(d.nextRetry)}, ${at(d.due)}, ${d.lease})`.execute(db);
    for (const [i, t] of d.attempts.entries()) {
      await sql`insert into webhook_delivery_attempts (id, delivery_id, n, started_at, duration_ms,
          response_status_code, error_message, response_body_excerpt, request_headers)
        values (${idOf(7, n * 10 + i + 1)}, ${idOf(6, n)}, ${i + 1}, ${at(t.start)}, ${t.durationMs}, ${t.status},
          ${t.error}, ${t.excerpt}, ${JSON.stringify(requestHeadersOf(e, n, i + 1))})`.execute(db);
    }
    if (d.dead && last) {
      await sql`insert into webhook_dead_letters (id, workspace_id, delivery_id, webhook_id, webhook_name,
          webhook_url, event_type, event_id, error_message, retry_count, last_attempt_at, queued_at, requeued,
          requeued_at)
        values (${idOf(8, n)}, ${W}, ${idOf(6, n)}, ${WEBHOOK}, ${'receiver'}, ${targets.hookUrl},
          ${`geofence.${e.type}`}, ${eventIdOf(e)}, ${last.error ?? 'Delivery failed'}, ${d.attempts.length - 1},
          ${at(last.start)}, ${at(end(last))}, ${false}, ${null})`.execute(db);
    }
  };
  for (const d of DELIVERIES) await insertDelivery(d.n, 'subscription', d.n, d);

  // S7: the `webhook` action's delivery is pending; the Slack action beside it succeeded.
  await insertDelivery(DW.n, 'workflow', S7.n, {
    status: 'pending',
    attempts: [],
    created: S7.runCreated,
    due: S7.runCreated,
    nextRetry: S7.runCreated,
    lease: null,
    dead: false,
  });
  await insertRun(S7.n, { id: FLOW_FORWARD, name: 'Forward' }, 'pending', null);
  await insertActionRun(71, S7.n, FLOW_FORWARD, 0, 'webhook', forwardHook, idOf(6, DW.n), {
    status: 'pending',
    attempts: [],
    created: S7.runCreated,
    due: S7.runCreated,
    nextRetry: null,
    lease: null,
  });
  await insertActionRun(72, S7.n, FLOW_FORWARD, 1, 'slack', forwardSlack, null, {
    status: 'success',
    attempts: [S7_SLACK_ATTEMPT],
    created: S7.runCreated,
    due: end(S7_SLACK_ATTEMPT),
    nextRetry: null,
    lease: null,
  });
}

/** An attempt row of the previous release as the run page answers it. */
function oldAttemptOut(t: OldAttempt, n: number): AttemptOut {
  return {
    n,
    started_at: isoAt(t.start),
    duration_ms: t.durationMs,
    response_status_code: t.status,
    error_message: t.error,
    response_excerpt: t.excerpt,
  };
}

function oldDeliveryAttemptOut(
  d: { n: number; label: string },
  t: OldAttempt,
  n: number,
): DeliveryAttemptOut {
  return {
    n,
    started_at: isoAt(t.start),
    duration_ms: t.durationMs,
    response_status_code: t.status,
    error_message: t.error,
    response_body_excerpt: t.excerpt,
    request_headers: requestHeadersOf(eventOf(d.n), d.n, n),
  };
}

describe('migration 0015: queued jobs of the previous release run once each', () => {
  let database: TestDatabase;
  let t: TestApp;
  let chat: FakeChatServices;
  let receiver: Receiver;
  let dispatcher: ReturnType<typeof createDeliveryDispatcher>;
  let runtime: ActionRuntime;
  let actions: ActionWorker;
  let deliveries: DeliveryWorker;
  const clock = new ManualClock(NOW);
  const key = { apiKey: API_KEY };
  /** Run pages as the migrated app first answered them, before any worker ran. */
  const pagesBefore = new Map<number, RunDetailOut>();

  /** Slack messages received per job label ("job S1" → S1). */
  const slackSent = (): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const r of chat.accepted('slack')) {
      const label = (r.json as { text: string }).text.replace(/^job /, '');
      out[label] = (out[label] ?? 0) + 1;
    }
    return out;
  };
  /** Webhook requests received per job label (the event's metadata). */
  const hooksSent = (): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const r of receiver.requests) {
      const body = JSON.parse(r.body.toString('utf8')) as {
        data: { metadata: { event_metadata: { job: string } } };
      };
      const label = body.data.metadata.event_metadata.job;
      out[label] = (out[label] ?? 0) + 1;
    }
    return out;
  };
  /** Dispatches the outbox, then runs both workers' rounds until neither has anything due now. */
  const runDue = async (): Promise<void> => {
    await drainOutbox(t.deps);
    for (;;) {
      const n = (await actions.runOnce()) + (await deliveries.runOnce());
      if (n === 0) return;
    }
  };
  const runPage = async (workflowId: string, n: number): Promise<RunDetailOut> =>
    expectStatus<RunDetailOut>(await call(t, `/workflows/${workflowId}/runs/${idOf(3, n)}`, key), 200, 'run');
  const deliveryPage = async (n: number | string) =>
    expectStatus<DeliveryOut & { request_body: string | null; attempts: DeliveryAttemptOut[] }>(
      await call(t, `/webhooks/deliveries/${typeof n === 'number' ? idOf(6, n) : n}`, key),
      200,
      'delivery',
    );

  before(async () => {
    chat = await FakeChatServices.start();
    receiver = await Receiver.start(() => clock.now().getTime());
    database = await createSharedTestDatabase();
    await migrateToPrevious(database, {
      slackUrl: chat.url(SLACK_PATH),
      slackOrigin: chat.origin,
      hookUrl: receiver.url,
    });
    // Starting the app migrates the database to the latest version.
    t = await startTestApp({ database, clock, env: { WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE } });
    dispatcher = createDeliveryDispatcher(t.deps);
    runtime = createActionRuntime(t.deps, dispatcher);
    actions = createActionWorker(t.deps, runtime);
    deliveries = createDeliveryWorker(t.deps, dispatcher);
  });
  after(async () => {
    await actions?.stop();
    await deliveries?.stop();
    await runtime?.databases.close();
    await dispatcher?.close();
    await t?.close();
    await database?.drop();
    await chat?.close();
    await receiver?.close();
  });

  test('the migration added the ending-attempt columns, empty, and swapped the claim index', async () => {
    const db = t.deps.database.db as unknown as Kysely<unknown>;
    const rows = await sql<{ started_at: unknown; duration_ms: unknown; response_excerpt: unknown }>`
      select started_at, duration_ms, response_excerpt from workflow_action_runs`.execute(db);
    assert.equal(rows.rows.length, ACTIONS.length + 2);
    for (const r of rows.rows)
      assert.deepEqual([r.started_at, r.duration_ms, r.response_excerpt], [null, null, null]);
    const indexes =
      t.deps.database.capabilities.dialect === 'postgres'
        ? await sql<{ name: string }>`select indexname as name from pg_indexes
            where schemaname = ${database.schema ?? 'public'} and tablename = 'workflow_action_runs'`.execute(
            db,
          )
        : await sql<{ name: string }>`select name from sqlite_master
            where type = 'index' and tbl_name = 'workflow_action_runs'`.execute(db);
    const names = indexes.rows.map((r) => r.name);
    assert.ok(names.includes('workflow_action_runs_claim_idx'), names.join());
    assert.ok(!names.includes('workflow_action_runs_due_idx'), names.join());
  });

  test('run pages read the previous release’s rows as they were', async () => {
    for (const a of ACTIONS) {
      const page = await runPage(FLOW_SLACK, a.n);
      pagesBefore.set(a.n, page);
      assert.equal(page.status, a.status, a.label);
      const [action] = page.actions;
      assert.ok(action);
      assert.equal(action.status, a.status, a.label);
      assert.equal(action.attempt_count, a.attempts.length, a.label);
      assert.deepEqual(
        action.attempts,
        a.attempts.map((x, i) => oldAttemptOut(x, i + 1)),
        a.label,
      );
    }
    const forward = await runPage(FLOW_FORWARD, S7.n);
    pagesBefore.set(S7.n, forward);
    assert.equal(forward.status, 'pending');
    assert.deepEqual(
      forward.actions.map((a) => [a.type, a.status, a.attempts]),
      [
        ['webhook', 'pending', []],
        ['slack', 'success', [oldAttemptOut(S7_SLACK_ATTEMPT, 1)]],
      ],
    );
  });

  test('every queued job is sent once: due ones at once, leased ones when their lease ends, dead ones never', async () => {
    await runDue();
    assert.deepEqual(slackSent(), { S1: 1, S2: 1, S3: 1 }, 'actions due at start');
    assert.deepEqual(hooksSent(), { D1: 1, D2: 1, D6: 1, S7: 1 }, 'deliveries due at start');
    const d2 = receiver.requests.find((r) => r.headers['x-idempotency-key'] === idempotencyKeyOf(12));
    assert.equal(d2?.headers['x-svc-attempt'], '2', 'the crashed attempt is made again with its number');

    // Just before the running leases end: nothing more.
    clock.set(at(D4_LEASE_END - 0.001));
    await runDue();
    assert.equal(chat.accepted('slack').length, 3);
    assert.equal(receiver.requests.length, 4);

    clock.set(at(D4_LEASE_END));
    await runDue();
    assert.deepEqual(hooksSent(), { D1: 1, D2: 1, D4: 1, D6: 1, S7: 1 }, 'D4 once its lease ended');
    assert.equal(receiver.requests.at(-1)?.clockMs, at(D4_LEASE_END).getTime());
    assert.deepEqual(slackSent(), { S1: 1, S2: 1, S3: 1 }, 'S4 still leased');

    clock.set(at(S4_LEASE_END - 0.001));
    await runDue();
    assert.equal(chat.accepted('slack').length, 3);

    clock.set(at(S4_LEASE_END));
    await runDue();
    assert.deepEqual(slackSent(), { S1: 1, S2: 1, S3: 1, S4: 1 }, 'S4 once its lease ended');

    // Far past every retry time and lease: nothing is sent twice, nothing dead comes back.
    for (const hours of [1, 24, 24 * 7]) {
      clock.set(at(hours * 3600));
      await runDue();
    }
    assert.deepEqual(slackSent(), { S1: 1, S2: 1, S3: 1, S4: 1 });
    assert.deepEqual(hooksSent(), { D1: 1, D2: 1, D4: 1, D6: 1, S7: 1 });
    assert.equal(chat.received.length, 4, 'every Slack request well formed');
  });

  test('run pages: each action’s attempts are its old rows plus the one ending attempt, none twice', async () => {
    const ended = (label: string, page: RunDetailOut) => {
      assert.equal(page.status, 'success', label);
      const [action] = page.actions;
      assert.ok(action, label);
      assert.equal(action.status, 'success', label);
      return action;
    };
    const newAttempt = (n: number, startedAt: number) => ({
      n,
      started_at: isoAt(startedAt),
      response_status_code: 200,
      error_message: null,
      response_excerpt: 'ok',
    });
    const withoutDuration = ({ duration_ms: _d, ...rest }: AttemptOut) => rest;

    for (const [n, startedAt] of [
      [1, 0],
      [3, 0],
      [4, S4_LEASE_END],
    ] as const) {
      const action = ended(`S${n}`, await runPage(FLOW_SLACK, n));
      assert.equal(action.attempt_count, 1);
      assert.deepEqual(action.attempts.map(withoutDuration), [newAttempt(1, startedAt)], `S${n}`);
    }

    const s2 = ended('S2', await runPage(FLOW_SLACK, 2));
    assert.equal(s2.attempt_count, 2);
    assert.deepEqual(s2.attempts[0], oldAttemptOut(failedSlack(-200), 1), 'the old failed attempt');
    assert.deepEqual(s2.attempts.slice(1).map(withoutDuration), [newAttempt(2, 0)], 'the new ending attempt');

    // Ended before the migration: exactly as they were.
    for (const n of [5, 6]) assert.deepEqual(await runPage(FLOW_SLACK, n), pagesBefore.get(n), `S${n}`);

    const forward = await runPage(FLOW_FORWARD, S7.n);
    assert.equal(forward.status, 'success');
    const [hook, slack] = forward.actions;
    assert.equal(hook?.status, 'success');
    assert.equal(hook?.attempt_count, 1);
    assert.deepEqual(hook?.attempts.map(withoutDuration), [newAttempt(1, 0)], 'the delivery’s one attempt');
    assert.deepEqual(slack, pagesBefore.get(S7.n)?.actions[1], 'the Slack action beside it unchanged');

    const list = expectStatus<{ results: Array<{ id: string; status: string }> }>(
      await call(t, `/workflows/${FLOW_SLACK}/runs`, { ...key, query: { limit: '100' } }),
      200,
    );
    assert.deepEqual(
      Object.fromEntries(list.results.map((r) => [r.id, r.status])),
      Object.fromEntries(ACTIONS.map((a) => [idOf(3, a.n), a.n === 5 ? 'failed' : 'success'])),
      'no run started twice or lost',
    );
  });

  test('the delivery portal shows each delivery’s attempts: old ones kept, one new per job sent', async () => {
    const newAttempt = (n: number, startedAt: number) => ({
      n,
      started_at: isoAt(startedAt),
      response_status_code: 200,
      error_message: null,
      response_body_excerpt: 'ok',
    });
    const brief = ({ duration_ms: _d, request_headers: _h, ...rest }: DeliveryAttemptOut) => rest;

    for (const [n, startedAt] of [
      [11, 0],
      [14, D4_LEASE_END],
      [DW.n, 0],
    ] as const) {
      const d = await deliveryPage(n);
      assert.equal(d.status, 'success', `delivery ${n}`);
      assert.deepEqual(d.attempts.map(brief), [newAttempt(1, startedAt)], `delivery ${n}`);
    }

    const d2Old = DELIVERIES[1] as OldDelivery;
    const d2 = await deliveryPage(12);
    assert.equal(d2.status, 'success');
    assert.equal(d2.attempt_count, 2);
    assert.deepEqual(d2.attempts[0], oldDeliveryAttemptOut(d2Old, d2Old.attempts[0] as OldAttempt, 1));
    assert.deepEqual(d2.attempts.slice(1).map(brief), [newAttempt(2, 0)]);

    const d3Old = DELIVERIES[2] as OldDelivery;
    const d3 = await deliveryPage(13);
    assert.equal(d3.status, 'failed');
    assert.equal(d3.attempt_count, MAX_ATTEMPTS);
    assert.deepEqual(
      d3.attempts,
      d3Old.attempts.map((a, i) => oldDeliveryAttemptOut(d3Old, a, i + 1)),
    );

    const d5Old = DELIVERIES[4] as OldDelivery;
    const d5 = await deliveryPage(15);
    assert.equal(d5.status, 'success');
    assert.deepEqual(d5.attempts, [oldDeliveryAttemptOut(d5Old, D5_ATTEMPT, 1)]);

    // D6's delivery was made by the dispatcher after the migration: one, sent once.
    const all = expectStatus<{ results: DeliveryOut[] }>(
      await call(t, '/webhooks/deliveries', { ...key, query: { limit: '200' } }),
      200,
    );
    assert.equal(all.results.length, DELIVERIES.length + 2);
    const made = all.results.filter((d) => d.event_id === eventIdOf(eventOf(D6.n)));
    assert.equal(made.length, 1);
    const d6 = await deliveryPage((made[0] as DeliveryOut).id);
    assert.equal(d6.status, 'success');
    assert.deepEqual(d6.attempts.map(brief), [newAttempt(1, 0)]);

    const dlq = expectStatus<{ results: DeadLetterOut[] }>(await call(t, '/webhooks/dlq', key), 200);
    assert.deepEqual(
      dlq.results.map((l) => [l.delivery_id, l.retry_count, l.requeued]),
      [[idOf(6, 13), MAX_ATTEMPTS - 1, false]],
    );
  });
});
