/**
 * The `database` action against the local PostgreSQL (WORKFLOW_PG_URL, default
 * postgres://postgres@127.0.0.1:5432/test, needed whatever TEST_DATABASE_URL says), and against
 * small TCP servers on 127.0.0.1 that speak as much of the PostgreSQL protocol as a case needs
 * (nothing at all, a password request, a ready session that never answers, TLS).
 *
 * Each run gets a role and a schema of the same name `wf_<random>`: the role's search path
 * (`"$user"`) puts unqualified tables there, and it owns nothing else. Both are dropped at the end.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TLSSocket } from 'node:tls';
import pg from 'pg';
import { Agent } from 'undici';
import { classifyAddress } from '../../../src/outbound/outbound-guard.ts';
import type { ActionConfigs } from '../../../src/workflows/action-configs.schemas.ts';
import type { ActionRuntime } from '../../../src/workflows/actions/action.ts';
import { databaseAction } from '../../../src/workflows/actions/database.ts';
import {
  PostgresDatabaseTargets,
  type PostgresDatabaseTargetsOptions,
} from '../../../src/workflows/database-targets.ts';
import type { TemplateContext } from '../../../src/workflows/templates.ts';

const PG_URL = process.env.WORKFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgUrl = new URL(PG_URL);
const PG_PORT = pgUrl.port === '' ? 5432 : Number(pgUrl.port);
const PG_DATABASE = pgUrl.pathname.slice(1);

const NAME = `wf_${randomBytes(6).toString('hex')}`;
const LOCKED = `${NAME}_locked`;
/** The run's role, connecting without a password (the local server trusts 127.0.0.1). */
const ROLE_URL = `postgres://${NAME}@127.0.0.1:${PG_PORT}/${PG_DATABASE}`;

const loopbackIsPublic = (ip: string) => (ip.startsWith('127.') ? null : classifyAddress(ip));
const resolvesTo = (address: string) => async () => [{ address, family: 4 }];

function targetsWith(options: Partial<PostgresDatabaseTargetsOptions> = {}): PostgresDatabaseTargets {
  return new PostgresDatabaseTargets({
    timeoutMs: 5000,
    allowPrivateTargets: true,
    applicationName: NAME,
    ...options,
  });
}

const payload = {
  event: 'geofence.enter',
  event_id: 'evt_01HZX',
  occurred_at: '2026-03-01T10:00:00.000Z',
  device: { id: 'd1', name: 'Truck "7"' },
  geofence: { id: 'g1', name: "Depot'; drop table x; --" },
  point: { lat: 52.52, lng: 13.405 },
};

function contextFor(eventId: string): TemplateContext {
  return {
    event: 'geofence.enter',
    event_type: 'enter',
    event_id: eventId,
    occurred_at: payload.occurred_at,
    geofence: { id: 'g1', name: payload.geofence.name, metadata: {} },
    device: { id: 'd1', name: payload.device.name, external_id: null, user_id: null, metadata: {} },
    point: payload.point,
    metadata: {},
    workflow: { id: 'w1', name: 'Depot arrivals' },
    payload_json: JSON.stringify({ ...payload, event_id: eventId }),
    test: false,
  };
}

const row = (eventId: string) => ({
  eventId,
  eventType: 'geofence.exit',
  payload: JSON.stringify({ ...payload, event_id: eventId }),
  createdAt: new Date('2026-03-01T10:00:05.000Z'),
});

/** A TCP server on 127.0.0.1 answering as a PostgreSQL server would, as far as `mode` goes. */
type FakeMode = 'silent' | 'ask-password' | 'ready';

interface FakePostgres {
  port: number;
  connections: number;
  passwords: string[];
  /** The TLS server name (SNI) each TLS client sent (none recorded when it sent none). */
  servernames: string[];
  close(): Promise<void>;
}

const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const message = (type: string, body: Buffer) =>
  Buffer.concat([Buffer.from(type), int32(body.length + 4), body]);
const SSL_REQUEST = 80877103;

async function startFakePostgres(mode: FakeMode, tls?: { key: string; cert: string }): Promise<FakePostgres> {
  const sockets = new Set<Socket>();
  const fake: Omit<FakePostgres, 'port' | 'close'> = { connections: 0, passwords: [], servernames: [] };

  const speak = (socket: Socket, alreadyRead: Buffer, startupDone: boolean) => {
    let buffered = alreadyRead;
    let started = startupDone;
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (!started) {
          if (buffered.length < 8) return;
          const length = buffered.readInt32BE(0);
          if (buffered.length < length) return;
          const code = buffered.readInt32BE(4);
          buffered = buffered.subarray(length);
          if (code === SSL_REQUEST) {
            if (tls === undefined) {
              socket.write('N');
              continue;
            }
            socket.off('data', onData);
            socket.write('S');
            const secure = new TLSSocket(socket, {
              isServer: true,
              key: tls.key,
              cert: tls.cert,
              // Called before the client verifies anything, so refused handshakes are seen too.
              SNICallback: (servername, done) => {
                fake.servernames.push(servername);
                done(null, undefined);
              },
            });
            secure.on('error', () => {});
            sockets.add(secure);
            speak(secure, buffered, false);
            return;
          }
          started = true;
          if (mode === 'ask-password') socket.write(message('R', int32(3))); // cleartext password
          if (mode === 'ready')
            socket.write(Buffer.concat([message('R', int32(0)), message('Z', Buffer.from('I'))]));
          continue;
        }
        if (buffered.length < 5) return;
        const type = String.fromCharCode(buffered[0] ?? 0);
        const length = buffered.readInt32BE(1);
        if (buffered.length < length + 1) return;
        const body = buffered.subarray(5, length + 1);
        buffered = buffered.subarray(length + 1);
        if (type === 'p') {
          fake.passwords.push(body.subarray(0, body.length - 1).toString('utf8'));
          const fields = [
            'SFATAL',
            'VFATAL',
            'C28P01',
            `Mpassword authentication failed for user "customer"`,
          ];
          socket.end(message('E', Buffer.from(`${fields.join('\0')}\0\0`)));
          return;
        }
        if (type === 'X') {
          socket.end();
          return;
        }
        // Any query of a 'ready' session stays unanswered.
      }
    };
    socket.on('data', onData);
    if (alreadyRead.length > 0) onData(Buffer.alloc(0));
  };

  const server: Server = createServer((socket) => {
    fake.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (mode !== 'silent' || tls !== undefined) speak(socket, Buffer.alloc(0), false);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(fake, {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  // Only a bound on waiting for the server to notice closed connections; nothing is timed.
  for (let i = 0; i < 100; i += 1) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`still not true after 5 s: ${what}`);
}

describe('database action', () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  const dispatcher = new Agent();

  const runtimeWith = (databases: PostgresDatabaseTargets): ActionRuntime => ({
    dispatcher,
    allowPrivateTargets: true,
    timeoutMs: 5000,
    mail: {
      sendNow: () => {
        throw new Error('a database action sends no mail');
      },
    },
    databases,
  });

  const sessionsOfThisRun = async (): Promise<number> => {
    const found = await admin.query<{ n: number }>(
      'select count(*)::int as n from pg_stat_activity where application_name = $1',
      [NAME],
    );
    return found.rows[0]?.n ?? -1;
  };

  before(async () => {
    await admin.connect();
    await admin.query(`create role ${NAME} login`);
    await admin.query(`create schema ${NAME} authorization ${NAME}`);
    // A schema the role may not create tables in, with one table it may only insert into.
    await admin.query(`create schema ${LOCKED}`);
    await admin.query(`grant usage on schema ${LOCKED} to ${NAME}`);
    await admin.query(
      `create table ${LOCKED}.events (id bigserial primary key, event_id text not null, event_type text not null, payload jsonb not null, created_at timestamptz not null)`,
    );
    await admin.query(`grant insert, select (id) on ${LOCKED}.events to ${NAME}`);
    await admin.query(`grant usage on sequence ${LOCKED}.events_id_seq to ${NAME}`);
  });

  after(async () => {
    await dispatcher.close();
    await admin.query(`drop schema if exists ${NAME} cascade`);
    await admin.query(`drop schema if exists ${LOCKED} cascade`);
    await admin.query(`drop role if exists ${NAME}`);
    await admin.end();
  });

  it('creates the table with the documented columns and inserts the event as a row', async () => {
    const targets = targetsWith();
    try {
      const context = contextFor('evt_first');
      const config: ActionConfigs['database'] = { connection_url: ROLE_URL, table: 'arrivals' };
      const before = new Date();
      const outcome = await databaseAction.execute(config, context, runtimeWith(targets));
      const afterInsert = new Date();
      assert.deepEqual(outcome, {
        success: true,
        statusCode: null,
        errorMessage: null,
        responseExcerpt: '{"table":"arrivals","id":"1"}',
      });

      const columns = await admin.query(
        `select column_name, data_type, is_nullable, column_default from information_schema.columns
          where table_schema = $1 and table_name = 'arrivals' order by ordinal_position`,
        [NAME],
      );
      assert.deepEqual(
        columns.rows.map((c) => [c.column_name, c.data_type, c.is_nullable]),
        [
          ['id', 'bigint', 'NO'],
          ['event_id', 'text', 'NO'],
          ['event_type', 'text', 'NO'],
          ['payload', 'jsonb', 'NO'],
          ['created_at', 'timestamp with time zone', 'NO'],
        ],
      );
      assert.match(String(columns.rows[0]?.column_default), /^nextval\(/);
      const key = await admin.query(
        `select a.attname from pg_index i join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
          where i.indrelid = $1::regclass and i.indisprimary`,
        [`${NAME}.arrivals`],
      );
      assert.deepEqual(
        key.rows.map((r) => r.attname),
        ['id'],
      );

      const rows = await admin.query(`select * from ${NAME}.arrivals`);
      assert.equal(rows.rows.length, 1);
      const inserted = rows.rows[0];
      assert.equal(inserted.id, '1');
      assert.equal(inserted.event_id, 'evt_first');
      assert.equal(inserted.event_type, 'geofence.enter');
      assert.deepEqual(inserted.payload, JSON.parse(context.payload_json));
      // created_at is when the row was written, not when the event happened.
      assert.ok(inserted.created_at >= new Date(before.getTime() - 1));
      assert.ok(inserted.created_at <= new Date(afterInsert.getTime() + 1));
    } finally {
      await targets.close();
    }
  });

  it('inserts into an existing table as it is, and reuses it for later events', async () => {
    await admin.query(
      `create table ${NAME}.existing (id bigserial primary key, event_id text not null, event_type text not null, payload jsonb not null, created_at timestamptz not null, note text default 'made beforehand')`,
    );
    await admin.query(`alter table ${NAME}.existing owner to ${NAME}`);
    const targets = targetsWith();
    try {
      const first = await targets.insertEvent(ROLE_URL, 'existing', row('evt_a'));
      const second = await targets.insertEvent(ROLE_URL, 'existing', row('evt_b'));
      assert.equal(first, '1');
      assert.equal(second, '2');
      const rows = await admin.query(
        `select id, event_id, event_type, created_at, note from ${NAME}.existing order by id`,
      );
      assert.deepEqual(rows.rows, [
        {
          id: '1',
          event_id: 'evt_a',
          event_type: 'geofence.exit',
          created_at: row('').createdAt,
          note: 'made beforehand',
        },
        {
          id: '2',
          event_id: 'evt_b',
          event_type: 'geofence.exit',
          created_at: row('').createdAt,
          note: 'made beforehand',
        },
      ]);
      assert.equal(targets.openPools, 1);
    } finally {
      await targets.close();
    }
  });

  it('creates a table once when the first events for it arrive together', async () => {
    const targets = targetsWith();
    try {
      const ids = await Promise.all(
        ['a', 'b', 'c', 'd', 'e'].map((n) => targets.insertEvent(ROLE_URL, 'together', row(`evt_${n}`))),
      );
      assert.deepEqual([...ids].sort(), ['1', '2', '3', '4', '5']);
      const count = await admin.query(`select count(*)::int as n from ${NAME}.together`);
      assert.equal(count.rows[0]?.n, 5);
    } finally {
      await targets.close();
    }
  });

  it('writes rows that arrive together with one INSERT, each caller getting its own id', async () => {
    const targets = targetsWith();
    try {
      const names = Array.from({ length: 40 }, (_, i) => `evt_batch_${i}`);
      // Twice the same event too: two actions of one workflow may write one event to one table.
      const ids = await Promise.all(
        [...names, 'evt_batch_0'].map((n) => targets.insertEvent(ROLE_URL, 'batched', row(n))),
      );
      assert.equal(new Set(ids).size, 41, 'every row its own id');
      const rows = await admin.query<{ id: string; event_id: string }>(
        `select id::text, event_id from ${NAME}.batched`,
      );
      const stored = new Map(rows.rows.map((r) => [r.id, r.event_id]));
      [...names, 'evt_batch_0'].forEach((n, i) => {
        assert.equal(stored.get(ids[i] as string), n, 'the id given back is the id of that row');
      });
      const statements = await admin.query<{ n: number }>(
        `select count(distinct xmin::text)::int as n from ${NAME}.batched`,
      );
      assert.equal(statements.rows[0]?.n, 1, 'one statement (one transaction) wrote them all');
    } finally {
      await targets.close();
    }
  });

  it('a row the table refuses fails its own action only, not the others written with it', async () => {
    const targets = targetsWith();
    try {
      await admin.query(
        `create table ${NAME}.picky (id bigserial primary key, event_id text not null check (event_id <> 'evt_bad'), event_type text not null, payload jsonb not null, created_at timestamptz not null)`,
      );
      await admin.query(`alter table ${NAME}.picky owner to ${NAME}`);
      const outcomes = await Promise.allSettled(
        ['evt_ok_1', 'evt_bad', 'evt_ok_2'].map((n) => targets.insertEvent(ROLE_URL, 'picky', row(n))),
      );
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      const count = await admin.query(`select count(*)::int as n from ${NAME}.picky`);
      assert.equal(count.rows[0]?.n, 2);
    } finally {
      await targets.close();
    }
  });

  it('creates the table again when it was dropped since', async () => {
    const targets = targetsWith();
    try {
      await targets.insertEvent(ROLE_URL, 'dropped', row('evt_1'));
      await admin.query(`drop table ${NAME}.dropped`);
      assert.equal(await targets.insertEvent(ROLE_URL, 'dropped', row('evt_2')), '1');
      const rows = await admin.query(`select event_id from ${NAME}.dropped`);
      assert.deepEqual(rows.rows, [{ event_id: 'evt_2' }]);
    } finally {
      await targets.close();
    }
  });

  it('takes a schema-qualified table name, and a name exactly as written', async () => {
    const targets = targetsWith();
    try {
      // As the superuser, whose search path would not find the run's schema.
      await targets.insertEvent(PG_URL, `${NAME}.qualified`, row('evt_q'));
      await targets.insertEvent(ROLE_URL, 'MixedCase', row('evt_m'));
      const tables = await admin.query(
        'select table_name from information_schema.tables where table_schema = $1 order by table_name',
        [NAME],
      );
      assert.ok(tables.rows.some((t) => t.table_name === 'qualified'));
      assert.ok(tables.rows.some((t) => t.table_name === 'MixedCase'));
      const rows = await admin.query(`select event_id from ${NAME}."MixedCase"`);
      assert.deepEqual(rows.rows, [{ event_id: 'evt_m' }]);
    } finally {
      await targets.close();
    }
  });

  it('inserts into a table made beforehand with a role that may not create tables', async () => {
    const targets = targetsWith();
    try {
      assert.equal(await targets.insertEvent(ROLE_URL, `${LOCKED}.events`, row('evt_locked')), '1');
      await assert.rejects(targets.insertEvent(ROLE_URL, `${LOCKED}.absent`, row('evt_x')), {
        name: 'DatabaseTargetError',
        message: `127.0.0.1:${PG_PORT}/${PG_DATABASE}: permission denied for schema ${LOCKED} (SQLSTATE 42501)`,
      });
    } finally {
      await targets.close();
    }
  });

  it('refuses a table name that is not a plain identifier before any connection', async () => {
    const fake = await startFakePostgres('ready');
    const targets = targetsWith();
    try {
      const url = `postgres://customer:pw@127.0.0.1:${fake.port}/crm`;
      for (const table of [
        'x"; drop table y; --',
        'a.b.c',
        '1events',
        '',
        'e'.repeat(64),
        'a b',
        'sch."t"',
      ]) {
        await assert.rejects(
          targets.insertEvent(url, table, row('evt')),
          /^DatabaseTargetError: Invalid table name/,
        );
        const outcome = await databaseAction.execute(
          { connection_url: url, table },
          contextFor('e'),
          runtimeWith(targets),
        );
        assert.equal(outcome.success, false);
        assert.match(outcome.errorMessage ?? '', /^Invalid table name/);
      }
      assert.equal(fake.connections, 0);
      assert.equal(targets.openPools, 0);
      // The longest names allowed pass.
      assert.equal(await targets.insertEvent(ROLE_URL, `${NAME}.${'t'.repeat(63)}`, row('evt_long')), '1');
    } finally {
      await targets.close();
      await fake.close();
    }
  });

  it('refuses a private host unless private targets are allowed, without connecting', async () => {
    const fake = await startFakePostgres('ready');
    const targets = targetsWith({ allowPrivateTargets: false, lookup: resolvesTo('10.1.2.3') });
    try {
      const literal = await databaseAction.execute(
        { connection_url: `postgres://u:pw@127.0.0.1:${fake.port}/test`, table: 'events' },
        contextFor('e'),
        runtimeWith(targets),
      );
      assert.deepEqual(literal, {
        success: false,
        statusCode: null,
        errorMessage:
          'Refused to connect to 127.0.0.1: it is a loopback address (set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets); nothing was sent',
        responseExcerpt: null,
      });
      await assert.rejects(
        targets.insertEvent(`postgres://u:pw@db.customer.test:${fake.port}/test`, 'events', row('e')),
        {
          message:
            'Refused to connect to db.customer.test: it resolves to 10.1.2.3, a private (RFC 1918) address (set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets); nothing was sent',
        },
      );
      assert.equal(fake.connections, 0);
      assert.equal(targets.openPools, 0);
    } finally {
      await targets.close();
      await fake.close();
    }
  });

  it('connects to the address the guard checked, not to the name', async () => {
    // db.customer.test exists nowhere but in this lookup: the row arrives only if pg is given the
    // checked address.
    const targets = targetsWith({
      allowPrivateTargets: false,
      lookup: resolvesTo('127.0.0.1'),
      classify: loopbackIsPublic,
    });
    try {
      const url = `postgres://${NAME}@db.customer.test:${PG_PORT}/${PG_DATABASE}`;
      assert.equal(await targets.insertEvent(url, 'guarded', row('evt_g')), '1');
      const rows = await admin.query(`select event_id from ${NAME}.guarded`);
      assert.deepEqual(rows.rows, [{ event_id: 'evt_g' }]);
    } finally {
      await targets.close();
    }
  });

  it('keeps a pool through statement errors, and opens a new one (resolving again) after a connection failure', async () => {
    const fake = await startFakePostgres('ask-password');
    const lookups: string[] = [];
    const targets = targetsWith({
      allowPrivateTargets: false,
      lookup: async (host) => {
        lookups.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
      classify: loopbackIsPublic,
    });
    try {
      const working = `postgres://${NAME}@db.customer.test:${PG_PORT}/${PG_DATABASE}`;
      await targets.insertEvent(working, 'kept', row('evt_1'));
      await assert.rejects(
        targets.insertEvent(working, `${LOCKED}.absent`, row('evt_2')),
        /permission denied/,
      );
      await targets.insertEvent(working, 'kept', row('evt_3'));
      assert.deepEqual(lookups, ['db.customer.test']);
      assert.equal(targets.openPools, 1);

      const failing = `postgres://customer:pw@other.customer.test:${fake.port}/crm`;
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        await assert.rejects(targets.insertEvent(failing, 'events', row('e')), /authentication failed/);
        assert.equal(targets.openPools, 1, 'the failed pool is not kept');
      }
      assert.deepEqual(lookups, ['db.customer.test', 'other.customer.test', 'other.customer.test']);
      assert.equal(fake.connections, 2);
    } finally {
      await targets.close();
      await fake.close();
    }
  });

  it('reports an unreachable port without the password or the URL', async () => {
    const port = await closedPort();
    const targets = targetsWith();
    try {
      const url = `postgres://customer:Sup3r-Secret-pw@127.0.0.1:${port}/crm`;
      const outcome = await databaseAction.execute(
        { connection_url: url, table: 'events' },
        contextFor('e'),
        runtimeWith(targets),
      );
      assert.equal(
        outcome.errorMessage,
        `127.0.0.1:${port}/crm: connection refused (is PostgreSQL listening on that host and port?)`,
      );
    } finally {
      await targets.close();
    }
  });

  it('reports a database that does not exist without the password', async () => {
    const targets = targetsWith();
    try {
      const url = `postgres://postgres:Sup3r-Secret-pw@127.0.0.1:${PG_PORT}/${NAME}_missing`;
      const outcome = await databaseAction.execute(
        { connection_url: url, table: 'events' },
        contextFor('e'),
        runtimeWith(targets),
      );
      assert.equal(
        outcome.errorMessage,
        `127.0.0.1:${PG_PORT}/${NAME}_missing: database "${NAME}_missing" does not exist (SQLSTATE 3D000)`,
      );
      assert.ok(!outcome.errorMessage?.includes('Sup3r'));
    } finally {
      await targets.close();
    }
  });

  it('sends the password to the server only, and reports a refused one without it', async () => {
    const fake = await startFakePostgres('ask-password');
    const targets = targetsWith();
    try {
      const url = `postgres://customer:p%40ss-w0rd!Secret@127.0.0.1:${fake.port}/crm`;
      const outcome = await databaseAction.execute(
        { connection_url: url, table: 'events' },
        contextFor('e'),
        runtimeWith(targets),
      );
      assert.deepEqual(fake.passwords, ['p@ss-w0rd!Secret']);
      assert.equal(
        outcome.errorMessage,
        `127.0.0.1:${fake.port}/crm: authentication failed: password authentication failed for user "customer"`,
      );
      for (const secret of ['p@ss-w0rd!Secret', 'p%40ss-w0rd!Secret', url]) {
        assert.ok(!outcome.errorMessage?.includes(secret), `the message holds ${secret}`);
      }
    } finally {
      await targets.close();
      await fake.close();
    }
  });

  it('never answers a password request with our own credentials when the URL has none', async () => {
    const fake = await startFakePostgres('ask-password');
    const targets = targetsWith();
    const saved = process.env.PGPASSWORD;
    process.env.PGPASSWORD = 'the-service-own-password';
    try {
      await assert.rejects(
        targets.insertEvent(`postgres://customer@127.0.0.1:${fake.port}/crm`, 'events', row('e')),
        /authentication failed/,
      );
      assert.deepEqual(fake.passwords, ['']);
    } finally {
      if (saved === undefined) delete process.env.PGPASSWORD;
      else process.env.PGPASSWORD = saved;
      await targets.close();
      await fake.close();
    }
  });

  it('gives up connecting to a server that accepts and never answers', async () => {
    const fake = await startFakePostgres('silent');
    const targets = targetsWith({ timeoutMs: 300 });
    try {
      await assert.rejects(
        targets.insertEvent(`postgres://customer:pw@127.0.0.1:${fake.port}/crm`, 'events', row('e')),
        {
          name: 'DatabaseTargetError',
          message: `127.0.0.1:${fake.port}/crm: no connection within 300 ms`,
        },
      );
      assert.equal(fake.connections, 1);
    } finally {
      await targets.close();
      await fake.close();
    }
  });

  it('gives up waiting for a server that takes the session and never answers the statement', async () => {
    const fake = await startFakePostgres('ready');
    const targets = targetsWith({ timeoutMs: 200 });
    try {
      await assert.rejects(
        targets.insertEvent(`postgres://customer:pw@127.0.0.1:${fake.port}/crm`, 'events', row('e')),
        {
          name: 'DatabaseTargetError',
          message: `127.0.0.1:${fake.port}/crm: no answer within 1200 ms`,
        },
      );
    } finally {
      await targets.close();
      await fake.close();
    }
  });

  describe('over TLS (sslmode)', () => {
    let dir = '';
    let tls = { key: '', cert: '' };

    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'wf-db-tls-'));
      // A throwaway self-signed certificate for db.customer.test only.
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-days',
          '1',
          '-subj',
          '/CN=db.customer.test',
          '-addext',
          'subjectAltName=DNS:db.customer.test',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      tls = {
        key: readFileSync(join(dir, 'key.pem'), 'utf8'),
        cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
      };
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    const guarded = (ca?: string) =>
      targetsWith({
        allowPrivateTargets: false,
        lookup: resolvesTo('127.0.0.1'),
        classify: loopbackIsPublic,
        ...(ca === undefined ? {} : { ca }),
      });

    it('verifies the certificate against the URL host name while connecting to the checked address', async () => {
      const fake = await startFakePostgres('ask-password', tls);
      const trusting = guarded(tls.cert);
      const untrusting = guarded();
      try {
        // The TLS session is established: the password request and its refusal come through it.
        await assert.rejects(
          trusting.insertEvent(
            `postgres://customer:pw-123@db.customer.test:${fake.port}/crm?sslmode=verify-full`,
            'events',
            row('e'),
          ),
          {
            message: `db.customer.test:${fake.port}/crm: authentication failed: password authentication failed for user "customer"`,
          },
        );
        assert.deepEqual(fake.passwords, ['pw-123']);
        await assert.rejects(
          trusting.insertEvent(
            `postgres://customer:pw-123@other.customer.test:${fake.port}/crm?sslmode=require`,
            'events',
            row('e'),
          ),
          /^DatabaseTargetError: other\.customer\.test:\d+\/crm: TLS certificate not accepted: .*altnames/,
        );
        await assert.rejects(
          untrusting.insertEvent(
            `postgres://customer:pw-123@db.customer.test:${fake.port}/crm?sslmode=require`,
            'events',
            row('e'),
          ),
          /^DatabaseTargetError: db\.customer\.test:\d+\/crm: TLS certificate not accepted: self-signed certificate/,
        );
        assert.deepEqual(fake.servernames, ['db.customer.test', 'other.customer.test', 'db.customer.test']);
        assert.deepEqual(fake.passwords, ['pw-123']);
      } finally {
        await trusting.close();
        await untrusting.close();
        await fake.close();
      }
    });

    it('connects without TLS under sslmode=disable, and refuses an unknown sslmode before connecting', async () => {
      const fake = await startFakePostgres('ask-password', tls);
      const targets = guarded(tls.cert);
      try {
        await assert.rejects(
          targets.insertEvent(
            `postgres://customer:pw-456@db.customer.test:${fake.port}/crm?sslmode=disable`,
            'events',
            row('e'),
          ),
          /authentication failed/,
        );
        assert.deepEqual(fake.servernames, []);
        assert.deepEqual(fake.passwords, ['pw-456']);
        for (const sslmode of ['sometimes', 'toString']) {
          await assert.rejects(
            targets.insertEvent(
              `postgres://customer:pw@db.customer.test:${fake.port}/crm?sslmode=${sslmode}`,
              'events',
              row('e'),
            ),
            /^DatabaseTargetError: Unknown sslmode/,
          );
        }
        assert.equal(fake.connections, 1);
      } finally {
        await targets.close();
        await fake.close();
      }
    });
  });

  it('closes pools unused for a while, never one in use', async () => {
    let now = 1_000_000;
    const targets = targetsWith({ idlePoolMs: 60_000, now: () => now });
    const silent = await startFakePostgres('silent');
    try {
      await targets.insertEvent(ROLE_URL, 'swept', row('evt_1'));
      assert.equal(targets.openPools, 1);
      assert.ok((await sessionsOfThisRun()) >= 1);

      // Busy: an insert still waiting for its connection.
      const pending = targets.insertEvent(
        `postgres://customer:pw@127.0.0.1:${silent.port}/crm`,
        'events',
        row('e'),
      );
      pending.catch(() => {});
      await eventually(async () => silent.connections === 1, 'the silent server saw the connection');
      assert.equal(targets.openPools, 2);

      now += 59_999;
      assert.equal(await targets.closeIdlePools(), 0);
      now += 1;
      assert.equal(await targets.closeIdlePools(), 1, 'only the idle pool is closed');
      assert.equal(targets.openPools, 1);
      await eventually(async () => (await sessionsOfThisRun()) === 0, 'the idle pool’s sessions ended');

      await silent.close();
      // Its connection failed: that pool is ended at once rather than kept for the sweep.
      await assert.rejects(pending, /the server closed the connection/);
      assert.equal(targets.openPools, 0);
      now += 60_000;
      assert.equal(await targets.closeIdlePools(), 0);

      // A later event opens a new pool; the table is still there.
      assert.equal(await targets.insertEvent(ROLE_URL, 'swept', row('evt_2')), '2');
    } finally {
      await targets.close();
      await silent.close();
    }
  });

  it('close() ends every pool, and nothing is inserted afterwards', async () => {
    const targets = targetsWith();
    await targets.insertEvent(ROLE_URL, 'closing', row('evt_1'));
    await targets.insertEvent(
      `${PG_URL.replace(/\?.*$/, '')}?sslmode=disable`,
      `${NAME}.closing`,
      row('evt_2'),
    );
    assert.equal(targets.openPools, 2);
    assert.ok((await sessionsOfThisRun()) >= 2);
    await targets.close();
    assert.equal(targets.openPools, 0);
    await eventually(async () => (await sessionsOfThisRun()) === 0, 'every session ended');
    await assert.rejects(targets.insertEvent(ROLE_URL, 'closing', row('evt_3')), /closed/);
    const count = await admin.query(`select count(*)::int as n from ${NAME}.closing`);
    assert.equal(count.rows[0]?.n, 2);
  });

  it('reports a configuration without a connection URL', async () => {
    const targets = targetsWith();
    try {
      const outcome = await databaseAction.execute(
        { table: 'events' },
        contextFor('e'),
        runtimeWith(targets),
      );
      assert.deepEqual(outcome, {
        success: false,
        statusCode: null,
        errorMessage: 'No connection URL is configured; nothing was inserted',
        responseExcerpt: null,
      });
      assert.equal(targets.openPools, 0);
    } finally {
      await targets.close();
    }
  });
});
