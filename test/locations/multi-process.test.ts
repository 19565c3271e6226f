/**
 * Two server processes on one database, like two nodes behind a load balancer (ADR 007 and
 * 008): geofences written through one node reach the other's index; locations of the same
 * devices fed to both nodes, alternately and concurrently, give exactly the events of a sequential
 * run on one node. Each process has its own coalescer, index and pool, so only the database (the
 * devices' row locks on PostgreSQL, the single writer on SQLite) keeps the devices' states exact.
 * Both nodes merge the staged history every 100 ms, so merges run during every test here, and
 * the last test checks that the two nodes' merges together move each staged location once.
 * On PostgreSQL both processes use one fresh database; on SQLite one temporary file.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { stagedCount } from '../../src/locations/history-merge.repository.ts';
import { circle, lcg, polygon, rect } from '../geofences/helpers.ts';
import type { TestDatabase } from '../helpers/database.ts';
import {
  apiKeyFor,
  createProcessDatabase,
  httpCall,
  httpExpect,
  NO_PLAN_LIMITS,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import type { BatchOut, DeviceOut, EventOut, LocationOut } from './helpers.ts';

const DEVICES = 6;
const STEPS = 30;
const START = Date.parse('2026-01-05T08:00:00.000Z');
/** Both nodes merge often, so that their merges meet (ADR 008, "The staged history"). */
const NODE_ENV = { ...NO_PLAN_LIMITS, HISTORY_MERGE_INTERVAL: '100ms' };

interface Page<T> {
  results: T[];
  pagination: { has_more: boolean };
}

/** Every item of a paginated list route (`path` has a query already), in the API's order. */
async function allPages<T>(base: string, apiKey: string, path: string): Promise<T[]> {
  const out: T[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await httpExpect<Page<T>>(200, base, 'GET', `${path}&limit=200&offset=${offset}`, {
      apiKey,
    });
    out.push(...page.results);
    if (!page.pagination.has_more) return out;
  }
}

/** Every event of a device, in the API's order (newest first), as comparable strings. */
async function eventTrail(base: string, apiKey: string, deviceId: string): Promise<string[]> {
  const events = await allPages<EventOut>(base, apiKey, `/events?device_id=${deviceId}`);
  return events.map((e) => `${e.occurred_at} ${e.event_type} ${e.geofence_name}`);
}

/** Ids of the geofences containing a point, as a node's index answers. */
async function containing(base: string, apiKey: string, lng: number, lat: number): Promise<string[]> {
  const page = await httpExpect<Page<{ id: string }>>(
    200,
    base,
    'GET',
    `/geofences/contains?lng=${lng}&lat=${lat}`,
    { apiKey },
  );
  return page.results.map((g) => g.id).sort();
}

/** Polls until `check` holds (another node's index refresh is asynchronous by design), or fails. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A reproducible random walk over the geofences' area: many enters and exits. */
function track(seed: number): Array<[number, number]> {
  const rand = lcg(seed);
  return Array.from({ length: STEPS }, () => [rand() * 1.0, 9.95 + rand() * 0.1] as [number, number]);
}

describe('two server processes on one database', () => {
  let shared: TestDatabase;
  let dir: string;
  let a: SpawnedServer;
  let b: SpawnedServer;
  let apiKey: string;
  const fenceIds = new Map<string, string>();

  before(async () => {
    shared = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-two-nodes-'));
    // One after the other: the first applies the migrations, the second finds them applied.
    a = await spawnServer(shared, dir, NODE_ENV);
    b = await spawnServer(shared, dir, NODE_ENV);
    apiKey = await apiKeyFor(a.base, 'two-nodes');
  });

  after(async () => {
    await a?.stop();
    await b?.stop();
    await shared?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('geofences written through one node are in the other node’s index', async () => {
    const shapes: Record<string, unknown> = {
      west: polygon(rect(0.1, 9.9, 0.35, 10.1)),
      overlap: polygon(rect(0.25, 9.97, 0.5, 10.03)),
      // A polygon with a hole: crossing it gives exit/enter pairs inside the outer ring.
      ring: polygon(rect(0.55, 9.9, 0.8, 10.1), rect(0.62, 9.97, 0.73, 10.03).reverse()),
      east: circle(0.9, 10, 6000),
    };
    for (const [name, geometry] of Object.entries(shapes)) {
      // Half through each node: each node must learn of the other's writes.
      const via = fenceIds.size % 2 === 0 ? a : b;
      const created = await httpExpect<{ id: string }>(201, via.base, 'POST', '/geofences', {
        apiKey,
        body: { name, geometry },
      });
      fenceIds.set(name, created.id);
    }
    const probes: Array<[number, number, string[]]> = [
      [0.3, 10, ['west', 'overlap']],
      [0.6, 9.92, ['ring']],
      [0.68, 10, []],
      [0.9, 10.01, ['east']],
    ];
    for (const node of [a, b]) {
      for (const [lng, lat, names] of probes) {
        const expected = names.map((n) => fenceIds.get(n) as string).sort();
        await eventually(`${node.base} sees ${names.join('+') || 'nothing'} at ${lng},${lat}`, async () => {
          const ids = await containing(node.base, apiKey, lng, lat);
          return JSON.stringify(ids) === JSON.stringify(expected);
        });
      }
    }
  });

  test('interleaved locations on both nodes give the events of a sequential run on one node', async () => {
    assert.equal(fenceIds.size, 4, 'runs after the geofence test');
    const tracks = Array.from({ length: DEVICES }, (_, d) => track(1000 + d));
    const timestamp = (step: number) => new Date(START + step * 5_000).toISOString();

    // The reference: one node, one request at a time.
    const reference: string[] = [];
    for (let d = 0; d < DEVICES; d++) {
      const device = await httpExpect<DeviceOut>(201, a.base, 'POST', '/devices', {
        apiKey,
        body: { name: `reference ${d}`, external_id: `ref-${d}` },
      });
      reference.push(device.id);
      for (const [step, [lng, lat]] of (tracks[d] ?? []).entries()) {
        await httpExpect(201, a.base, 'POST', `/devices/${device.id}/locations`, {
          apiKey,
          body: { coordinates: [lng, lat], timestamp: timestamp(step) },
        });
      }
    }

    // The same tracks, every device at once, each device's steps alternating between the nodes
    // (the next step sent when the previous one answered, so the order per device is fixed), half
    // of the devices as single POSTs and half as one-item batches naming the device by external id.
    const interleaved: string[] = [];
    for (let d = 0; d < DEVICES; d++) {
      const device = await httpExpect<DeviceOut>(201, b.base, 'POST', '/devices', {
        apiKey,
        body: { name: `interleaved ${d}`, external_id: `il-${d}` },
      });
      interleaved.push(device.id);
    }
    await Promise.all(
      interleaved.map(async (deviceId, d) => {
        for (const [step, [lng, lat]] of (tracks[d] ?? []).entries()) {
          const node = (step + d) % 2 === 0 ? a : b;
          const location = { coordinates: [lng, lat], timestamp: timestamp(step) };
          if (d % 2 === 0) {
            await httpExpect(201, node.base, 'POST', `/devices/${deviceId}/locations`, {
              apiKey,
              body: location,
            });
          } else {
            const answer = await httpExpect<BatchOut>(200, node.base, 'POST', '/locations/batch', {
              apiKey,
              body: { locations: [{ device_external_id: `il-${d}`, ...location }] },
            });
            assert.equal(answer.accepted, 1, JSON.stringify(answer.rejected));
          }
        }
      }),
    );

    let total = 0;
    for (let d = 0; d < DEVICES; d++) {
      const expected = await eventTrail(a.base, apiKey, reference[d] as string);
      const actualOnA = await eventTrail(a.base, apiKey, interleaved[d] as string);
      const actualOnB = await eventTrail(b.base, apiKey, interleaved[d] as string);
      assert.deepEqual(actualOnA, expected, `device ${d}: same events, same order`);
      assert.deepEqual(actualOnB, actualOnA, `device ${d}: both nodes read the same events`);
      const refState = await httpExpect<DeviceOut>(200, a.base, 'GET', `/devices/${reference[d]}`, {
        apiKey,
      });
      const state = await httpExpect<DeviceOut>(200, b.base, 'GET', `/devices/${interleaved[d]}`, { apiKey });
      assert.deepEqual(state.inside_geofence_ids, refState.inside_geofence_ids, `device ${d}: final state`);
      total += expected.length;
    }
    // The walks must actually cross geofences for the comparison to mean anything.
    assert.ok(total >= DEVICES * 5, `the walks produced ${total} events`);
  });

  test('bursts for one device on both nodes at once: exactly one enter and one exit per geofence', async () => {
    const BURST = 8;
    const CYCLES = 3;
    const inside: [number, number] = [0.3, 10]; // west and overlap
    const outside: [number, number] = [0.52, 10.09]; // no geofence
    const devices: string[] = [];
    for (let d = 0; d < 3; d++) {
      const device = await httpExpect<DeviceOut>(201, a.base, 'POST', '/devices', {
        apiKey,
        body: { name: `burst ${d}`, external_id: `burst-${d}` },
      });
      devices.push(device.id);
    }
    let round = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      for (const position of [inside, outside]) {
        round++;
        // Every request of a round is in flight at once, on both nodes, single and batch paths; the
        // order they are applied in is up to the database, the events must not depend on it.
        await Promise.all(
          devices.flatMap((deviceId, d) =>
            Array.from({ length: BURST }, async (_, i) => {
              const node = i % 2 === 0 ? a : b;
              const location = {
                coordinates: position,
                timestamp: new Date(START + round * 60_000 + i * 1_000).toISOString(),
              };
              if (i % 4 < 2) {
                const res = await httpCall(node.base, 'POST', `/devices/${deviceId}/locations`, {
                  apiKey,
                  body: location,
                });
                assert.equal(res.status, 201, JSON.stringify(res.body));
              } else {
                await httpExpect(200, node.base, 'POST', '/locations/batch', {
                  apiKey,
                  body: { locations: [{ device_external_id: `burst-${d}`, ...location }] },
                });
              }
            }),
          ),
        );
      }
    }
    const west = fenceIds.get('west') as string;
    const overlap = fenceIds.get('overlap') as string;
    const label = (e: EventOut) =>
      `${e.event_type}:${e.geofence_id === west ? 'west' : e.geofence_id === overlap ? 'overlap' : e.geofence_id}`;
    for (const deviceId of devices) {
      const page = await httpExpect<Page<EventOut>>(
        200,
        b.base,
        'GET',
        `/events?device_id=${deviceId}&limit=200`,
        { apiKey },
      );
      // Oldest first, grouped by the location that produced them.
      const byLocation = new Map<string, string[]>();
      for (const e of [...page.results].reverse()) {
        byLocation.set(e.location_id, [...(byLocation.get(e.location_id) ?? []), label(e)]);
      }
      const trail = [...byLocation.values()].map((events) => events.sort().join(' '));
      const expected = Array.from({ length: CYCLES }, () => [
        'enter:overlap enter:west',
        'exit:overlap exit:west',
      ]).flat();
      assert.deepEqual(trail, expected, `device ${deviceId}: no duplicate enter, no missing exit`);
    }
  });

  test('both nodes merge while single posts reach both: each staged location is moved once', async () => {
    const target = parseDatabaseUrl(shared.url);
    assert.ok(target);
    const handle: DatabaseHandle = openDatabase(target);
    try {
      const staged = () => stagedCount(handle.db);
      /**
       * Both nodes' merged totals once nothing is staged. A merge that committed just before the
       * staged table read empty may not have counted its rows yet; each node's loop counts a merge
       * before it starts the next, so once both have ended a merge since (their last-success time
       * moved on), every row merged so far is counted.
       */
      const settledTotals = async (what: string) => {
        await eventually(what, async () => (await staged()) === 0);
        const lastSuccess = [await metric(a.base, LAST_SUCCESS), await metric(b.base, LAST_SUCCESS)];
        await eventually(`${what}: both nodes merged since`, async () => {
          const now = [await metric(a.base, LAST_SUCCESS), await metric(b.base, LAST_SUCCESS)];
          return now.every((t, i) => t > (lastSuccess[i] as number));
        });
        return [await metric(a.base, MERGED), await metric(b.base, MERGED)];
      };
      const mergedBefore = await settledTotals('the earlier tests’ locations are merged');
      const mergedSince = async () => [
        (await metric(a.base, MERGED)) - (mergedBefore[0] as number),
        (await metric(b.base, MERGED)) - (mergedBefore[1] as number),
      ];
      const devices: string[] = [];
      for (let d = 0; d < 4; d++) {
        const device = await httpExpect<DeviceOut>(201, a.base, 'POST', '/devices', {
          apiKey,
          body: { name: `merged ${d}` },
        });
        devices.push(device.id);
      }
      // Rounds of 100 single posts in flight at once, every other one to each node, until each
      // node has merged some of them (each merges every 100 ms whatever the other did).
      const PER_ROUND = 25;
      let posted = 0;
      for (let round = 0; ; round++) {
        await Promise.all(
          devices.flatMap((deviceId) =>
            Array.from({ length: PER_ROUND }, (_, i) =>
              httpExpect(201, i % 2 === 0 ? a.base : b.base, 'POST', `/devices/${deviceId}/locations`, {
                apiKey,
                body: {
                  coordinates: [0.52 + i * 1e-4, 10.09],
                  timestamp: new Date(START + 86_400_000 + (round * PER_ROUND + i) * 1_000).toISOString(),
                },
              }),
            ),
          ),
        );
        posted += devices.length * PER_ROUND;
        const since = await mergedSince();
        if (round >= 2 && since.every((n) => n > 0)) break;
        assert.ok(round < 40, `both nodes merge within 40 rounds (merged ${since.join(' and ')})`);
      }
      const mergedAfter = await settledTotals('every staged location is merged');
      const since = mergedAfter.map((n, i) => n - (mergedBefore[i] as number));
      assert.equal((since[0] as number) + (since[1] as number), posted, `merged ${since.join(' + ')}`);
      const { rows } = await sql<{ n: number | string; d: number | string }>`
        select count(*) as n, count(distinct id) as d from locations
        where device_id in (${sql.join(devices)})`.execute(handle.db);
      assert.deepEqual([Number(rows[0]?.n), Number(rows[0]?.d)], [posted, posted], 'each location once');
      for (const deviceId of devices) {
        const onA = await historyTimes(a.base, apiKey, deviceId);
        assert.equal(onA.length, posted / devices.length);
        assert.deepEqual(onA, [...onA].sort().reverse(), 'newest first');
        assert.deepEqual(
          await historyTimes(b.base, apiKey, deviceId),
          onA,
          'both nodes read the same history',
        );
      }
    } finally {
      await handle.close();
    }
  });
});

/** Locations this node's merges moved, and when its last merge ended (/metrics). */
const MERGED = 'history_merged_locations_total';
const LAST_SUCCESS = 'history_merge_last_success_timestamp_seconds';

/** A value of this node's /metrics. */
async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} is served`);
  return Number(line.split(' ')[1]);
}

/** A device's history as its locations' timestamps, in the API's order (newest first). */
async function historyTimes(base: string, apiKey: string, deviceId: string): Promise<string[]> {
  const history = await allPages<LocationOut>(base, apiKey, `/devices/${deviceId}/locations?`);
  return history.map((l) => l.timestamp);
}
