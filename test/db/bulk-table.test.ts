/**
 * The declared many-row writers (src/db/bulk-table.ts): named rows become values in the declared
 * column order whatever order their keys were written in; a declaration or a row that does not fit
 * the Kysely table type does not compile (the `@ts-expect-error` lines, checked by `tsc` in
 * `npm run check`); and a declared writer stores its rows in the real schema on either database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config.ts';
import { bulkTable, bulkUpdate, type RowOf } from '../../src/db/bulk-table.ts';
import { fromJson, json, toBool, toDate } from '../../src/db/columns.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { insideSetWrites } from '../../src/devices/devices.tables.ts';
import { type GeofencesTable, geofenceWrites } from '../../src/geofences/geofences.tables.ts';
import { locationWrites } from '../../src/locations/locations.tables.ts';
import { deliveryOutcomeWrites, type WebhookDeliveriesTable } from '../../src/webhooks/deliveries.tables.ts';
import { createTestDatabase, IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';

const at = new Date('2026-03-10T12:34:56.789Z');

/** A location row written with its keys in reverse of the declared order. */
const reversedLocation: RowOf<typeof locationWrites> = {
  out_of_order: true,
  received_at: at,
  recorded_at: '2026-03-10T12:00:00.000Z',
  metadata: '{"a":1}',
  altitude: null,
  heading: 90,
  speed: 3.5,
  accuracy: null,
  lat: 52.5,
  lng: 13.4,
  session_id: null,
  device_id: 'd1',
  workspace_id: 'w1',
  id: 'l1',
};

const declaredLocationValues = [
  'l1',
  'w1',
  'd1',
  null,
  13.4,
  52.5,
  null,
  3.5,
  90,
  null,
  '{"a":1}',
  '2026-03-10T12:00:00.000Z',
  at,
  true,
];

describe('declared values order', () => {
  test('values come out in the declared column order, whatever order the keys were written in', () => {
    assert.deepEqual(
      locationWrites.columns.map((c) => c.name),
      [
        'id',
        'workspace_id',
        'device_id',
        'session_id',
        'lng',
        'lat',
        'accuracy',
        'speed',
        'heading',
        'altitude',
        'metadata',
        'recorded_at',
        'received_at',
        'out_of_order',
      ],
    );
    assert.deepEqual(locationWrites.values(reversedLocation), declaredLocationValues);
  });

  test('many rows, named by a function of each item, in one call', () => {
    const items = [{ n: 1 }, { n: 2 }];
    const values = locationWrites.valuesOf(items, ({ n }) => ({
      ...reversedLocation,
      id: `l${n}`,
      lng: n,
    }));
    assert.deepEqual(values, [
      ['l1', 'w1', 'd1', null, 1, ...declaredLocationValues.slice(5)],
      ['l2', 'w1', 'd1', null, 2, ...declaredLocationValues.slice(5)],
    ]);
    assert.deepEqual(locationWrites.valuesOf([reversedLocation]), [declaredLocationValues]);
  });

  test("an update's values are the id, then the set columns in the declared order", () => {
    assert.deepEqual(
      deliveryOutcomeWrites.values({
        lease_owner: null,
        due_at: at,
        next_retry_at: null,
        delivered_at: at,
        error_message: null,
        response_time_ms: 12.5,
        response_status_code: 200,
        attempt_count: 1,
        status: 'success',
        id: 'dl1',
      }),
      ['dl1', 'success', 1, 200, 12.5, null, at, null, at, null],
    );
    assert.deepEqual(
      deliveryOutcomeWrites.columns.map((c) => c.name),
      [
        'status',
        'attempt_count',
        'response_status_code',
        'response_time_ms',
        'error_message',
        'delivered_at',
        'next_retry_at',
        'due_at',
        'lease_owner',
      ],
    );
  });
});

/** Never called: what `tsc` must refuse (each `@ts-expect-error` fails the check if its line compiles). */
export function declarationsThatDoNotCompile(): void {
  // A column the table does not have, beside ones it has.
  // @ts-expect-error `nope` is not a column of webhook_deliveries
  bulkTable<WebhookDeliveriesTable>()('webhook_deliveries', { id: 'text', nope: 'text' });
  // A bulk type that cannot write the column.
  // @ts-expect-error `attempt_count` is a number: integer or double
  bulkTable<WebhookDeliveriesTable>()('webhook_deliveries', { id: 'text', attempt_count: 'text' });
  // @ts-expect-error `geometry` is a JSON column
  bulkTable<GeofencesTable>()('geofences', { id: 'text', geometry: 'text' });
  // An update sets columns; the id is the key, not one of them.
  // @ts-expect-error `id` cannot be declared in an update
  bulkUpdate<WebhookDeliveriesTable>()('webhook_deliveries', { id: 'text', status: 'text' });

  const writes = bulkTable<WebhookDeliveriesTable>()('webhook_deliveries', {
    id: 'text',
    status: 'text',
    attempt_count: 'integer',
    next_retry_at: 'timestamp',
  });
  type Row = RowOf<typeof writes>;
  const fine: Row = { id: 'd', status: 'pending', attempt_count: 0, next_retry_at: null };
  // @ts-expect-error a number for a text column
  const numberForText: Row = { id: 1, status: 'pending', attempt_count: 0, next_retry_at: null };
  // @ts-expect-error text for an integer column
  const textForInteger: Row = { id: 'd', status: 'pending', attempt_count: '0', next_retry_at: null };
  // @ts-expect-error a status the column does not have
  const unknownStatus: Row = { id: 'd', status: 'queued', attempt_count: 0, next_retry_at: null };
  // @ts-expect-error null for a column that is not nullable
  const nullId: Row = { id: null, status: 'pending', attempt_count: 0, next_retry_at: null };
  // @ts-expect-error a declared column missing from the row
  const missing: Row = { id: 'd', status: 'pending', next_retry_at: null };
  // @ts-expect-error a boolean for a timestamp column
  const boolForTimestamp: Row = { id: 'd', status: 'pending', attempt_count: 0, next_retry_at: true };
  void [fine, numberForText, textForInteger, unknownStatus, nullId, missing, boolForTimestamp];

  const handle = undefined as unknown as DatabaseHandle;
  // @ts-expect-error the rows named for each item are checked too
  void writes.insert(handle.db, handle.capabilities, [1], (n) => ({ ...fine, attempt_count: `${n}` }));
  // @ts-expect-error a guard names a column of the table
  void deliveryOutcomeWrites.updateById(handle.db, handle.capabilities, [], { column: 'nope', value: 'w' });
}

describe(`declared writers on ${IS_POSTGRES ? 'PostgreSQL' : 'SQLite'}`, () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;

  before(async () => {
    testDb = await createTestDatabase();
    const target = parseDatabaseUrl(testDb.url);
    assert.ok(target);
    handle = openDatabase(target, testDb.schema ? { schema: testDb.schema } : {});
    await migrateToLatest(handle);
    for (const id of ['w1', 'w2']) {
      await handle.db
        .insertInto('workspaces')
        .values({ id, name: id, access_token_ttl_seconds: 60, created_at: at, updated_at: at })
        .execute();
    }
  });
  after(async () => {
    await handle.close();
    await testDb.drop();
  });

  async function readGeofence(id: string) {
    return handle.db.selectFrom('geofences').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  test('insert stores a row written with its keys in any order; a conflicting one is skipped', async () => {
    const geometry = { type: 'Circle', coordinates: [13.4, 52.5], radius: 500 };
    const row: RowOf<typeof geofenceWrites> = {
      updated_at: at,
      created_at: at,
      max_accuracy_m: 25.5,
      exit_buffer_m: null,
      dwell_seconds: 300,
      version: 1,
      vertex_count: 0,
      bbox: json([13.3, 52.4, 13.5, 52.6]),
      enabled: true,
      metadata: json({ site: "O'Brien \\ ü" }),
      geometry: json(geometry),
      external_id: null,
      description: 'a depot',
      name: 'Depot',
      workspace_id: 'w1',
      id: 'g1',
    };
    await geofenceWrites.insert(handle.db, handle.capabilities, [row]);
    const stored = await readGeofence('g1');
    assert.equal(stored.workspace_id, 'w1');
    assert.equal(stored.name, 'Depot');
    assert.equal(stored.description, 'a depot');
    assert.equal(stored.external_id, null);
    assert.deepEqual(fromJson(stored.geometry), geometry);
    assert.deepEqual(fromJson(stored.metadata), { site: "O'Brien \\ ü" });
    assert.deepEqual(fromJson(stored.bbox), [13.3, 52.4, 13.5, 52.6]);
    assert.equal(toBool(stored.enabled), true);
    assert.equal(Number(stored.vertex_count), 0);
    assert.equal(Number(stored.version), 1);
    assert.equal(Number(stored.dwell_seconds), 300);
    assert.equal(stored.exit_buffer_m, null);
    assert.equal(Number(stored.max_accuracy_m), 25.5);
    assert.equal(toDate(stored.created_at).getTime(), at.getTime());

    // Named from items, ignoring the conflict on the id: g1 stays as it was, g2 is new.
    await geofenceWrites.insertIgnoringConflicts(
      handle.db,
      handle.capabilities,
      ['g1', 'g2'],
      (id) => ({ ...row, id, name: `renamed ${id}` }),
      '("id")',
    );
    assert.equal((await readGeofence('g1')).name, 'Depot');
    assert.equal((await readGeofence('g2')).name, 'renamed g2');
  });

  test('an update by id sets the declared columns, in its workspace only or where the guard holds', async () => {
    for (const [id, workspace] of [
      ['d1', 'w1'],
      ['d2', 'w2'],
    ] as const) {
      await handle.db
        .insertInto('devices')
        .values({
          id,
          workspace_id: workspace,
          name: id,
          external_id: null,
          user_id: null,
          metadata: json({}),
          inside_geofence_ids: json([]),
          active_session_id: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
    }
    const sets = [
      { id: 'd1', inside: ['g1', 'g2'] },
      { id: 'd2', inside: ['g9'] },
    ];
    await insideSetWrites.updateInWorkspace(handle.db, handle.capabilities, 'w1', sets, (s) => ({
      id: s.id,
      inside_geofence_ids: json(s.inside),
    }));
    const inside = async (id: string) =>
      fromJson(
        (
          await handle.db
            .selectFrom('devices')
            .select('inside_geofence_ids')
            .where('id', '=', id)
            .executeTakeFirstOrThrow()
        ).inside_geofence_ids,
      );
    assert.deepEqual(await inside('d1'), ['g1', 'g2']);
    assert.deepEqual(await inside('d2'), [], "another workspace's device is not changed");

    const names = bulkUpdate<{ id: string; name: string; workspace_id: string }>()('devices', {
      name: 'text',
    });
    const updated = await names.updateById(
      handle.db,
      handle.capabilities,
      [
        { name: 'first', id: 'd1' },
        { name: 'second', id: 'd2' },
      ],
      { column: 'workspace_id', value: 'w2' },
    );
    assert.deepEqual(updated, ['d2'], 'the guard refused d1');
    const stored = await handle.db.selectFrom('devices').select(['id', 'name']).orderBy('id').execute();
    assert.deepEqual(
      stored.map((r) => ({ ...r })),
      [
        { id: 'd1', name: 'd1' },
        { id: 'd2', name: 'second' },
      ],
    );
  });
});
