/**
 * Many-row statements for the ingestion hot path: one statement per chunk instead of one per row,
 * its SQL text built here as a string rather than through Kysely's query builder (for 1,000 rows ×
 * 14 columns the builder's per-value nodes cost more than SQLite takes to insert the rows).
 * - SQLite: multi-row `VALUES (?, …), (?, …)`; binding is an in-process call, so thousands of
 *   parameters are cheap.
 * - PostgreSQL: the rows as ONE `jsonb` parameter, an array of arrays, read back as typed columns
 *   (`rowsSourceOf`): the statement text is the same for any row count, so the server does not
 *   parse and plan a 14,000-parameter statement per batch (measured 33 ms → a few ms for 1,000
 *   locations). The text is made by `JSON.stringify`; the one array per column of `unnest(…)` used
 *   before was serialised by pg's JavaScript array writer, which escapes every element with two
 *   regular expressions: a quarter of the server's busy time in a PostgreSQL batch (ADR 008,
 *   "Session 4").
 */
import { CompiledQuery, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DialectCapabilities } from './database.ts';
import { toSqliteValue } from './sqlite-driver.ts';
import type { Executor } from './transaction.ts';

/**
 * What the bulk writers need of a database: to run a compiled statement. A connection or
 * transaction, or `CombinedWrites`, which collects statements to send as one.
 */
export type StatementRunner = Pick<Executor, 'executeQuery'>;

/**
 * Bound parameters per statement. SQLite allows 32,766 and PostgreSQL 65,535; staying under the
 * smaller keeps one rule for both.
 */
export const MAX_PARAMETERS = 30_000;

/** Rows per chunk so that `columns` parameters per row stay under MAX_PARAMETERS. */
export function rowsPerChunk(columns: number): number {
  return Math.max(1, Math.floor(MAX_PARAMETERS / columns));
}

/** Splits `items` into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * `column = value` as a residual filter that no index is chosen for. For "these N ids, and only if
 * they belong to this workspace", SQLite (which has no statistics unless ANALYZE ran) prefers the
 * `(workspace_id, …)` index and scans every row of the workspace instead of doing N primary-key
 * lookups: 6 ms instead of well under 1 ms for 1,000 ids among 10,000 devices. `|| ''` keeps the
 * meaning on both dialects and hides the column from index selection.
 */
export function residualEquals(column: string, value: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} || '' = ${value}`;
}

export function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

/** SQLite's `(?, ?, …), (?, ?, …)` for `rows` rows of `width` parameters. */
export function valuesList(rows: number, width: number): string {
  const tuple = `(${new Array(width).fill('?').join(', ')})`;
  return new Array(rows).fill(tuple).join(', ');
}

/** Logical column types of bulk statements; the dialect's capabilities give the SQL type. */
export type BulkColumnType = 'text' | 'json' | 'timestamp' | 'double' | 'integer' | 'boolean';

export interface BulkColumn {
  name: string;
  type: BulkColumnType;
}

/**
 * PostgreSQL: the rows as the one parameter of `rowsSourceOf`, JSON text of an array of arrays.
 * Dates become ISO text (their `toJSON`), `undefined` becomes null; JSON columns travel as the text
 * their storage module made, and are parsed by the cast.
 */
export function jsonRows(rows: ReadonlyArray<readonly unknown[]>): string {
  // Dates are printed here rather than by JSON.stringify, which would call toJSON for every row.
  const iso = columnIsoText();
  return JSON.stringify(
    rows.map((row) => row.map((value, c) => (value instanceof Date ? iso(c, value) : value))),
  );
}

/**
 * A Date's ISO text by column, for one statement's rows. A column's rows often share one Date
 * object (a batch's received_at, its devices' last_seen_at): its text is made once, not per row.
 */
function columnIsoText(): (column: number, date: Date) => string {
  const dates: Array<Date | undefined> = [];
  const texts: string[] = [];
  return (column, date) => {
    if (date !== dates[column]) {
      dates[column] = date;
      texts[column] = date.toISOString();
    }
    return texts[column] as string;
  };
}

/** PostgreSQL: the text values of a JSON array parameter (`JSON.stringify` of a string list) as an array. */
export function jsonTextArray(parameter: number): string {
  return `array(select jsonb_array_elements_text($${parameter}::jsonb))`;
}

/**
 * PostgreSQL: `(select (r->>0)::t1 as column1, … from jsonb_array_elements($1::jsonb) as r)`, the
 * rows of `jsonRows` as typed columns `column1…`. A number goes through its JSON text, which is
 * the shortest text that reads back as the same double, so values come back exactly.
 */
export function rowsSourceOf(capabilities: DialectCapabilities, types: readonly BulkColumnType[]): string {
  const columns = types.map((t, i) => `(r->>${i})::${sqlType(capabilities, t)} as column${i + 1}`).join(', ');
  return `(select ${columns} from jsonb_array_elements($1::jsonb) as r)`;
}

/**
 * `INSERT INTO table (columns) …` of many rows; each row holds one value per column, in order
 * (Dates, booleans and JSON text as the drivers take them).
 */
export async function insertRows(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  table: string,
  columns: readonly BulkColumn[],
  rows: ReadonlyArray<readonly unknown[]>,
): Promise<void> {
  if (rows.length === 0) return;
  const head = `insert into ${quote(table)} (${columns.map((c) => quote(c.name)).join(', ')}) `;
  if (capabilities.dialect === 'postgres') {
    const text = `${head}select * from ${rowsSourceOf(
      capabilities,
      columns.map((c) => c.type),
    )} as v`;
    await db.executeQuery(CompiledQuery.raw(text, [jsonRows(rows)]));
    return;
  }
  for (const part of chunks(rows, rowsPerChunk(columns.length))) {
    const text = `${head}values ${valuesList(part.length, columns.length)}`;
    await db.executeQuery(CompiledQuery.raw(text, flatBindable(part)));
  }
}

/**
 * The rows' values in one flat array, as SQLite binds them (dates as ISO text, booleans as 0/1):
 * converted here in one pass, so the driver finds nothing left to convert.
 */
function flatBindable(rows: ReadonlyArray<readonly unknown[]>, extra?: unknown): unknown[] {
  const out: unknown[] = [];
  const iso = columnIsoText();
  for (const row of rows) {
    for (let c = 0; c < row.length; c++) {
      const value = row[c];
      if (typeof value === 'string' || typeof value === 'number') out.push(value);
      else if (value instanceof Date) out.push(iso(c, value));
      else out.push(toSqliteValue(value));
    }
  }
  if (extra !== undefined) out.push(extra);
  return out;
}

export interface BulkUpdate {
  table: string;
  /** The key column matched against the first value of each row (e.g. `id`). */
  key: string;
  /** The columns set, in the order of the values after the key. */
  columns: ReadonlyArray<{ name: string; type: BulkColumnType }>;
  /** Each row: key value, then one value per column. */
  rows: ReadonlyArray<readonly unknown[]>;
  /** Tenant scoping: the target rows must have this workspace id. */
  workspaceId: string;
}

export function sqlType(capabilities: DialectCapabilities, type: BulkColumnType): string {
  switch (type) {
    case 'text':
      return 'text';
    case 'json':
      return capabilities.types.json;
    case 'timestamp':
      return capabilities.types.timestamp;
    case 'double':
      return capabilities.types.double;
    case 'integer':
      return 'bigint';
    case 'boolean':
      return capabilities.types.boolean;
  }
}

/**
 * Sets columns of many rows matched by key, scoped to one workspace:
 * - SQLite (≥ 3.33): `UPDATE t SET c = v.columnN … FROM (VALUES (…), …) AS v WHERE t.key =
 *   v.column1`, uncast (casts there made the statement ~3× slower: no VALUES coroutine);
 * - PostgreSQL: the same from the rows of one JSON parameter (`rowsSourceOf`).
 */
export async function updateFromValues(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  update: BulkUpdate,
): Promise<void> {
  if (update.rows.length === 0) return;
  const width = update.columns.length + 1;
  const table = quote(update.table);
  const assignments = update.columns.map((c, i) => `${quote(c.name)} = v.column${i + 2}`).join(', ');
  const match = `${table}.${quote(update.key)} = v.column1 and ${table}."workspace_id" || '' = `;
  if (capabilities.dialect === 'postgres') {
    const names = Array.from({ length: width }, (_v, i) => `column${i + 1}`).join(', ');
    const source = rowsSourceOf(capabilities, ['text', ...update.columns.map((c) => c.type)]);
    const text = `update ${table} set ${assignments} from ${source} as v(${names}) where ${match}$2`;
    await db.executeQuery(CompiledQuery.raw(text, [jsonRows(update.rows), update.workspaceId]));
    return;
  }
  for (const part of chunks(update.rows, rowsPerChunk(width) - 1)) {
    const values = valuesList(part.length, width);
    const text = `update ${table} set ${assignments} from (values ${values}) as v where ${match}?`;
    await db.executeQuery(CompiledQuery.raw(text, flatBindable(part, update.workspaceId)));
  }
}
