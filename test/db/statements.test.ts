/**
 * The many-row writers of db/statements.ts store exactly the values they are given, on SQLite (bound
 * parameters) and on PostgreSQL (the rows as one JSON parameter read back by casts): property-based,
 * with strings full of quotes, backslashes and non-ASCII text, any finite double, millisecond
 * timestamps, booleans, nulls and JSON documents.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.ts';
import { fromJson, json, toBool, toDate } from '../../src/db/columns.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import {
  type BulkColumn,
  insertIgnoringConflicts,
  insertRows,
  statement,
  updateById,
  updateFromValues,
} from '../../src/db/statements.ts';
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

describe(`statements on ${IS_POSTGRES ? 'PostgreSQL' : 'SQLite'}`, () => {
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

  test('a value list matches exactly the listed values, whatever they hold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(tricky, { minLength: 1, maxLength: 8 }), async (labels) => {
        const prefix = `l${next++}-`;
        await insertRows(
          handle.db,
          handle.capabilities,
          'bulk_probe',
          COLUMNS,
          labels.map((label, i) => [`${prefix}${i}`, workspaceId, label, null, null, null, json([])]),
        );
        // Every label but the first is asked for, along with one that no row holds.
        const asked = [...labels.slice(1), `${labels[0]}\u0001absent`];
        const b = statement(handle.capabilities).sql('select id from bulk_probe where ');
        handle.capabilities.statements.inList(b, 'label', asked);
        b.sql(' and id like ').value(`${prefix}%`);
        const { rows } = await handle.db.executeQuery(b.compile<{ id: string }>());
        const expected = labels.slice(1).map((_l, i) => `${prefix}${i + 1}`);
        assert.deepEqual(rows.map((r) => r.id).sort(), expected.sort());
      }),
      { numRuns: 30 },
    );
  });

  test('rows beyond one statement’s parameters are written in chunks, and updateById returns every id updated', async () => {
    // 5,000 rows × 7 values exceed one SQLite statement's 30,000 parameters.
    const ids = Array.from({ length: 5_000 }, () => `c${next++}`);
    await insertRows(
      handle.db,
      handle.capabilities,
      'bulk_probe',
      COLUMNS,
      ids.map((id, i) => [id, workspaceId, `row ${i}`, i, null, null, json({ i })]),
    );
    const updated = await updateById(handle.db, handle.capabilities, {
      table: 'bulk_probe',
      columns: [{ name: 'amount', type: 'double' }],
      rows: ids.map((id, i) => [id, i + 0.5]),
      guard: { column: 'workspace_id', value: workspaceId },
    });
    assert.deepEqual(updated.sort(), [...ids].sort());
    const stored = await readBack([ids[0] as string, ids[4_999] as string]);
    assert.equal(stored.get(ids[0] as string)?.amount, 0.5);
    assert.equal(stored.get(ids[4_999] as string)?.amount, 4_999.5);
  });

  test('updateById leaves rows the guard refuses and does not return them', async () => {
    const [mine, theirs] = [`g${next++}`, `g${next++}`];
    await insertRows(handle.db, handle.capabilities, 'bulk_probe', COLUMNS, [
      [mine, workspaceId, 'lease:a', 1, null, null, json({})],
      [theirs, 'ws-other', 'lease:a', 1, null, null, json({})],
    ]);
    const updated = await updateById(handle.db, handle.capabilities, {
      table: 'bulk_probe',
      columns: [{ name: 'label', type: 'text' }],
      rows: [
        [mine, "it's mine"],
        [theirs, "it's mine"],
      ],
      guard: { column: 'workspace_id', value: workspaceId },
    });
    assert.deepEqual(updated, [mine]);
    const stored = await readBack([mine, theirs]);
    assert.equal(stored.get(mine)?.label, "it's mine");
    assert.equal(stored.get(theirs)?.label, 'lease:a');
  });

  test('insertIgnoringConflicts keeps the stored row and inserts the others', async () => {
    const [kept, added] = [`i${next++}`, `i${next++}`];
    await insertRows(handle.db, handle.capabilities, 'bulk_probe', COLUMNS, [
      [kept, workspaceId, 'first', 1, null, null, json({})],
    ]);
    await insertIgnoringConflicts(
      handle.db,
      handle.capabilities,
      'bulk_probe',
      COLUMNS,
      [
        [kept, workspaceId, 'second', 2, null, null, json({})],
        [added, workspaceId, 'new', 3, null, true, json({ n: 3 })],
      ],
      '("id")',
    );
    const stored = await readBack([kept, added]);
    assert.equal(stored.get(kept)?.label, 'first');
    assert.equal(stored.get(added)?.label, 'new');
    assert.deepEqual(stored.get(added)?.doc, { n: 3 });
  });
});
