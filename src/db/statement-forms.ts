/**
 * How each dialect writes the statement shapes where SQLite and PostgreSQL differ: placeholders,
 * how the rows of a many-row statement travel, and how a list of values is matched. They are part
 * of the dialect's capabilities (database.ts), so the statements module and the repositories build
 * one statement for both databases and never ask which one they run on (ADR 002).
 *
 * Every form binds its values through a StatementBuilder: none writes a value into the text.
 */
import { flatBindable, jsonRows } from './row-encoding.ts';
import type { PlaceholderStyle, StatementBuilder } from './statement-builder.ts';

/** Logical column types of many-row statements; the dialect gives the SQL type. */
export type BulkColumnType = 'text' | 'json' | 'timestamp' | 'double' | 'integer' | 'boolean';

/** Column types used by migrations and by the casts of many-row statements. */
export interface ColumnTypes {
  timestamp: 'timestamptz' | 'text';
  json: 'jsonb' | 'text';
  boolean: 'boolean' | 'integer';
  double: 'double precision' | 'real';
}

export interface StatementForms {
  placeholders: PlaceholderStyle;
  /** The most rows of `width` values one statement may carry beside `otherValues` parameters. */
  maxRows(width: number, otherValues: number): number;
  /** Appends the rows as what follows `INSERT INTO t (columns) `. */
  insertSource(
    b: StatementBuilder,
    types: readonly BulkColumnType[],
    rows: ReadonlyArray<readonly unknown[]>,
  ): void;
  /** Appends the rows as `<source> as v` with columns `column1…` for `UPDATE … FROM`. */
  updateSource(
    b: StatementBuilder,
    types: readonly BulkColumnType[],
    rows: ReadonlyArray<readonly unknown[]>,
  ): void;
  /** Appends `<column> in <values>` for a list of text values (`column` is our own quoted identifier). */
  inList(b: StatementBuilder, column: string, values: readonly string[]): void;
}

/**
 * Bound parameters per statement. SQLite allows 32,766 and PostgreSQL 65,535; staying under the
 * smaller keeps one rule for both.
 */
export const MAX_PARAMETERS = 30_000;

export function sqlType(types: ColumnTypes, type: BulkColumnType): string {
  switch (type) {
    case 'text':
      return 'text';
    case 'integer':
      return 'bigint';
    default:
      return types[type];
  }
}

/**
 * SQLite: multi-row `VALUES (?, …), (?, …)`, in chunks under MAX_PARAMETERS (binding is an
 * in-process call, so thousands of parameters are cheap); uncast, since casts in `UPDATE … FROM
 * (VALUES …)` made the statement ~3× slower (no VALUES coroutine).
 */
export const SQLITE_FORMS: StatementForms = {
  placeholders: '?',
  maxRows: (width, otherValues) => Math.max(1, Math.floor((MAX_PARAMETERS - otherValues) / width)),
  insertSource(b, types, rows) {
    b.sql('values ').tuples(rows.length, types.length, flatBindable(rows));
  },
  updateSource(b, types, rows) {
    b.sql('(values ').tuples(rows.length, types.length, flatBindable(rows)).sql(') as v');
  },
  inList(b, column, values) {
    b.sql(`${column} in (`).list(values).sql(')');
  },
};

/**
 * PostgreSQL: the rows as ONE JSON parameter read back as typed columns, `(select (r->>0)::t1 as
 * column1, … from jsonb_array_elements($n::jsonb) as r)`: one statement text, parsed and planned
 * the same way, for any row count. A list of values is one JSON parameter likewise.
 */
export function postgresForms(types: ColumnTypes): StatementForms {
  const rowsSource = (
    b: StatementBuilder,
    columnTypes: readonly BulkColumnType[],
    rows: ReadonlyArray<readonly unknown[]>,
  ) => {
    const columns = columnTypes
      .map((t, i) => `(r->>${i})::${sqlType(types, t)} as column${i + 1}`)
      .join(', ');
    b.sql(`(select ${columns} from jsonb_array_elements(`).value(jsonRows(rows)).sql('::jsonb) as r)');
  };
  return {
    placeholders: '$n',
    maxRows: () => Number.POSITIVE_INFINITY,
    insertSource(b, columnTypes, rows) {
      b.sql('select * from ');
      rowsSource(b, columnTypes, rows);
      b.sql(' as v');
    },
    updateSource(b, columnTypes, rows) {
      rowsSource(b, columnTypes, rows);
      b.sql(` as v(${columnTypes.map((_t, i) => `column${i + 1}`).join(', ')})`);
    },
    inList(b, column, values) {
      b.sql(`${column} = any(array(select jsonb_array_elements_text(`)
        .value(JSON.stringify(values))
        .sql('::jsonb)))');
    },
  };
}
