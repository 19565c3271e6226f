/**
 * The `date-time` format every schema uses: RFC 3339 as ajv-formats checks it, and also an instant
 * that both databases store and that JavaScript reads back: JavaScript must parse it (it does not
 * read a leap second `23:59:60`, nor lower-case `t`/`z` everywhere), and in UTC it falls in the years
 * 0001..9999, the range of ISO 8601's four-digit years. PostgreSQL refuses the year 0000 (it has no
 * year zero) and SQLite keeps `toISOString` text, which stops sorting as time once years need more
 * than four digits; an offset can push a four-digit year out of range (`0001-01-01T00:00:00+01:00`
 * is in the year 0000 in UTC). ADR 003.
 */
import type { Ajv } from 'ajv';

export const EARLIEST_INSTANT_MS = Date.parse('0001-01-01T00:00:00.000Z');
export const LATEST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** Whether `text` names an instant JavaScript can parse and both databases can store. */
export function isStorableInstant(text: string): boolean {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && ms >= EARLIEST_INSTANT_MS && ms <= LATEST_INSTANT_MS;
}

/** Narrows ajv-formats' `date-time` (call after `addFormats`). */
export function registerDateTimeFormat(ajv: Ajv): void {
  const base = ajv.formats['date-time'];
  const rfc3339 =
    typeof base === 'object' && base !== null && 'validate' in base && typeof base.validate === 'function'
      ? (base.validate as (text: string) => boolean)
      : undefined;
  if (rfc3339 === undefined) throw new Error('ajv-formats must register date-time before it is narrowed');
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (text: string) => rfc3339(text) && isStorableInstant(text),
  });
}
