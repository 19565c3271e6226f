/**
 * The `from`/`to` query parameters of the lists that take a time range (events, deliveries, dead
 * letters): both inclusive, either optional. A range that ends before it starts can match nothing
 * and is almost always a swapped pair, so it is refused like a schema failure — 422
 * `VALIDATION_ERROR`, `value_error` at `["query", "from"]` — instead of answering an empty page.
 */
import { FieldValidationError } from '../shared/errors.ts';

export interface TimeRange {
  from: Date | undefined;
  to: Date | undefined;
}

/** `from`/`to` as validated `date-time` strings (or absent) → Dates; `from` after `to` → 422. */
export function timeRange(from: string | undefined, to: string | undefined): TimeRange {
  const range = {
    from: from === undefined ? undefined : new Date(from),
    to: to === undefined ? undefined : new Date(to),
  };
  if (range.from && range.to && range.from.getTime() > range.to.getTime()) {
    throw new FieldValidationError([
      { type: 'value_error', loc: ['query', 'from'], msg: 'from must not be after to' },
    ]);
  }
  return range;
}
