/**
 * `cli simulate` end to end (contract §0, operator CLI): a real server process, the CLI as a second
 * process replaying track files through the public API, and the events checked through the API
 * afterwards.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { polygon, rect } from '../geofences/helpers.ts';
import type { TestDatabase } from '../helpers/database.ts';
import {
  apiKeyFor,
  createProcessDatabase,
  httpExpect,
  NO_PLAN_LIMITS,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import type { DeviceOut, EventOut } from '../locations/helpers.ts';

interface Page<T> {
  results: T[];
}

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['src/cli.ts', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('cli simulate against a running server', () => {
  let database: TestDatabase;
  let dir: string;
  let server: SpawnedServer;
  let apiKey: string;
  let fenceId: string;
  // The server runs on the real clock: the file's timestamps lie in the recent past.
  const t0 = Date.now() - 3_600_000;
  const iso = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();

  before(async () => {
    database = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-simulate-'));
    server = await spawnServer(database, dir, NO_PLAN_LIMITS);
    apiKey = await apiKeyFor(server.base, 'simulate');
    fenceId = (
      await httpExpect<{ id: string }>(201, server.base, 'POST', '/geofences', {
        apiKey,
        body: { name: 'Depot', geometry: polygon(rect(13.0, 52.0, 13.1, 52.1)) },
      })
    ).id;
  });

  after(async () => {
    await server?.stop();
    await database?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function deviceByExternalId(externalId: string): Promise<DeviceOut[]> {
    return (
      await httpExpect<Page<DeviceOut>>(200, server.base, 'GET', `/devices?external_id=${externalId}`, {
        apiKey,
      })
    ).results;
  }

  async function eventsOf(deviceId: string): Promise<EventOut[]> {
    const page = await httpExpect<Page<EventOut>>(
      200,
      server.base,
      'GET',
      `/events?device_id=${deviceId}&limit=200`,
      { apiKey },
    );
    return page.results.reverse();
  }

  test('a GeoJSON track creates the device and produces its enter and exit, as printed', async () => {
    const track = path.join(dir, 'walk.geojson');
    const stops: Array<[number, number]> = [
      [12.95, 52.05],
      [13.05, 52.05],
      [13.06, 52.06],
      [13.2, 52.05],
    ];
    fs.writeFileSync(
      track,
      JSON.stringify({
        type: 'FeatureCollection',
        features: stops.map((coordinates, i) => ({
          type: 'Feature',
          properties: { timestamp: iso(i * 30) },
          geometry: { type: 'Point', coordinates },
        })),
      }),
    );
    const run = await runCli(
      ['simulate', '--device', 'van-1', '--track', track, '--speed', '0', '--url', server.base],
      { GEOFENCE_API_KEY: apiKey },
    );
    assert.equal(run.code, 0, run.stderr);
    const printed = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { point: number; event_type: string; geofence_id: string });
    assert.deepEqual(
      printed.map((p) => [p.point, p.event_type, p.geofence_id]),
      [
        [1, 'enter', fenceId],
        [3, 'exit', fenceId],
      ],
    );
    assert.match(run.stderr, /sent 4 locations for device .+; 2 events/);

    const [device, ...others] = await deviceByExternalId('van-1');
    assert.ok(device, 'the simulator created the device');
    assert.equal(others.length, 0);
    assert.deepEqual(device.last_location?.point.coordinates, stops[3]);
    assert.deepEqual(device.inside_geofence_ids, []);
    const events = await eventsOf(device.id);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.geofence_name, e.occurred_at, e.point.coordinates]),
      [
        ['enter', 'Depot', iso(30), stops[1]],
        ['exit', 'Depot', iso(90), stops[3]],
      ],
    );
  });

  test('a CSV track without timestamps reuses the device and is stamped with the replay time', async () => {
    const track = path.join(dir, 'walk.csv');
    fs.writeFileSync(track, 'lng,lat\n13.2,52.05\n13.05,52.04\n13.04,52.03\n');
    const started = Date.now();
    const run = await runCli([
      'simulate',
      '--device',
      'van-1',
      '--track',
      track,
      '--speed',
      '0',
      '--url',
      server.base,
      '--api-key',
      apiKey,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /sent 3 locations for device .+; 1 events/);
    const devices = await deviceByExternalId('van-1');
    assert.equal(devices.length, 1, 'found by its external id, not created again');
    const device = devices[0] as DeviceOut;
    assert.deepEqual(device.inside_geofence_ids, [fenceId]);
    const events = await eventsOf(device.id);
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['enter', 'exit', 'enter'],
    );
    const last = events[2] as EventOut;
    assert.deepEqual(last.point.coordinates, [13.05, 52.04]);
    // Without file timestamps the points are one second apart from the start of the replay.
    const occurred = Date.parse(last.occurred_at);
    assert.ok(occurred >= started && occurred <= Date.now() + 2_000, last.occurred_at);
  });

  test('a wrong API key fails with exit code 1 and the API’s answer, storing nothing', async () => {
    const track = path.join(dir, 'one.csv');
    fs.writeFileSync(track, '13.05,52.05\n');
    const run = await runCli([
      'simulate',
      '--device',
      'intruder',
      '--track',
      track,
      '--speed',
      '0',
      '--url',
      server.base,
      '--api-key',
      'gf_live_not_a_real_key',
    ]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /401/);
    assert.deepEqual(await deviceByExternalId('intruder'), []);
  });
});
