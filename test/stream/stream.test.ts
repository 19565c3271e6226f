/**
 * The live stream (ADR 016) on one node, over real sockets: stream tokens and header credentials,
 * 401s before any stream byte, topics by scope, workspace isolation, the messages of committed
 * locations, events and dwells (and none of rolled-back work), keepalives, the end of a stream whose
 * session is logged out, and a graceful shutdown with streams open.
 *
 * Absence is shown without sleeping: messages of one node leave in the order their work committed,
 * so once a later sentinel has arrived, an earlier message that was not there never will be.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createDwellWorker } from '../../src/engine.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { IS_POSTGRES } from '../helpers/database.ts';
import {
  call,
  createApiKey,
  decodeJwt,
  expectError,
  expectStatus,
  login,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { type BatchOut, createDevice, type EventOut, postLocation } from '../locations/helpers.ts';
import { createRuledGeofence } from '../locations/rules-helpers.ts';
import { listen, type Refusal, type SseMessage, SseStream, type StreamCredentials } from './sse-client.ts';

const DEPOT = { lng: 13.4, lat: 52.5 };
/** The JSON of an event, for messages published straight into the hub. */
const eventLike = { id: 'e', event_type: 'enter', device_id: 'd' };
const FAR = { lng: 13.5, lat: 52.6 };

interface StreamTokenOut {
  token: string;
  expires_at: string;
  expires_in: number;
}

interface LocationData {
  device_id: string;
  external_id: string | null;
  name: string;
  lng: number;
  lat: number;
  accuracy: number | null;
  recorded_at: string;
  inside_geofence_ids: string[];
}

const locationsOf = (s: SseStream, deviceId: string) =>
  s.of('location').filter((m) => (m.data as LocationData).device_id === deviceId);
const isLocationOf = (deviceId: string, lng?: number) => (m: SseMessage) =>
  m.event === 'location' &&
  (m.data as LocationData).device_id === deviceId &&
  (lng === undefined || (m.data as LocationData).lng === lng);

/** Polls `find` until it answers (the server notices a closed socket a moment later). */
async function eventually<T>(find: () => T | undefined): Promise<T | undefined> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const found = find();
    if (found !== undefined || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function refused(opened: SseStream | Refusal): Refusal {
  if (opened instanceof SseStream) {
    void opened.close();
    assert.fail('the stream opened');
  }
  return opened;
}

async function streamToken(t: TestApp, credentials: StreamCredentials): Promise<StreamTokenOut> {
  const res = await call(t, '/stream/tokens', { method: 'POST', ...credentials });
  return expectStatus<StreamTokenOut>(res, 201, 'POST /stream/tokens');
}

describe('live stream on one node', () => {
  let t: TestApp;
  let base: string;
  let owner: SignedUpUser;
  let jwt: { token: string };
  const open: SseStream[] = [];

  /** Connects and remembers the stream, so that every stream is closed after its test. */
  async function connect(credentials: StreamCredentials, query: Record<string, string> = {}) {
    const stream = await SseStream.connect(base, credentials, query);
    open.push(stream);
    return stream;
  }

  before(async () => {
    t = await startIdentityApp({
      env: { STREAM_KEEPALIVE_INTERVAL: '150ms', DEFAULT_PLAN: 'enterprise' },
    });
    base = await listen(t.app);
    owner = await signUp(t, 'stream');
    jwt = { token: owner.tokens.access_token };
  });
  after(async () => {
    await Promise.all(open.map((s) => s.close()));
    await t?.close();
  });

  test('a stream token opens the stream; `ready` names the workspace and the topics', async () => {
    const issued = await streamToken(t, jwt);
    assert.equal(issued.expires_in, 60);
    assert.equal(issued.expires_at, new Date(t.clock.now().getTime() + 60_000).toISOString());
    const { payload } = decodeJwt(issued.token);
    assert.equal(payload.typ, 'stream');
    assert.equal(payload.wid, owner.workspace.id);
    assert.equal(payload.pk, 'user');
    assert.equal(payload.sub, owner.user.id);
    assert.equal(typeof payload.sid, 'string');
    assert.deepEqual(payload.scp, ['devices:read', 'events:read']);

    const stream = await connect({ streamToken: issued.token });
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(stream.headers.get('cache-control'), 'no-cache, no-transform');
    assert.equal(stream.messages[0]?.event, 'ready', 'ready comes first');
    assert.deepEqual(stream.messages[0]?.data, {
      workspace_id: owner.workspace.id,
      topics: ['locations', 'events'],
    });
    await stream.close();
    const ended = await eventually(() => t.logs.find((l) => l.msg === 'stream ended'));
    assert.equal(ended?.reason, 'client', 'the end of a stream is logged with its reason');
    // The token is a credential: a request's log line hides it.
    refused(await SseStream.open(base, { streamToken: `${issued.token}x` }));
    const logged = await eventually(() =>
      t.logs.find((l) => typeof l.url === 'string' && l.url.startsWith('/api/v1/stream?')),
    );
    assert.equal(logged?.url, '/api/v1/stream?token=[redacted]');
  });

  test('the Authorization header and X-API-Key open the stream too (fetch streaming)', async () => {
    const key = await createApiKey(t, jwt.token, ['devices:read', 'events:read']);
    for (const credentials of [jwt, { apiKey: key.key }, { token: key.key }]) {
      const stream = await connect(credentials);
      assert.deepEqual(stream.ready.topics, ['locations', 'events']);
    }
    // A key's stream token names the key.
    const { payload } = decodeJwt((await streamToken(t, { apiKey: key.key })).token);
    assert.deepEqual([payload.pk, payload.sub, payload.sid], ['api_key', key.id, undefined]);
  });

  test('bad, misused or expired credentials are a JSON 401 before any stream byte', async () => {
    const cases: Array<[string, StreamCredentials, string]> = [
      ['no credentials', {}, 'Not authenticated'],
      ['a malformed token', { streamToken: 'not-a-token' }, 'Invalid token'],
      ['an access token as ?token=', { streamToken: jwt.token }, 'Invalid token'],
      ['a stream token as Bearer', { token: (await streamToken(t, jwt)).token }, 'Invalid token'],
    ];
    for (const [what, credentials, detail] of cases) {
      const refusal = refused(await SseStream.open(base, credentials));
      assert.equal(refusal.status, 401, what);
      assert.match(refusal.contentType ?? '', /^application\/json/, what);
      assert.deepEqual(refusal.body, { detail }, what);
    }
    const issued = await streamToken(t, jwt);
    t.clock.advance(60_000);
    const expired = refused(await SseStream.open(base, { streamToken: issued.token }));
    assert.deepEqual([expired.status, expired.body.error_code], [401, 'TOKEN_EXPIRED']);
    // A stream token cannot mint another one.
    expectError(
      await call(t, '/stream/tokens', { method: 'POST', token: issued.token }),
      401,
      'TOKEN_EXPIRED',
    );
  });

  test('after logout, or once its API key is revoked, a stream token opens nothing', async () => {
    const session = await login(t, owner.email, owner.password);
    const issued = await streamToken(t, { token: session.access_token });
    expectStatus(await call(t, '/auth/logout', { method: 'POST', token: session.access_token }), 204);
    const afterLogout = refused(await SseStream.open(base, { streamToken: issued.token }));
    assert.deepEqual([afterLogout.status, afterLogout.body], [401, { detail: 'Invalid token' }]);

    const key = await createApiKey(t, jwt.token, ['events:read']);
    const keyToken = await streamToken(t, { apiKey: key.key });
    expectStatus(await call(t, `/account/api-keys/${key.id}`, { method: 'DELETE', ...jwt }), 204);
    const afterRevocation = refused(await SseStream.open(base, { streamToken: keyToken.token }));
    assert.deepEqual([afterRevocation.status, afterRevocation.body], [401, { detail: 'Invalid API key' }]);
  });

  test('an open stream ends once its login session is logged out (checked at each keepalive)', async () => {
    const session = await login(t, owner.email, owner.password);
    const stream = await connect({ token: session.access_token });
    await stream.next((m) => m.event === 'comment', 'a keepalive while the session is valid');
    expectStatus(await call(t, '/auth/logout', { method: 'POST', token: session.access_token }), 204);
    await stream.end('the end of the stream after logout');
  });

  test('topics follow the scopes: an events:read key gets no location messages', async () => {
    const fence = await createGeofence(t, jwt, {
      name: 'Depot',
      geometry: circle(DEPOT.lng, DEPOT.lat, 300),
    });
    const eventsKey = await createApiKey(t, jwt.token, ['events:read']);
    const devicesKey = await createApiKey(t, jwt.token, ['devices:read']);
    const payload = decodeJwt((await streamToken(t, { apiKey: eventsKey.key })).token).payload;
    assert.deepEqual(payload.scp, ['events:read'], 'the token carries only what the key holds');

    const eventsOnly = await connect({ apiKey: eventsKey.key });
    assert.deepEqual(eventsOnly.ready.topics, ['events']);
    const locationsOnly = await connect({ apiKey: devicesKey.key });
    assert.deepEqual(locationsOnly.ready.topics, ['locations']);
    const askedForEvents = await connect(jwt, { topics: 'events' });
    assert.deepEqual(askedForEvents.ready.topics, ['events']);

    const device = await createDevice(t, jwt, { name: 'scoped' });
    const entered = await postLocation(t, jwt, device.id, { coordinates: [DEPOT.lng, DEPOT.lat] });
    const enter = entered.events[0];
    assert.equal(enter?.geofence_id, fence.id);
    await eventsOnly.next((m) => m.id === enter.id, 'the enter event');
    await askedForEvents.next((m) => m.id === enter.id, 'the enter event');
    await locationsOnly.next(isLocationOf(device.id), 'the location');
    // The location of a commit goes out before its events: on the events streams it never came.
    assert.deepEqual(eventsOnly.of('location'), []);
    assert.deepEqual(askedForEvents.of('location'), []);
    // A later location, after the enter, is the sentinel for the location-only stream.
    await postLocation(t, jwt, device.id, { coordinates: [FAR.lng, FAR.lat] });
    const exit = (await askedForEvents.next((m) => m.event === 'geofence_event' && m.id !== enter.id, 'exit'))
      .data as EventOut;
    await locationsOnly.next(isLocationOf(device.id, FAR.lng), 'the second location');
    assert.deepEqual(locationsOnly.of('geofence_event'), [], 'no events without events:read');
    assert.equal(exit.event_type, 'exit');

    const refusal = refused(await SseStream.open(base, { apiKey: eventsKey.key }, { topics: 'locations' }));
    assert.deepEqual([refusal.status, refusal.body.error_code], [403, 'INSUFFICIENT_PERMISSIONS']);
    assert.equal(refusal.body.detail, 'Topic locations requires scope devices:read');
    const neither = await createApiKey(t, jwt.token, ['geofences:read', 'locations:write']);
    const noScope = refused(await SseStream.open(base, { apiKey: neither.key }));
    assert.deepEqual(
      [noScope.status, noScope.body.detail],
      [403, 'This action requires scope devices:read or events:read'],
    );
    expectError(
      await call(t, '/stream/tokens', { method: 'POST', apiKey: neither.key }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    const bogus = refused(await SseStream.open(base, jwt, { topics: 'locations,weather' }));
    assert.equal(bogus.status, 422);
  });

  test('workspace isolation: a stream sees nothing of another workspace', async () => {
    const other = await signUp(t, 'stream-other');
    const otherJwt = { token: other.tokens.access_token };
    const mine = await connect(jwt);
    const theirs = await connect({ streamToken: (await streamToken(t, otherJwt)).token });
    assert.equal(theirs.ready.workspace_id, other.workspace.id);
    await createGeofence(t, jwt, { name: 'Mine', geometry: circle(2.35, 48.85, 300) });
    const myDevice = await createDevice(t, jwt, { name: 'mine' });
    const theirDevice = await createDevice(t, otherJwt, { name: 'theirs' });

    const entered = await postLocation(t, jwt, myDevice.id, { coordinates: [2.35, 48.85] });
    assert.equal(entered.events.length, 1);
    await postLocation(t, otherJwt, theirDevice.id, { coordinates: [2.35, 48.85] });
    await theirs.next(isLocationOf(theirDevice.id), 'their own location');
    const seen = theirs.messages.filter((m) => m.event === 'location' || m.event === 'geofence_event');
    assert.deepEqual(
      seen.map((m) => (m.data as { device_id: string }).device_id),
      [theirDevice.id],
      'only their own device',
    );
    await mine.next(isLocationOf(myDevice.id), 'my location');
    await mine.next((m) => m.id === entered.events[0]?.id, 'my event');
    await postLocation(t, jwt, myDevice.id, { coordinates: [2.36, 48.86] });
    await mine.next(isLocationOf(myDevice.id, 2.36), 'my sentinel');
    assert.deepEqual(locationsOf(mine, theirDevice.id), [], 'none of theirs');
  });

  test('a location → one `location` message with the geofences containing it; a batch → one per device', async () => {
    const inner = await createGeofence(t, jwt, { name: 'Inner', geometry: circle(10, 50, 300) });
    const outer = await createGeofence(t, jwt, { name: 'Outer', geometry: circle(10, 50, 3000) });
    const stream = await connect(jwt, { topics: 'locations' });
    const device = await createDevice(t, jwt, { name: 'Truck 7', external_id: 'truck-7' });
    await postLocation(t, jwt, device.id, {
      coordinates: [10, 50],
      accuracy: 4.5,
      timestamp: '2026-03-10T11:59:00.000Z',
    });
    const message = await stream.next(isLocationOf(device.id), 'the location');
    assert.deepEqual(message.data, {
      device_id: device.id,
      external_id: 'truck-7',
      name: 'Truck 7',
      lng: 10,
      lat: 50,
      accuracy: 4.5,
      recorded_at: '2026-03-10T11:59:00.000Z',
      inside_geofence_ids: [inner.id, outer.id].sort(),
    });

    // A batch: three locations of one device (out of order among themselves), one of another.
    const from = stream.messages.length;
    const batch = expectStatus<BatchOut>(
      await call(t, '/locations/batch', {
        ...jwt,
        body: {
          locations: [
            { device_id: device.id, coordinates: [10.01, 50], timestamp: '2026-03-10T11:59:30.000Z' },
            { device_id: device.id, coordinates: [10.03, 50], timestamp: '2026-03-10T11:59:50.000Z' },
            { device_id: device.id, coordinates: [10.02, 50], timestamp: '2026-03-10T11:59:40.000Z' },
            { device_external_id: 'van-3', coordinates: [10, 50.001], timestamp: '2026-03-10T11:59:45.000Z' },
          ],
        },
      }),
      200,
    );
    assert.equal(batch.accepted, 4);
    const van = await stream.next(
      (m) => m.event === 'location' && (m.data as LocationData).external_id === 'van-3',
      'the van',
      from,
    );
    const truck = await stream.next(isLocationOf(device.id), 'the truck', from);
    assert.equal((truck.data as LocationData).lng, 10.03, "the truck's newest location of the batch");
    assert.deepEqual((truck.data as LocationData).inside_geofence_ids, [outer.id], 'out of the inner circle');
    assert.deepEqual((van.data as LocationData).inside_geofence_ids, [inner.id, outer.id].sort());
    // A sentinel after the batch: nothing else of the batch came.
    await postLocation(t, jwt, device.id, {
      coordinates: [10.04, 50],
      timestamp: '2026-03-10T12:00:00.000Z',
    });
    await stream.next(isLocationOf(device.id, 10.04), 'the sentinel', from);
    const lngs = stream.messages
      .slice(from)
      .filter((m) => m.event === 'location')
      .map((m) => (m.data as LocationData).lng)
      .sort();
    assert.deepEqual(
      lngs,
      [10, 10.03, 10.04],
      'the van once, the truck once for the batch, then the sentinel',
    );
  });

  test('enter and exit → `geofence_event` messages in order, each the JSON of GET /events/{id}', async () => {
    const fence = await createGeofence(t, jwt, { name: 'Yard', geometry: circle(20, 40, 300) });
    const stream = await connect(jwt, { topics: 'events' });
    const device = await createDevice(t, jwt, { name: 'walker' });
    const enter = (
      await postLocation(t, jwt, device.id, { coordinates: [20, 40], timestamp: '2026-03-10T11:50:00.000Z' })
    ).events[0];
    const exit = (
      await postLocation(t, jwt, device.id, {
        coordinates: [20.1, 40],
        timestamp: '2026-03-10T11:51:00.000Z',
      })
    ).events[0];
    // In one batch: enter and exit again, and another device's enter between them in time.
    const other = await createDevice(t, jwt, { name: 'other walker' });
    const batch = expectStatus<BatchOut>(
      await call(t, '/locations/batch', {
        ...jwt,
        body: {
          locations: [
            { device_id: device.id, coordinates: [20, 40], timestamp: '2026-03-10T11:52:00.000Z' },
            { device_id: device.id, coordinates: [20.1, 40], timestamp: '2026-03-10T11:54:00.000Z' },
            { device_id: other.id, coordinates: [20, 40], timestamp: '2026-03-10T11:53:00.000Z' },
          ],
        },
      }),
      200,
    );
    assert.ok(enter && exit);
    const expected = [enter, exit, ...batch.events];
    assert.deepEqual(
      expected.map((e) => `${e.event_type}@${e.occurred_at}`),
      [
        'enter@2026-03-10T11:50:00.000Z',
        'exit@2026-03-10T11:51:00.000Z',
        'enter@2026-03-10T11:52:00.000Z',
        'enter@2026-03-10T11:53:00.000Z',
        'exit@2026-03-10T11:54:00.000Z',
      ],
    );
    const last = expected.at(-1) as EventOut;
    await stream.next((m) => m.id === last.id, 'the last exit');
    const got = stream.of('geofence_event');
    assert.deepEqual(
      got.map((m) => m.id),
      expected.map((e) => e.id),
      'every event once, in the order they happened',
    );
    for (const message of got) {
      const stored = expectStatus(await call(t, `/events/${message.id}`, jwt), 200);
      assert.deepEqual(message.data, stored, 'the message is the event as GET /events/{id} shows it');
      assert.equal((message.data as EventOut).geofence_id, fence.id);
    }
  });

  test('a dwell fired by the dwell worker arrives as a `geofence_event`', async () => {
    await createRuledGeofence(t, jwt, { name: 'Dock', geometry: circle(30, 30, 300), dwell_seconds: 60 });
    const stream = await connect(jwt, { topics: 'events' });
    const device = await createDevice(t, jwt, { name: 'dweller' });
    const now = t.clock.now().getTime();
    const entered = await postLocation(t, jwt, device.id, {
      coordinates: [30, 30],
      timestamp: new Date(now).toISOString(),
    });
    await stream.next((m) => m.id === entered.events[0]?.id, 'the enter');
    t.clock.advance(60_000);
    assert.equal(await createDwellWorker(t.deps).runOnce(), 1, 'the worker fires the dwell');
    const dwell = await stream.next(
      (m) => m.event === 'geofence_event' && (m.data as EventOut).event_type === 'dwell',
      'the dwell',
    );
    assert.equal((dwell.data as EventOut).device_id, device.id);
    assert.deepEqual(dwell.data, expectStatus(await call(t, `/events/${dwell.id}`, jwt), 200));
  });

  test('work that rolls back is never sent', async () => {
    const db = t.deps.database.db;
    await createGeofence(t, jwt, { name: 'Gate', geometry: circle(40, 10, 300) });
    const stream = await connect(jwt);
    const device = await createDevice(t, jwt, { name: 'unlucky' });
    // The usage counter is the transaction's last write: failing it rolls back everything before.
    if (IS_POSTGRES) {
      await sql`create function fail_stream_usage() returns trigger language plpgsql as $$
        begin raise exception 'injected failure'; end $$`.execute(db);
      await sql`create trigger fail_stream_usage before insert or update on usage_counters
        for each row execute function fail_stream_usage()`.execute(db);
    } else {
      await sql`create trigger fail_stream_usage_i before insert on usage_counters
        begin select raise(abort, 'injected failure'); end`.execute(db);
      await sql`create trigger fail_stream_usage_u before update on usage_counters
        begin select raise(abort, 'injected failure'); end`.execute(db);
    }
    try {
      const failed = await call(t, `/devices/${device.id}/locations`, {
        ...jwt,
        body: { coordinates: [40, 10] },
      });
      assert.equal(failed.statusCode, 500);
    } finally {
      if (IS_POSTGRES) {
        await sql`drop trigger fail_stream_usage on usage_counters`.execute(db);
        await sql`drop function fail_stream_usage()`.execute(db);
      } else {
        await sql`drop trigger fail_stream_usage_i`.execute(db);
        await sql`drop trigger fail_stream_usage_u`.execute(db);
      }
    }
    const stored = await postLocation(t, jwt, device.id, { coordinates: [40.0001, 10] });
    await stream.next((m) => m.id === stored.events[0]?.id, 'the committed enter');
    assert.deepEqual(
      locationsOf(stream, device.id).map((m) => (m.data as LocationData).lng),
      [40.0001],
      'only the committed location',
    );
    assert.deepEqual(
      stream
        .of('geofence_event')
        .filter((m) => (m.data as EventOut).device_id === device.id)
        .map((m) => m.id),
      [stored.events[0]?.id],
      'only the committed event',
    );
  });

  test('a `: keepalive` comment every STREAM_KEEPALIVE_INTERVAL', async () => {
    const stream = await connect(jwt);
    const first = await stream.next((m) => m.event === 'comment', 'a keepalive');
    assert.equal(first.raw, 'keepalive');
    await stream.next((m) => m.event === 'comment' && m !== first, 'a second keepalive');
  });
});

describe('a client that does not read', () => {
  test('is disconnected once 1 MiB waits for it, instead of being buffered without bound', async () => {
    const t = await startIdentityApp();
    let socket: net.Socket | undefined;
    try {
      const base = new URL(await listen(t.app));
      const user = await signUp(t, 'slow');
      const workspaceId = user.workspace.id;
      // A raw socket: the request is sent, the answer is never read.
      socket = net.connect(Number(base.port), base.hostname);
      socket.write(
        `GET /api/v1/stream HTTP/1.1\r\nHost: ${base.host}\r\nAuthorization: Bearer ${user.tokens.access_token}\r\n\r\n`,
      );
      const head = await new Promise<string>((resolve) =>
        socket?.once('data', (chunk) => resolve(String(chunk))),
      );
      assert.match(head, /^HTTP\/1\.1 200/);
      socket.pause();
      assert.equal(t.deps.stream.wanted(workspaceId), true);
      // 64 kB messages until the socket's buffers are full and the stream gives up on it.
      const big = {
        ...(eventLike as object),
        metadata: { geofence_metadata: { notes: 'x'.repeat(64_000) } },
      };
      for (let i = 0; i < 2_000 && t.deps.stream.wanted(workspaceId); i++) {
        t.deps.stream.publish(workspaceId, { event: 'geofence_event', id: `e${i}`, data: big as never });
        await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(t.deps.stream.wanted(workspaceId), false, 'the stream was ended');
      const ended = t.logs.find((l) => l.msg === 'stream ended');
      assert.equal(ended?.reason, 'slow');
    } finally {
      socket?.destroy();
      await t.close();
    }
  });
});

describe('graceful shutdown with open streams', () => {
  test('closing the server ends the streams and does not wait for them', async () => {
    const t = await startIdentityApp();
    let streams: SseStream[] = [];
    try {
      const base = await listen(t.app);
      const user = await signUp(t, 'shutdown');
      streams = [
        await SseStream.connect(base, { token: user.tokens.access_token }),
        await SseStream.connect(base, {
          streamToken: (await streamToken(t, { token: user.tokens.access_token })).token,
        }),
      ];
      const started = Date.now();
      await t.app.close();
      const took = Date.now() - started;
      assert.ok(took < 2_000, `app.close() took ${took} ms`);
      for (const stream of streams) await stream.end('the end of the stream at shutdown');
    } finally {
      await Promise.all(streams.map((s) => s.close()));
      await t.close();
    }
  });
});
