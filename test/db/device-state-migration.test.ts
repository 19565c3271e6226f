/**
 * Migration 0012 (ADR 008, "Device state"): a database as the previous release leaves it — devices
 * carrying copies of their last location (`last_location`, `last_seen_at`, `last_evaluated_at`),
 * written by raw inserts shaped exactly like that release's rows — is migrated by starting the app
 * on it, and then serves the same devices, locations and events, computed before the migration.
 *
 * The devices cover every shape the old rows take: a plain located device; one whose newest
 * location retention deleted while an older out-of-order one stayed; one whose whole history was
 * deleted; one whose copy predates `location_id`; two in-order locations with the same time; one
 * never located. Where the copy's location is gone, it comes back as a history row (the decision
 * recorded in the migration and ADR 008), and the device answers exactly as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { sha256Hex } from '../../src/shared/random-secrets.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { migrateUpTo } from '../helpers/previous-release.ts';

const PREVIOUS = '0011_delivery_portal';
const API_KEY = 'gf_live_migrationtestkey0123456789abcdefghijklmn';
const W = '01900000-0000-7000-8000-000000000001';
const NOW = '2026-03-10T12:00:00.000Z';

interface OldLocation {
  id: string;
  device: string;
  lng: number;
  lat: number;
  accuracy: number | null;
  recorded: string;
  received: string;
  outOfOrder: boolean;
}

interface OldDevice {
  id: string;
  name: string;
  inside: string[];
  /** The copy the previous release kept; null when never located. */
  last: { lng: number; lat: number; accuracy: number | null; timestamp: string; locationId?: string } | null;
  lastSeenAt: string | null;
}

const dev = (n: number) => `01900000-0000-7000-8000-1000000000${String(n).padStart(2, '0')}`;
const loc = (n: number) => `01900000-0000-7000-8000-2000000000${String(n).padStart(2, '0')}`;

const DEVICES: OldDevice[] = [
  // A: three in-order locations; the copy is the newest.
  {
    id: dev(1),
    name: 'plain',
    inside: ['01900000-0000-7000-8000-900000000001'],
    last: { lng: 13.3, lat: 52.3, accuracy: 4, timestamp: '2026-03-01T10:02:00.000Z', locationId: loc(3) },
    lastSeenAt: '2026-03-01T10:02:01.000Z',
  },
  // B: its newest location went to retention; an older, out-of-order one received later stayed.
  {
    id: dev(2),
    name: 'newest purged',
    inside: [],
    last: { lng: 1.5, lat: 2.5, accuracy: null, timestamp: '2026-01-05T00:00:00.000Z', locationId: loc(10) },
    lastSeenAt: '2026-01-05T00:00:03.000Z',
  },
  // C: the whole history went to retention.
  {
    id: dev(3),
    name: 'history purged',
    inside: ['01900000-0000-7000-8000-900000000002', '01900000-0000-7000-8000-900000000003'],
    last: {
      lng: -3.25,
      lat: 40.5,
      accuracy: 12.5,
      timestamp: '2025-11-01T08:00:00.000Z',
      locationId: loc(20),
    },
    lastSeenAt: '2025-11-01T08:00:00.250Z',
  },
  // D: a copy written before `location_id` existed, its location still stored.
  {
    id: dev(4),
    name: 'old copy',
    inside: [],
    last: { lng: 7, lat: 8, accuracy: 30, timestamp: '2026-02-01T00:00:00.000Z' },
    lastSeenAt: '2026-02-01T00:00:05.000Z',
  },
  // E: two in-order locations with the same time; the later applied (larger id) is the copy.
  {
    id: dev(5),
    name: 'tie',
    inside: [],
    last: { lng: 5.5, lat: 6.5, accuracy: 3, timestamp: '2026-03-02T00:00:00.000Z', locationId: loc(41) },
    lastSeenAt: '2026-03-02T00:00:09.000Z',
  },
  // F: never located.
  { id: dev(6), name: 'never located', inside: [], last: null, lastSeenAt: null },
];

const LOCATIONS: OldLocation[] = [
  ...[1, 2, 3].map((k) => ({
    id: loc(k),
    device: dev(1),
    lng: 13 + k / 10,
    lat: 52 + k / 10,
    accuracy: k === 3 ? 4 : null,
    recorded: `2026-03-01T10:0${k - 1}:00.000Z`,
    received: `2026-03-01T10:0${k - 1}:01.000Z`,
    outOfOrder: false,
  })),
  {
    id: loc(11),
    device: dev(2),
    lng: 1,
    lat: 2,
    accuracy: null,
    recorded: '2026-01-01T00:00:00.000Z',
    received: '2026-02-01T00:00:00.000Z',
    outOfOrder: true,
  },
  {
    id: loc(30),
    device: dev(4),
    lng: 7,
    lat: 8,
    accuracy: 30,
    recorded: '2026-02-01T00:00:00.000Z',
    received: '2026-02-01T00:00:05.000Z',
    outOfOrder: false,
  },
  {
    id: loc(40),
    device: dev(5),
    lng: 5,
    lat: 6,
    accuracy: 3,
    recorded: '2026-03-02T00:00:00.000Z',
    received: '2026-03-02T00:00:08.000Z',
    outOfOrder: false,
  },
  {
    id: loc(41),
    device: dev(5),
    lng: 5.5,
    lat: 6.5,
    accuracy: 3,
    recorded: '2026-03-02T00:00:00.000Z',
    received: '2026-03-02T00:00:09.000Z',
    outOfOrder: false,
  },
];

/** The previous release's schema: every migration up to and including `PREVIOUS`. */
function migrateToPrevious(database: TestDatabase): Promise<void> {
  return migrateUpTo(database, PREVIOUS, fill);
}

/** Rows as the previous release wrote them (its ingestion copied each device's newest location). */
async function fill(db: Kysely<unknown>): Promise<void> {
  const now = new Date(NOW);
  await sql`insert into workspaces (id, name, access_token_ttl_seconds, created_at, updated_at)
    values (${W}, ${'Old'}, ${900}, ${now}, ${now})`.execute(db);
  await sql`insert into api_keys (id, workspace_id, created_by, name, prefix, key_hash, scopes, created_at)
    values (${'01900000-0000-7000-8000-000000000002'}, ${W}, ${null}, ${'old'}, ${API_KEY.slice(0, 12)},
      ${sha256Hex(API_KEY)}, ${'["*"]'}, ${now})`.execute(db);
  for (const [i, d] of DEVICES.entries()) {
    const created = new Date(Date.parse('2025-10-01T00:00:00.000Z') + i * 1000);
    const copy =
      d.last === null
        ? null
        : JSON.stringify({
            point: { type: 'Point', coordinates: [d.last.lng, d.last.lat] },
            timestamp: d.last.timestamp,
            accuracy: d.last.accuracy,
            ...(d.last.locationId ? { location_id: d.last.locationId } : {}),
          });
    await sql`insert into devices (id, workspace_id, name, external_id, user_id, metadata, last_location,
        last_seen_at, last_evaluated_at, inside_geofence_ids, active_session_id, created_at, updated_at)
      values (${d.id}, ${W}, ${d.name}, ${`ext-${i}`}, ${null}, ${'{}'}, ${copy},
        ${d.lastSeenAt === null ? null : new Date(d.lastSeenAt)},
        ${d.last === null ? null : new Date(d.last.timestamp)}, ${JSON.stringify(d.inside)}, ${null},
        ${created}, ${created})`.execute(db);
  }
  for (const l of LOCATIONS) {
    await sql`insert into locations (id, workspace_id, device_id, session_id, lng, lat, accuracy, speed, heading,
        altitude, metadata, recorded_at, received_at, out_of_order)
      values (${l.id}, ${W}, ${l.device}, ${null}, ${l.lng}, ${l.lat}, ${l.accuracy}, ${null}, ${null}, ${null},
        ${'{"k":1}'}, ${new Date(l.recorded)}, ${new Date(l.received)}, ${l.outOfOrder})`.execute(db);
  }
  await sql`insert into geofence_events (id, workspace_id, event_id, event_type, device_id, user_id, geofence_id,
      geofence_name, lng, lat, location_id, session_id, occurred_at, created_at, metadata)
    values (${'01900000-0000-7000-8000-300000000001'}, ${W}, ${'g1_enter_1772359320'}, ${'enter'}, ${dev(1)},
      ${dev(1)}, ${'01900000-0000-7000-8000-900000000001'}, ${'Depot'}, ${13.3}, ${52.3}, ${loc(3)}, ${null},
      ${new Date('2026-03-01T10:02:00.000Z')}, ${new Date('2026-03-01T10:02:01.000Z')},
      ${'{"geofence_metadata":{},"event_metadata":{"k":1}}'})`.execute(db);
}

/** What GET /devices/{id} showed of each device before: its copy and inside-set. */
function expectedDevice(d: OldDevice) {
  return {
    last_location:
      d.last === null
        ? null
        : {
            point: { type: 'Point', coordinates: [d.last.lng, d.last.lat] },
            timestamp: d.last.timestamp,
            accuracy: d.last.accuracy,
          },
    last_seen_at: d.lastSeenAt,
    inside_geofence_ids: d.inside,
  };
}

/** The history each device serves: its stored rows, plus its copy's location where that was gone. */
function expectedHistory(d: OldDevice) {
  const rows = LOCATIONS.filter((l) => l.device === d.id).map((l) => ({
    coordinates: [l.lng, l.lat],
    timestamp: l.recorded,
    received_at: l.received,
    out_of_order: l.outOfOrder,
  }));
  const stored = d.last && LOCATIONS.some((l) => l.device === d.id && l.recorded === d.last?.timestamp);
  if (d.last && !stored && d.lastSeenAt) {
    rows.push({
      coordinates: [d.last.lng, d.last.lat],
      timestamp: d.last.timestamp,
      received_at: d.lastSeenAt,
      out_of_order: false,
    });
  }
  return rows.sort(
    (a, b) => a.timestamp.localeCompare(b.timestamp) || a.received_at.localeCompare(b.received_at),
  );
}

describe('migration 0012: device state from the newest location row', () => {
  let database: TestDatabase;
  let t: TestApp;
  const key = { apiKey: API_KEY };

  before(async () => {
    database = await createSharedTestDatabase();
    await migrateToPrevious(database);
    // Starting the app migrates the database to the latest version.
    t = await startTestApp({ database });
  });
  after(async () => {
    await t?.close();
    await database?.drop();
  });

  test('the previous release wrote the old columns; they are gone now', async () => {
    const columns = await sql<{ name: string }>`select * from devices limit 1`.execute(t.deps.database.db);
    const row = columns.rows[0] as Record<string, unknown>;
    assert.ok(row);
    for (const gone of ['last_location', 'last_seen_at', 'last_evaluated_at'])
      assert.ok(!(gone in row), gone);
    assert.ok('inside_geofence_ids' in row);
  });

  test('every device answers as before: GET /devices/{id}, GET /devices, GET /devices/positions', async () => {
    for (const d of DEVICES) {
      const got = expectStatus<Record<string, unknown>>(await call(t, `/devices/${d.id}`, key), 200);
      assert.deepEqual(
        {
          last_location: got.last_location,
          last_seen_at: got.last_seen_at,
          inside_geofence_ids: got.inside_geofence_ids,
        },
        expectedDevice(d),
        d.name,
      );
    }
    const list = expectStatus<{ results: Array<Record<string, unknown>> }>(
      await call(t, '/devices?limit=100', key),
      200,
    );
    assert.equal(list.results.length, DEVICES.length);
    for (const got of list.results) {
      const d = DEVICES.find((x) => x.id === got.id) as OldDevice;
      assert.deepEqual(
        {
          last_location: got.last_location,
          last_seen_at: got.last_seen_at,
          inside_geofence_ids: got.inside_geofence_ids,
        },
        expectedDevice(d),
        `list: ${d.name}`,
      );
    }
    const positions = expectStatus<{
      features: Array<{ id: string; geometry: unknown; properties: Record<string, unknown> }>;
    }>(await call(t, '/devices/positions', key), 200);
    const located = DEVICES.filter((d) => d.last !== null);
    assert.deepEqual(
      positions.features.map((f) => f.id),
      located.map((d) => d.id),
    );
    for (const f of positions.features) {
      const d = located.find((x) => x.id === f.id) as OldDevice;
      assert.deepEqual(
        {
          geometry: f.geometry,
          recorded_at: f.properties.recorded_at,
          last_seen_at: f.properties.last_seen_at,
          accuracy: f.properties.accuracy,
          inside_geofence_ids: f.properties.inside_geofence_ids,
        },
        {
          geometry: { type: 'Point', coordinates: [d.last?.lng, d.last?.lat] },
          recorded_at: d.last?.timestamp,
          last_seen_at: d.lastSeenAt,
          accuracy: d.last?.accuracy,
          inside_geofence_ids: d.inside,
        },
        `positions: ${d.name}`,
      );
    }
  });

  test('every location is still served; a location retention had taken from a device answer comes back', async () => {
    for (const d of DEVICES) {
      const page = expectStatus<{ results: Array<Record<string, unknown>> }>(
        await call(t, `/devices/${d.id}/locations?limit=100`, key),
        200,
      );
      const got = page.results
        .map((l) => ({
          coordinates: (l.point as { coordinates: number[] }).coordinates,
          timestamp: l.timestamp as string,
          received_at: l.received_at as string,
          out_of_order: l.out_of_order as boolean,
        }))
        .sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.received_at.localeCompare(b.received_at));
      assert.deepEqual(got, expectedHistory(d), d.name);
    }
  });

  test('the events are unchanged', async () => {
    const page = expectStatus<{ results: Array<Record<string, unknown>> }>(
      await call(t, '/events?limit=100', key),
      200,
    );
    assert.deepEqual(
      page.results.map((e) => [e.id, e.event_type, e.device_id, e.location_id, e.occurred_at]),
      [['01900000-0000-7000-8000-300000000001', 'enter', dev(1), loc(3), '2026-03-01T10:02:00.000Z']],
    );
  });

  test('ingestion continues from each device’s state: order, ties and last location', async () => {
    // Older than B's restored newest location: out of order, as before the migration.
    const late = expectStatus<{ location: { out_of_order: boolean } }>(
      await call(t, `/devices/${dev(2)}/locations`, {
        ...key,
        body: { coordinates: [0, 0], timestamp: '2026-01-04T00:00:00.000Z' },
      }),
      201,
    );
    assert.equal(late.location.out_of_order, true);
    // Equal to E's newest time: in order, and now its last location.
    const tie = expectStatus<{ location: { out_of_order: boolean } }>(
      await call(t, `/devices/${dev(5)}/locations`, {
        ...key,
        body: { coordinates: [9, 9], timestamp: '2026-03-02T00:00:00.000Z' },
      }),
      201,
    );
    assert.equal(tie.location.out_of_order, false);
    const e = expectStatus<{ last_location: { point: { coordinates: number[] } } }>(
      await call(t, `/devices/${dev(5)}`, key),
      200,
    );
    assert.deepEqual(e.last_location.point.coordinates, [9, 9]);
    const b = expectStatus<Record<string, unknown>>(await call(t, `/devices/${dev(2)}`, key), 200);
    assert.deepEqual(b.last_location, expectedDevice(DEVICES[1] as OldDevice).last_location);
  });
});
