/**
 * Column representations differ by dialect (see docs/decisions/002-two-databases.md): PostgreSQL
 * returns Date, boolean and parsed jsonb; SQLite returns ISO text, 0/1 and JSON text. Storage
 * modules read every such column through these mappers and write JSON through `json()`.
 */
import type { ColumnType } from 'kysely';

export type TimestampColumn = ColumnType<Date | string, Date, Date>;
export type NullableTimestampColumn = ColumnType<Date | string | null, Date | null, Date | null>;
export type JsonColumn = ColumnType<unknown, string, string>;
export type NullableJsonColumn = ColumnType<unknown, string | null, string | null>;
export type BooleanColumn = ColumnType<boolean | number, boolean, boolean>;

export function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}

export function toDateOrNull(value: Date | string | null | undefined): Date | null {
  return value === null || value === undefined ? null : toDate(value);
}

export function toIso(value: Date | string): string {
  return toDate(value).toISOString();
}

export function toIsoOrNull(value: Date | string | null | undefined): string | null {
  return value === null || value === undefined ? null : toIso(value);
}

export function toBool(value: boolean | number): boolean {
  return value === true || value === 1;
}

export function fromJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/**
 * `JSON.stringify` recurses: values from requests reach it only after the input rules (ADR 003)
 * bounded their nesting (free-form objects 16 levels, any request value 64).
 */
export function json(value: unknown): string {
  return JSON.stringify(value);
}
