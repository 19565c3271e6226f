/**
 * The reads of devices' last locations (devices/last-location.repository.ts) find each device's
 * newest location by its key in `device_last_locations`, one lookup per device, and read no
 * history at all: the lock read of ingestion (1,000 devices a batch), GET /devices/positions (every
 * located device) and retention's exclusion of each device's newest location never scan a
 * device's history or the workspace's. Checked on the plans the database gives for the statements
 * the code runs, not on timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { DatabaseSchema } from '../../src/db/schema.ts';
import type { Executor } from '../../src/db/transaction.ts';
import { newestLocations } from '../../src/devices/last-location.repository.ts';
import { devicePositions } from '../../src/devices/positions.repository.ts';
import { deleteLocationsReceivedBefore } from '../../src/locations/locations.repository.ts';
import type { TestApp } from '../helpers/app.ts';
import { IS_POSTGRES } from '../helpers/database.ts';
import { call, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import { explainQuery, QueryRecorder } from '../helpers/query-plans.ts';
import type { BatchOut } from '../locations/helpers.ts';

/** Runs queries on `db` and keeps the compiled ones (hand-built statements bypass Kysely plugins). */
function recording(db: Kysely<DatabaseSchema>): { executor: Executor; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const executor = {
    executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> {
      queries.push(query);
      return db.executeQuery(query);
    },
  } as unknown as Executor;
  return { executor, queries };
}

async function plan(db: Kysely<DatabaseSchema>, query: CompiledQuery): Promise<string> {
  if (!IS_POSTGRES) {
    const { rows } = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    return rows.map((r) => r.detail).join(' | ');
  }
  return db.transaction().execute(async (trx) => {
    await trx.executeQuery(CompiledQuery.raw('set local enable_seqscan = off'));
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
    );
    return rows.map((r) => r['QUERY PLAN']).join(' | ');
  });
}

/** A lookup of `device_last_locations` by its key (SQLite: a WITHOUT ROWID table, its key is the table). */
const NEWEST_BY_KEY =
  /SEARCH (n|newest|device_last_locations) USING PRIMARY KEY \(device_id=\?\)|Index Scan using device_last_locations_pkey|Index Only Scan using device_last_locations_pkey/;
/** Any read of the history tables. */
const HISTORY = /\blocations\b|locations_staged|locations_device_recorded_idx/;

describe('last location query plans', () => {
  let t: TestApp;
  let workspaceId: string;

  before(async () => {
    t = await startIdentityApp();
    const user = await signUp(t, 'last-plans');
    workspaceId = user.workspace.id;
    const locations = Array.from({ length: 60 }, (_, i) => ({
      device_external_id: `d-${i % 6}`,
      coordinates: [10 + i / 100, 20],
      timestamp: new Date(Date.parse('2026-03-10T10:00:00.000Z') + i * 1000).toISOString(),
    }));
    const res = await call(t, '/locations/batch', { token: user.tokens.access_token, body: { locations } });
    assert.equal(expectStatus<BatchOut>(res, 200, 'batch').accepted, 60);
  });
  after(async () => t?.close());

  test('the newest locations of given devices: one key lookup each', async () => {
    const db = t.deps.database.db;
    const ids = (
      await db.selectFrom('devices').select('id').where('workspace_id', '=', workspaceId).execute()
    ).map((r) => r.id);
    const { executor, queries } = recording(db);
    const newest = await newestLocations(executor, t.deps.database.capabilities, workspaceId, ids);
    assert.equal(newest.size, 6);
    assert.equal(queries.length, 1);
    const text = await plan(db, queries[0] as CompiledQuery);
    assert.match(text, NEWEST_BY_KEY, text);
    assert.doesNotMatch(text, HISTORY, text);
  });

  test('GET /devices/positions: one statement, each device by its key', async () => {
    const db = t.deps.database.db;
    const { executor, queries } = recording(db);
    const rows = await devicePositions(executor, t.deps.database.capabilities, workspaceId, 100);
    assert.equal(rows.length, 6);
    assert.equal(queries.length, 1);
    const text = await plan(db, queries[0] as CompiledQuery);
    assert.match(text, NEWEST_BY_KEY, text);
    assert.doesNotMatch(text, HISTORY, text);
  });

  test("retention's exclusion of each device's newest location goes by its key", async () => {
    const recorder = new QueryRecorder();
    const db = t.deps.database.db.withPlugin(recorder) as Kysely<DatabaseSchema>;
    await deleteLocationsReceivedBefore(db, workspaceId, new Date('2000-01-01T00:00:00.000Z'), 10);
    const text = await explainQuery(db, IS_POSTGRES ? 'postgres' : 'sqlite', recorder.nodes[0] as never, {
      avoidSeqScan: true,
    });
    assert.match(text, /locations_workspace_received_idx/, text);
    assert.match(text, NEWEST_BY_KEY, text);
    assert.doesNotMatch(text, /SCAN locations\b|Seq Scan on locations\b/, text);
  });
});
