/**
 * A table's many-row writer declared once, beside its Kysely types in `*.tables.ts`: the columns
 * and their bulk types, from which the row type is derived. Writers pass named rows; the positional
 * value lists the statements need (statements.ts) are made here, in the declared order, so a column
 * added, removed or reordered cannot silently shift the values of the others.
 *
 *   export const deliveryWrites = bulkTable<WebhookDeliveriesTable>()('webhook_deliveries', {
 *     id: 'text', payload: 'text', created_at: 'timestamp', …
 *   });
 *   await deliveryWrites.insert(trx, capabilities, [{ id, payload, created_at: now, … }]);
 *
 * `bulkUpdate` declares a many-row update by id the same way: the columns it sets.
 *
 * Every declared column must be a column of the Kysely table type, with a bulk type that can
 * write it (a JSON column `json`, a string `text`, a number `integer` or `double`, …), and each
 * value of a row has the column's Kysely insert type: a status is one of its statuses, a column
 * that is not nullable takes no null.
 *
 * The hot paths (ingestion) write tens of thousands of rows a second: rows are turned into values
 * in one pass, by a plain loop over the declared names, and every writer also takes `items, toRow`
 * so that each item's row is named in that same pass instead of in a `map` of its own. (Reading
 * the values by name costs about 0.1 ms per 1,000 rows of 14 columns more than a hand-written
 * array; inserting them costs SQLite about 7 ms.)
 */
import type { InsertType, SelectType } from 'kysely';
import type { DialectCapabilities } from './database.ts';
import type { BulkColumnType } from './statement-forms.ts';
import {
  type BulkColumn,
  insertIgnoringConflicts,
  insertOrReplace,
  insertRows,
  type StatementRunner,
  updateById,
  updateFromValues,
} from './statements.ts';

/**
 * What a value of each bulk type may be, as the drivers take it. A timestamp may also be ISO 8601
 * text (ingestion stores the text it was given: SQLite keeps it as it is).
 */
interface BulkValue {
  text: string | null;
  json: string | null;
  timestamp: Date | string | null;
  double: number | null;
  integer: number | null;
  boolean: boolean | null;
}

export type BulkRow<C extends Record<string, BulkColumnType>> = {
  -readonly [K in keyof C]: BulkValue[C[K]];
};

/** The bulk types that can write a value of (non-null) type `V`. */
type BulkTypesOfValue<V> = V extends string
  ? 'text'
  : V extends number
    ? 'integer' | 'double'
    : V extends boolean
      ? 'boolean'
      : V extends Date
        ? 'timestamp'
        : never;

/** The bulk types that can write Kysely column `Col`: a JSON column (read as `unknown`) only `json`. */
type BulkTypesOf<Col> =
  unknown extends SelectType<Col> ? 'json' : BulkTypesOfValue<NonNullable<InsertType<Col>>>;

/** What a declaration of table `T` may hold: some of its columns, each with a bulk type that fits. */
type Declaration<T> = { [K in keyof T & string]?: BulkTypesOf<T[K]> };

/**
 * No other key: a declaration is inferred, so it is only checked against `Declaration` for
 * assignability, which lets an unknown column through beside known ones.
 */
type OnlyColumnsOf<T, C> = { [K in Exclude<keyof C, keyof T>]: never };

/** Date columns take ISO 8601 text too (see BulkValue). */
type WithIsoText<V> = V extends Date ? V | string : V;

/** The row of a declaration of table `T`: each declared column with its Kysely insert type. */
export type TableRow<T, C> = {
  -readonly [K in keyof C]: K extends keyof T ? WithIsoText<InsertType<T[K]>> : never;
};

type Columns<C> = { [K in keyof C & string]: NonNullable<C[K]> & BulkColumnType };

/** The row type of a declared writer: `RowOf<typeof deliveryWrites>`. */
export type RowOf<B> =
  B extends BulkTable<infer _C, infer R> ? R : B extends BulkUpdate<infer R, infer _T> ? KeyedRow<R> : never;

export interface BulkTable<C extends Record<string, BulkColumnType>, R = BulkRow<C>> {
  readonly table: string;
  /** The declared columns, in order (for statements that list them). */
  readonly columns: readonly BulkColumn[];
  /** The positional values of a row, in the declared column order. */
  values(row: R): unknown[];
  /** The positional values of many rows, or of the row `toRow` names for each item, in one pass. */
  valuesOf(rows: readonly R[]): unknown[][];
  valuesOf<I>(items: readonly I[], toRow: (item: I) => R): unknown[][];
  insert(db: StatementRunner, capabilities: DialectCapabilities, rows: readonly R[]): Promise<void>;
  /** Inserts the row `toRow` names for each item. */
  insert<I>(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    items: readonly I[],
    toRow: (item: I) => R,
  ): Promise<void>;
  /** `INSERT … ON CONFLICT <target> DO NOTHING` (`conflictTarget` is our own SQL, never data). */
  insertIgnoringConflicts(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    rows: readonly R[],
    conflictTarget: string,
  ): Promise<void>;
  insertIgnoringConflicts<I>(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    items: readonly I[],
    toRow: (item: I) => R,
    conflictTarget: string,
  ): Promise<void>;
  /** Inserts the row `toRow` names for each item, replacing the row of the same `key` if any. */
  insertOrReplace<I>(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    items: readonly I[],
    toRow: (item: I) => R,
    key: keyof R & string,
  ): Promise<void>;
}

/** Positional values of `row`'s `names`, after `key` when there is one. */
function rowValues(names: readonly string[], row: object, key: string | undefined): unknown[] {
  const named = row as Record<string, unknown>;
  const offset = key === undefined ? 0 : 1;
  const out = new Array<unknown>(names.length + offset);
  if (key !== undefined) out[0] = named[key];
  for (let i = 0; i < names.length; i++) out[i + offset] = named[names[i] as string];
  return out;
}

/** The values of every item's row: `toRow(item)`, or the item itself. One pass, no closure per row. */
function valuesOfRows(
  names: readonly string[],
  key: string | undefined,
  items: readonly unknown[],
  toRow: ((item: never) => object) | undefined,
): unknown[][] {
  const out = new Array<unknown[]>(items.length);
  const rowOf = toRow as ((item: unknown) => object) | undefined;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    out[i] = rowValues(names, rowOf === undefined ? (item as object) : rowOf(item), key);
  }
  return out;
}

function columnsOf(declared: object): BulkColumn[] {
  return Object.entries(declared).map(([name, type]) => ({ name, type: type as BulkColumnType }));
}

/**
 * Declares the bulk writer of `table`. Curried so the Kysely table type `T` is given and the
 * columns are inferred: every declared column must be a column of `T` (see `Declaration`).
 */
export function bulkTable<T>() {
  return <const C extends Declaration<T>>(
    table: string,
    declared: C & OnlyColumnsOf<T, C>,
  ): BulkTable<Columns<C>, TableRow<T, Columns<C>>> => {
    const columns = columnsOf(declared);
    const names = columns.map((c) => c.name);
    type Row = TableRow<T, Columns<C>>;
    const valuesOf = (items: readonly unknown[], toRow?: (item: never) => Row): unknown[][] =>
      valuesOfRows(names, undefined, items, toRow);
    return {
      table,
      columns,
      values: (row) => rowValues(names, row as object, undefined),
      valuesOf,
      insert: (
        db: StatementRunner,
        capabilities: DialectCapabilities,
        items: readonly unknown[],
        toRow?: (item: never) => Row,
      ) => insertRows(db, capabilities, table, columns, valuesOf(items, toRow)),
      insertIgnoringConflicts: (
        db: StatementRunner,
        capabilities: DialectCapabilities,
        items: readonly unknown[],
        ...rest: [string] | [(item: never) => Row, string]
      ) => {
        const [toRow, conflictTarget] = rest.length === 1 ? [undefined, rest[0]] : rest;
        return insertIgnoringConflicts(
          db,
          capabilities,
          table,
          columns,
          valuesOf(items, toRow),
          conflictTarget,
        );
      },
      insertOrReplace: (
        db: StatementRunner,
        capabilities: DialectCapabilities,
        items: readonly unknown[],
        toRow: (item: never) => Row,
        key: string,
      ) => insertOrReplace(db, capabilities, table, columns, valuesOf(items, toRow), key),
    };
  };
}

/** A row of an update: the id of the row to change, and the values of the declared columns. */
export type KeyedRow<R> = { id: string } & R;

/** Only rows where this column has this value are updated (e.g. the lease owner). */
export interface UpdateGuard<T> {
  column: keyof T & string;
  value: string;
}

/**
 * A table's many-row update by id, declared once like a `bulkTable`: the columns it sets.
 * `bulkUpdate<T>()(table, columns)`.
 */
export interface BulkUpdate<R, T = unknown> {
  readonly table: string;
  /** The columns set, in order (after the id, in the positional values). */
  readonly columns: readonly BulkColumn[];
  /** The positional values of a row: its id, then the columns in the declared order. */
  values(row: KeyedRow<R>): unknown[];
  /** The positional values of many rows, or of the row `toRow` names for each item, in one pass. */
  valuesOf(rows: readonly KeyedRow<R>[]): unknown[][];
  valuesOf<I>(items: readonly I[], toRow: (item: I) => KeyedRow<R>): unknown[][];
  /** Sets the columns of rows of any workspace by id; returns the ids updated (all unless `guard` refused some). */
  updateById(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    rows: readonly KeyedRow<R>[],
    guard?: UpdateGuard<T>,
  ): Promise<string[]>;
  updateById<I>(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    items: readonly I[],
    toRow: (item: I) => KeyedRow<R>,
    guard?: UpdateGuard<T>,
  ): Promise<string[]>;
  /** Sets the columns of the rows by id, only those of `workspaceId` (statements.ts `updateFromValues`). */
  updateInWorkspace(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    workspaceId: string,
    rows: readonly KeyedRow<R>[],
  ): Promise<void>;
  updateInWorkspace<I>(
    db: StatementRunner,
    capabilities: DialectCapabilities,
    workspaceId: string,
    items: readonly I[],
    toRow: (item: I) => KeyedRow<R>,
  ): Promise<void>;
}

/** Declares a many-row update by id of `table` (checked against `T` as `bulkTable` is). */
export function bulkUpdate<T extends { id: unknown }>() {
  return <const C extends Declaration<Omit<T, 'id'>>>(
    table: string,
    declared: C & OnlyColumnsOf<Omit<T, 'id'>, C>,
  ): BulkUpdate<TableRow<T, Columns<C>>, T> => {
    const columns = columnsOf(declared);
    const names = columns.map((c) => c.name);
    type Row = KeyedRow<TableRow<T, Columns<C>>>;
    const valuesOf = (items: readonly unknown[], toRow?: (item: never) => Row): unknown[][] =>
      valuesOfRows(names, 'id', items, toRow);
    return {
      table,
      columns,
      values: (row) => rowValues(names, row, 'id'),
      valuesOf,
      updateById: (
        db: StatementRunner,
        capabilities: DialectCapabilities,
        items: readonly unknown[],
        ...rest: [UpdateGuard<T>?] | [(item: never) => Row, UpdateGuard<T>?]
      ) => {
        const [toRow, guard] = typeof rest[0] === 'function' ? rest : [undefined, rest[0]];
        const rows = valuesOf(items, toRow as ((item: never) => Row) | undefined);
        return updateById(db, capabilities, { table, columns, rows, ...(guard ? { guard } : {}) });
      },
      updateInWorkspace: (
        db: StatementRunner,
        capabilities: DialectCapabilities,
        workspaceId: string,
        items: readonly unknown[],
        toRow?: (item: never) => Row,
      ) =>
        updateFromValues(db, capabilities, {
          table,
          key: 'id',
          columns,
          rows: valuesOf(items, toRow),
          workspaceId,
        }),
    };
  };
}

/** Updates rows by id with named values of the given columns; returns the ids updated. */
export function updateNamedById<C extends Record<string, BulkColumnType>>(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  options: {
    table: string;
    columns: C;
    rows: ReadonlyArray<{ id: string } & BulkRow<C>>;
    guard?: { column: string; value: string };
  },
): Promise<string[]> {
  const columns = columnsOf(options.columns);
  const names = columns.map((c) => c.name);
  return updateById(db, capabilities, {
    table: options.table,
    columns,
    rows: valuesOfRows(names, 'id', options.rows, undefined),
    ...(options.guard ? { guard: options.guard } : {}),
  });
}
