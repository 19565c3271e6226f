/**
 * No value enters SQL text: a marker sent through the HTTP API (names, metadata, external ids,
 * single and batch locations, a webhook) reaches the database only as a bound parameter. The
 * statement texts are captured where each driver hands them to the database — pg's protocol
 * writer (every Parse and simple Query message) and node:sqlite's prepare and exec — with the
 * values bound beside them, which shows that the marker did reach the database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DatabaseSync, StatementSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { drainOutbox } from '../../src/engine.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { IS_POSTGRES } from '../helpers/database.ts';
import { call, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';

const MARKER = `mk${randomBytes(8).toString('hex')}`;

/** What the drivers sent: statement texts, and the values bound to them (as text). */
interface Traffic {
  statements: string[];
  values: string[];
}

type Method = (...args: never[]) => unknown;

/** Replaces `object[name]` by a wrapper that first calls `see` with the arguments; returns the undo. */
function intercept(object: object, name: string, see: (args: unknown[]) => void): () => void {
  const target = object as Record<string, Method>;
  const original = target[name];
  if (typeof original !== 'function') throw new Error(`no method ${name} to intercept`);
  target[name] = function (this: unknown, ...args: unknown[]) {
    see(args);
    return Reflect.apply(original, this, args);
  } as Method;
  return () => {
    target[name] = original;
  };
}

function asText(value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
}

/** Records what both drivers send to their database, until the returned undo is called. */
function recordTraffic(traffic: Traffic): () => void {
  const pgConnection = (pg as unknown as { Connection: { prototype: object } }).Connection.prototype;
  const undo = [
    // pg: a simple-protocol Query message carries a text; an extended-protocol Parse its text,
    // Bind the values.
    intercept(pgConnection, 'query', ([text]) => traffic.statements.push(String(text))),
    intercept(pgConnection, 'parse', ([message]) =>
      traffic.statements.push(String((message as { text: unknown }).text)),
    ),
    intercept(pgConnection, 'bind', ([message]) => {
      for (const value of (message as { values?: unknown[] }).values ?? [])
        traffic.values.push(asText(value));
    }),
    // node:sqlite: statement texts are prepared or executed; values are bound when a statement runs.
    intercept(DatabaseSync.prototype, 'prepare', ([text]) => traffic.statements.push(String(text))),
    intercept(DatabaseSync.prototype, 'exec', ([text]) => traffic.statements.push(String(text))),
    ...(['all', 'get', 'run', 'iterate'] as const).map((method) =>
      intercept(StatementSync.prototype, method, (args) => {
        for (const value of args) traffic.values.push(asText(value));
      }),
    ),
  ];
  return () => {
    for (const u of undo) u();
  };
}

describe(`no value in SQL text (${IS_POSTGRES ? 'PostgreSQL' : 'SQLite'})`, () => {
  const traffic: Traffic = { statements: [], values: [] };
  let stopRecording: () => void;
  let t: TestApp;

  before(async () => {
    stopRecording = recordTraffic(traffic);
    t = await startIdentityApp();
  });
  after(async () => {
    await t.close();
    stopRecording();
  });

  test('a marker in names, metadata, external ids and batch items travels only as a bound value', async () => {
    const user = await signUp(t, 'marker');
    const token = user.tokens.access_token;
    const geofence = await createGeofence(
      t,
      { token },
      {
        name: `Depot ${MARKER} O'Brien`,
        geometry: circle(13.4, 52.5, 500),
        metadata: { site: MARKER, [MARKER]: "quote ' and \\ backslash" },
      },
    );
    const device = expectStatus<{ id: string }>(
      await call(t, '/devices', {
        token,
        body: { name: `truck ${MARKER}`, external_id: `ext-${MARKER}`, metadata: { note: MARKER } },
      }),
      201,
      'create device',
    );
    const webhook = expectStatus<{ id: string; name: string }>(
      await call(t, '/webhooks', { token, body: { name: `hook ${MARKER}`, url: 'http://127.0.0.1:9/hook' } }),
      201,
      'create webhook',
    );
    const at = (seconds: number) =>
      new Date(t.clock.now().getTime() - 3_600_000 + seconds * 1000).toISOString();
    // A single location inside the geofence: an enter event copying its name and metadata.
    expectStatus(
      await call(t, `/devices/${device.id}/locations`, {
        token,
        body: { coordinates: [13.4, 52.5], timestamp: at(1), metadata: { trip: MARKER } },
      }),
      201,
      'single location',
    );
    // A batch: the known device by external id leaves the geofence, a new external id creates a device.
    const batch = expectStatus<{ accepted: number; events: unknown[] }>(
      await call(t, '/locations/batch', {
        token,
        body: {
          locations: [
            {
              device_external_id: `ext-${MARKER}`,
              coordinates: [14.4, 52.5],
              timestamp: at(2),
              metadata: { b: MARKER },
            },
            {
              device_external_id: `new-${MARKER}`,
              coordinates: [13.4, 52.5],
              timestamp: at(3),
              metadata: { b: MARKER },
            },
          ],
        },
      }),
      200,
      'batch',
    );
    assert.equal(batch.accepted, 2);
    assert.equal(batch.events.length, 2, 'an exit and an enter');
    // The dispatcher turns the events into deliveries carrying the marker in their payload.
    assert.equal((await drainOutbox(t.deps)).deliveries, 3);

    // Everything was stored: the marker reached the database.
    const stored = expectStatus<{ name: string }>(await call(t, `/geofences/${geofence.id}`, { token }), 200);
    assert.equal(stored.name, `Depot ${MARKER} O'Brien`);
    const events = expectStatus<{ results: Array<{ geofence_name: string }> }>(
      await call(t, '/events', { token }),
      200,
      'events',
    );
    assert.deepEqual(
      events.results.map((e) => e.geofence_name),
      Array(3).fill(`Depot ${MARKER} O'Brien`),
    );
    assert.equal(webhook.name, `hook ${MARKER}`);

    assert.ok(traffic.statements.length > 20, `statements captured: ${traffic.statements.length}`);
    const bound = traffic.values.filter((v) => v.includes(MARKER));
    assert.ok(bound.length >= 8, `the marker was bound as a value ${bound.length} times`);
    const leaked = traffic.statements.filter((s) => s.includes(MARKER));
    assert.deepEqual(leaked, [], 'statement texts holding a value');
  });
});
