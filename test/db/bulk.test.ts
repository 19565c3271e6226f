/**
 * The many-row writers of db/bulk.ts store exactly the values they are given, on SQLite (bound
 * parameters) and on PostgreSQL (the rows as one JSON parameter read back by casts): property-based,
 * with strings full of quotes, backslashes and non-ASCII text, any finite double, millisecond
 * timestamps, booleans, nulls and JSON documents.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.ts';
import { type BulkColumn, insertRows, updateFromValues } from '../../src/db/bulk.ts';
import { fromJson, json, toBool, toDate } from '../../src/db/columns.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';

interface ProbeRow {
  id: string;
  label: string | null;
  amount: number | null;
  at: Date | null;
  flag: boolean | null;
  doc: unknown;
}

const COLUMNS: readonly BulkColumn[] = [
  { name: 'id', type: 'text' },
  { name: 'workspace_id', type: 'text' },
  { name: 'label', type: 'text' },
  { name: 'amount', type: 'double' },
  { name: 'at', type: 'timestamp' },
  { name: 'flag', type: 'boolean' },
  { name: 'doc', type: 'json' },
];

// PostgreSQL text cannot hold U+0000; everything else may appear.
const text = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replaceAll('\u0000', ''));
const tricky = fc.oneof(text, fc.constantFrom('"', '\\', '\\"', "'", '{}', '[1,"a"]', 'null', 'ü€𝄞', '\n\t'));
// Keys without the characters JSON writes as escapes (see `doc` below).
const keyText = fc
  .oneof(text, fc.constantFrom("'", '{}', 'null', 'ü€𝄞', 'a b'))
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
  .map((k) => k.replace(/["\\\u0000-\u001f]/g, ''));
const row = fc.record({
  label: fc.option(tricky, { nil: null }),
  amount: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
  at: fc.option(
    fc.integer({ min: 0, max: 4_102_444_800_000 }).map((ms) => new Date(ms)),
    { nil: null },
  ),
  flag: fc.option(fc.boolean(), { nil: null }),
  // Objects and arrays, as the application's JSON columns hold (a top-level JSON string would come
  // back from PostgreSQL's jsonb as a bare string). As JSON reads them back: -0 is written as 0.
  // Keys without `"`, `\` and control characters, which JSON writes as escapes: with those, Node
  // 24's own JSON.parse (which reads the documents back) can drop or misread a key depending on
  // what it parsed before (docs/known-issues.md, docs/repro/v8-json-parse-key-loss.mjs). Values
  // keep every character.
  doc: fc
    .oneof(fc.dictionary(keyText, fc.jsonValue({ maxDepth: 1 })), fc.array(fc.jsonValue({ maxDepth: 1 })))
    .map((v) => JSON.parse(JSON.stringify(v)) as unknown),
});

describe(`bulk writers on ${IS_POSTGRES ? 'PostgreSQL' : 'SQLite'}`, () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  const workspaceId = 'ws-probe';

  before(async () => {
    testDb = await createTestDatabase();
    const target = parseDatabaseUrl(testDb.url);
    assert.ok(target);
    handle = openDatabase(target, testDb.schema ? { schema: testDb.schema } : {});
    const t = handle.capabilities.types;
    await sql
      .raw(
        `create table bulk_probe (id text primary key, workspace_id text not null, label text, amount ${t.double}, at ${t.timestamp}, flag ${t.boolean}, doc ${t.json})`,
      )
      .execute(handle.db);
  });
  after(async () => {
    await handle.close();
    await testDb.drop();
  });

  async function readBack(ids: string[]): Promise<Map<string, ProbeRow>> {
    const { rows } = await sql<{
      id: string;
      label: string | null;
      amount: number | null;
      at: Date | string | null;
      flag: boolean | number | null;
      doc: unknown;
    }>`select id, label, amount, at, flag, doc from bulk_probe where id in (${sql.join(ids)})`.execute(
      handle.db,
    );
    return new Map(
      rows.map((r) => [
        r.id,
        {
          id: r.id,
          label: r.label,
          amount: r.amount === null ? null : Number(r.amount),
          at: r.at === null ? null : toDate(r.at),
          flag: r.flag === null ? null : toBool(r.flag),
          doc: fromJson(r.doc),
        },
      ]),
    );
  }

  function assertStored(stored: Map<string, ProbeRow>, expected: ProbeRow[]): void {
    for (const e of expected) {
      const got = stored.get(e.id);
      assert.ok(got, `row ${e.id} stored`);
      assert.equal(got.label, e.label);
      // Both dialects store -0 as 0.
      assert.equal(got.amount, e.amount === null ? null : e.amount + 0);
      assert.equal(got.at?.getTime() ?? null, e.at?.getTime() ?? null);
      assert.equal(got.flag, e.flag);
      assert.deepEqual(got.doc, e.doc);
    }
  }

  let next = 0;
  test('insertRows then updateFromValues store every value exactly', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 12 }),
        fc.array(row, { minLength: 12, maxLength: 12 }),
        async (rows, updates) => {
          const inserted: ProbeRow[] = rows.map((r) => ({ ...r, id: `p${next++}` }));
          await insertRows(
            handle.db,
            handle.capabilities,
            'bulk_probe',
            COLUMNS,
            inserted.map((r) => [r.id, workspaceId, r.label, r.amount, r.at, r.flag, json(r.doc)]),
          );
          const ids = inserted.map((r) => r.id);
          assertStored(await readBack(ids), inserted);

          const updated: ProbeRow[] = inserted.map((r, i) => ({
            ...(updates[i] as Omit<ProbeRow, 'id'>),
            id: r.id,
          }));
          await updateFromValues(handle.db, handle.capabilities, {
            table: 'bulk_probe',
            key: 'id',
            columns: COLUMNS.slice(2),
            rows: updated.map((r) => [r.id, r.label, r.amount, r.at, r.flag, json(r.doc)]),
            workspaceId,
          });
          assertStored(await readBack(ids), updated);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('an update scoped to another workspace changes nothing', async () => {
    const id = `p${next++}`;
    await insertRows(handle.db, handle.capabilities, 'bulk_probe', COLUMNS, [
      [id, workspaceId, 'kept', 1.5, null, true, json({ a: 1 })],
    ]);
    await updateFromValues(handle.db, handle.capabilities, {
      table: 'bulk_probe',
      key: 'id',
      columns: COLUMNS.slice(2),
      rows: [[id, 'changed', 2.5, null, false, json({ a: 2 })]],
      workspaceId: 'another-workspace',
    });
    const got = (await readBack([id])).get(id);
    assert.equal(got?.label, 'kept');
    assert.equal(got?.amount, 1.5);
  });
});
