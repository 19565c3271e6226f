/**
 * The values of many-row statements as each dialect binds them (statement-forms.ts):
 * - PostgreSQL: all rows as ONE parameter, the JSON text of an array of arrays, read back as typed
 *   columns by the statement. The statement text is then the same for any row count, so the server
 *   does not parse and plan a 14,000-parameter statement per batch; the text is made by
 *   `JSON.stringify`, far cheaper than pg's escaping writer of array literals (ADR 008).
 * - SQLite: the rows' values in one flat array of bound parameters, converted as the driver would
 *   (dates as ISO text, booleans as 0/1) in the same pass, so the driver finds nothing left to do.
 */
import { toSqliteValue } from './sqlite-driver.ts';

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

/**
 * PostgreSQL: the rows as the JSON text of an array of arrays. Dates become ISO text, `undefined`
 * becomes null; JSON columns travel as the text their storage module made, parsed by the cast.
 * A number is written as the shortest text that reads back as the same double.
 */
export function jsonRows(rows: ReadonlyArray<readonly unknown[]>): string {
  // Dates are printed here rather than by JSON.stringify, which would call toJSON for every row.
  const iso = columnIsoText();
  return JSON.stringify(
    rows.map((row) => row.map((value, c) => (value instanceof Date ? iso(c, value) : value))),
  );
}

/** SQLite: the rows' values in one flat array, row after row, as SQLite binds them. */
export function flatBindable(rows: ReadonlyArray<readonly unknown[]>): unknown[] {
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
  return out;
}
