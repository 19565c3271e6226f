/**
 * The live stream across two nodes of one deployment (ADR 016), over real sockets: two apps on one
 * database, each listening on its own port, their hubs joined by PostgreSQL LISTEN/NOTIFY (on
 * PostgreSQL without Redis) or by Redis pub/sub (REDIS_URL; on either database when a Redis
 * answers, and required to when REDIS_TEST_URL is set). SQLite without Redis is one node and has
 * no transport to test.
 *
 * A third listener on the transport's channel sees what the nodes send each other, to show that a
 * workspace nobody watches costs no traffic.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pg from 'pg';
import { channelFor } from '../../src/stream/postgres-transport.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import {
  createSharedTestDatabase,
  IS_POSTGRES,
  TEST_DATABASE_URL,
  type TestDatabase,
} from '../helpers/database.ts';
import { call, expectStatus, type SignedUpUser, signUp, startIdentityApp } from '../helpers/identity.ts';
import { REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';
import { createDevice, type EventOut, postLocation } from '../locations/helpers.ts';
import { listen, type SseMessage, SseStream } from './sse-client.ts';

const redisUp = await redisReachable();
if (process.env.REDIS_TEST_URL && !redisUp) throw new Error(`REDIS_TEST_URL=${REDIS_URL} is not reachable`);

interface Variant {
  name: string;
  skip: string | false;
  env(): Record<string, string>;
  /** Every frame the nodes send each other, as they send it. */
  tap(database: TestDatabase, env: Record<string, string>, frames: string[]): Promise<() => Promise<void>>;
}

const variants: Variant[] = [
  {
    name: 'PostgreSQL LISTEN/NOTIFY',
    skip: IS_POSTGRES ? false : 'SQLite without Redis is a single node',
    env: () => ({}),
    tap: async (database, _env, frames) => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      client.on('notification', (n) => frames.push(n.payload ?? ''));
      await client.query(`listen "${channelFor(database.schema)}"`);
      return () => client.end();
    },
  },
  {
    name: 'Redis pub/sub',
    skip: redisUp ? false : 'no Redis answers (set REDIS_TEST_URL to require one)',
    env: () => ({ REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix('stream') }),
    tap: async (_database, env, frames) => {
      const subscriber = new Redis(REDIS_URL);
      subscriber.on('message', (_channel: string, raw: string) => frames.push(raw));
      await subscriber.subscribe(`${env.REDIS_KEY_PREFIX}stream`);
      return async () => {
        subscriber.disconnect();
      };
    },
  },
];

/** Polls a condition of a node's hub (it learns of the other's streams over the transport). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within 5 s: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const locationOf = (deviceId: string, lng: number) => (m: SseMessage) =>
  m.event === 'location' &&
  (m.data as { device_id: string }).device_id === deviceId &&
  (m.data as { lng: number }).lng === lng;

for (const variant of variants) {
  describe(`two nodes, stream over ${variant.name}`, { skip: variant.skip }, () => {
    let shared: TestDatabase;
    let one: TestApp;
    let two: TestApp;
    let baseOne: string;
    let baseTwo: string;
    let user: SignedUpUser;
    let jwt: { token: string };
    let env: Record<string, string>;
    const frames: string[] = [];
    let untap: (() => Promise<void>) | undefined;
    const open: SseStream[] = [];

    before(async () => {
      env = { ...variant.env(), DEFAULT_PLAN: 'enterprise' };
      shared = await createSharedTestDatabase();
      one = await startIdentityApp({ database: shared, env });
      two = await startIdentityApp({ database: shared, env });
      baseOne = await listen(one.app);
      baseTwo = await listen(two.app);
      untap = await variant.tap(shared, env, frames);
      user = await signUp(one, 'nodes');
      jwt = { token: user.tokens.access_token };
    });
    after(async () => {
      await Promise.all(open.map((s) => s.close()));
      await untap?.();
      await two?.close();
      await one?.close();
      await shared?.drop();
    });

    async function connect(base: string, credentials: { token?: string; streamToken?: string }) {
      const stream = await SseStream.connect(base, credentials);
      open.push(stream);
      return stream;
    }

    test('a location posted to node 1 reaches streams on node 2 and node 1, exactly once each', async () => {
      const workspaceId = user.workspace.id;
      await createGeofence(one, jwt, { name: 'Depot', geometry: circle(13.4, 52.5, 300) });
      const device = await createDevice(one, jwt, { name: 'Truck 7' });
      // A stream token issued by node 1 opens a stream on node 2.
      const issued = expectStatus<{ token: string }>(
        await call(one, '/stream/tokens', { method: 'POST', ...jwt }),
        201,
      );
      const onTwo = await connect(baseTwo, { streamToken: issued.token });
      await eventually(() => one.deps.stream.wanted(workspaceId), 'node 1 hears of the stream on node 2');
      const onOne = await connect(baseOne, jwt);

      // Each post waits until its frame is on the channel: frames reach every listener in the
      // order the channel got them, so a node's own frames (which it must ignore) come back to it
      // before any later sentinel from the other node.
      const post = async (node: TestApp, lng: number) => {
        const answer = await postLocation(node, jwt, device.id, { coordinates: [lng, 52.5] });
        await eventually(() => frames.some((f) => f.includes(`"lng":${lng},`)), `the frame of ${lng}`);
        return answer;
      };
      const enter = (await post(one, 13.4)).events[0] as EventOut;
      // Node 2 ingests the next one: node 1's stream gets it over the transport.
      const exit = (await post(two, 13.5)).events[0] as EventOut;
      assert.deepEqual([enter?.event_type, exit?.event_type], ['enter', 'exit']);
      await post(two, 13.6); // the sentinel for node 1's stream
      await post(one, 13.7); // the sentinel for node 2's stream
      for (const [name, stream] of [
        ['node 1', onOne],
        ['node 2', onTwo],
      ] as const) {
        await stream.next(locationOf(device.id, 13.6), `13.6 on ${name}`);
        await stream.next(locationOf(device.id, 13.7), `13.7 on ${name}`);
        const lngs = stream.of('location').map((m) => (m.data as { lng: number }).lng);
        assert.deepEqual(
          lngs.filter((lng) => lng < 13.7).sort(),
          [13.4, 13.5, 13.6],
          `${name}: each location once, from either node`,
        );
        // Each node sends what it committed in order; across nodes the order is not kept (a node's
        // own commits reach its streams before the other's frames arrive): clients order by
        // `occurred_at` and `recorded_at` (ADR 016).
        assert.deepEqual(
          stream
            .of('geofence_event')
            .map((m) => m.id)
            .sort(),
          [enter.id, exit.id].sort(),
          `${name}: each event once`,
        );
        assert.deepEqual(
          stream.of('geofence_event').find((m) => m.id === enter.id)?.data,
          expectStatus(await call(two, `/events/${enter.id}`, jwt), 200),
          `${name}: the event as GET /events/{id} shows it`,
        );
      }
    });

    test('an event larger than a NOTIFY payload arrives whole on the other node', async () => {
      const big = await signUp(one, 'big');
      const bigJwt = { token: big.tokens.access_token };
      // Two-, three- and four-byte characters: parts are cut between characters, never inside one.
      const notes = 'Zürich €-Lager 😀 '.repeat(1_500);
      await createGeofence(one, bigJwt, {
        name: 'Big',
        geometry: circle(8.54, 47.37, 300),
        metadata: { notes },
      });
      const device = await createDevice(one, bigJwt, { name: 'heavy' });
      const onTwo = await connect(baseTwo, bigJwt);
      await eventually(() => one.deps.stream.wanted(big.workspace.id), 'node 1 hears of the stream');
      const from = frames.length;
      const entered = await postLocation(one, bigJwt, device.id, { coordinates: [8.54, 47.37] });
      const enter = entered.events[0] as EventOut;
      const message = await onTwo.next((m) => m.id === enter.id, 'the large event on node 2');
      assert.deepEqual(message.data, expectStatus(await call(one, `/events/${enter.id}`, bigJwt), 200));
      assert.equal((message.data as EventOut).metadata.geofence_metadata.notes, notes);
      if (variant.name.startsWith('PostgreSQL')) {
        const parts = () => frames.slice(from).filter((f) => f.startsWith('#'));
        // The tap is a listener of its own and may hear the last parts after node 2 did.
        await eventually(() => parts().length >= 5, 'the frame cut into at least 5 NOTIFY payloads');
        assert.ok(parts().every((p) => Buffer.byteLength(p) < 8_000));
      }
    });

    test('a workspace nobody watches costs no traffic between the nodes', async () => {
      const quiet = await signUp(one, 'quiet');
      const quietJwt = { token: quiet.tokens.access_token };
      const quietDevice = await createDevice(one, quietJwt, { name: 'unwatched' });
      const watched = await signUp(one, 'watched');
      const watchedJwt = { token: watched.tokens.access_token };
      const watchedDevice = await createDevice(one, watchedJwt, { name: 'watched' });
      const onTwo = await connect(baseTwo, watchedJwt);
      await eventually(() => one.deps.stream.wanted(watched.workspace.id), 'node 1 hears of the stream');

      const from = frames.length;
      await postLocation(one, quietJwt, quietDevice.id, { coordinates: [1, 1] });
      await postLocation(one, watchedJwt, watchedDevice.id, { coordinates: [2, 2] });
      await onTwo.next(locationOf(watchedDevice.id, 2), 'the watched location on node 2');
      // The tap is a listener of its own and may hear the frame after node 2 did. Frames reach every
      // listener in channel order, so once it has the watched one it has anything posted before.
      await eventually(
        () => frames.slice(from).some((f) => f.includes(watchedDevice.id)),
        'the watched device went over the transport',
      );
      const sent = frames.slice(from).join('\n');
      assert.ok(!sent.includes(quietDevice.id), 'the unwatched device did not');
      assert.ok(!sent.includes(quiet.workspace.id), 'nor anything of its workspace');
    });

    test('when the last stream of a workspace closes, the other node stops sending at once', async () => {
      const other = await signUp(two, 'leaving');
      const otherJwt = { token: other.tokens.access_token };
      const stream = await connect(baseTwo, otherJwt);
      await eventually(() => one.deps.stream.wanted(other.workspace.id), 'node 1 hears of the stream');
      await stream.close();
      await eventually(() => !one.deps.stream.wanted(other.workspace.id), 'node 1 hears it closed');
    });
  });
}
