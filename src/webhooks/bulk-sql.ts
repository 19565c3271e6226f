/**
 * Many-row statements of the delivery engine that `src/db/bulk.ts` does not cover: updates of rows
 * of many workspaces matched by id (optionally only while a lease is held, with the ids that
 * matched returned), and inserts that skip conflicting rows, built from bulk.ts's pieces: multi-row
 * `VALUES` on SQLite, the rows as one JSON parameter on PostgreSQL (`rowsSourceOf`).
 */
import { CompiledQuery } from 'kysely';
import {
  type BulkColumn,
  type BulkColumnType,
  chunks,
  jsonRows,
  quote,
  rowsPerChunk,
  rowsSourceOf,
  valuesList,
} from '../db/bulk.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';

export interface UpdateByIdOptions {
  table: string;
  /** Columns set, in the order of each row's values after the id. */
  columns: readonly BulkColumn[];
  /** Each row: id, then one value per column. */
  rows: ReadonlyArray<readonly unknown[]>;
  /** Only rows where this column has this value are updated (e.g. the lease owner). */
  guard?: { column: string; value: string };
}

/** Updates rows by id; returns the ids actually updated (all of them unless a guard refused some). */
export async function updateById(
  db: Executor,
  capabilities: DialectCapabilities,
  options: UpdateByIdOptions,
): Promise<string[]> {
  if (options.rows.length === 0) return [];
  const table = quote(options.table);
  const width = options.columns.length + 1;
  const set = options.columns.map((c, i) => `${quote(c.name)} = v.column${i + 2}`).join(', ');
  const guard = options.guard ? ` and ${table}.${quote(options.guard.column)} = ` : '';
  const updated: string[] = [];
  if (capabilities.dialect === 'postgres') {
    const names = Array.from({ length: width }, (_v, i) => `column${i + 1}`).join(', ');
    const types: BulkColumnType[] = ['text', ...options.columns.map((c) => c.type)];
    const source = rowsSourceOf(capabilities, types);
    const text =
      `update ${table} set ${set} from ${source} as v(${names}) where ${table}."id" = v.column1` +
      (options.guard ? `${guard}$2` : '') +
      ` returning ${table}."id"`;
    const params: unknown[] = [jsonRows(options.rows)];
    if (options.guard) params.push(options.guard.value);
    const result = await db.executeQuery<{ id: string }>(CompiledQuery.raw(text, params));
    for (const row of result.rows) updated.push(row.id);
    return updated;
  }
  for (const part of chunks(options.rows, rowsPerChunk(width) - 1)) {
    const text =
      `update ${table} set ${set} from (values ${valuesList(part.length, width)}) as v ` +
      `where ${table}."id" = v.column1${options.guard ? `${guard}?` : ''} returning ${table}."id"`;
    const params: unknown[] = part.flat();
    if (options.guard) params.push(options.guard.value);
    const result = await db.executeQuery<{ id: string }>(CompiledQuery.raw(text, params));
    for (const row of result.rows) updated.push(row.id);
  }
  return updated;
}

/** `INSERT … ON CONFLICT <target> DO NOTHING` of many rows. */
export async function insertIgnoringConflicts(
  db: Executor,
  capabilities: DialectCapabilities,
  table: string,
  columns: readonly BulkColumn[],
  rows: ReadonlyArray<readonly unknown[]>,
  conflictTarget: string,
): Promise<void> {
  if (rows.length === 0) return;
  const head = `insert into ${quote(table)} (${columns.map((c) => quote(c.name)).join(', ')}) `;
  const tail = ` on conflict ${conflictTarget} do nothing`;
  if (capabilities.dialect === 'postgres') {
    const source = rowsSourceOf(
      capabilities,
      columns.map((c) => c.type),
    );
    await db.executeQuery(CompiledQuery.raw(`${head}select * from ${source} as v${tail}`, [jsonRows(rows)]));
    return;
  }
  for (const part of chunks(rows, rowsPerChunk(columns.length))) {
    const text = `${head}values ${valuesList(part.length, columns.length)}${tail}`;
    await db.executeQuery(CompiledQuery.raw(text, part.flat()));
  }
}
