/**
 * Reading one tracker payload's fields (contract §4.6). Trackers send numbers as JSON numbers
 * (OwnTracks, Overland, Traccar Client's JSON) or as text (OsmAnd query and form parameters), so a
 * reader takes either and collects a problem naming the client's own field for anything it cannot
 * read; the route answers them all at once (400, nothing stored).
 */
import type { ValidationIssue } from '../http/validation-errors.ts';

export type Loc = Array<string | number>;

/** Bounds a reader checks at once, so that a problem beside an unreadable field is named too. */
export const LATITUDE: readonly [number, number] = [-90, 90];
export const LONGITUDE: readonly [number, number] = [-180, 180];

export class FieldReader {
  readonly issues: ValidationIssue[] = [];
  private readonly source: Readonly<Record<string, unknown>>;
  private readonly where: (name: string) => Loc;

  /** `prefix`: where the fields stand in the request; or, per field, a function saying where. */
  constructor(source: Readonly<Record<string, unknown>>, prefix: Loc | ((name: string) => Loc)) {
    this.source = source;
    // An array member's index is a number in a loc (contract §1).
    this.where =
      typeof prefix === 'function' ? prefix : (name) => [...prefix, /^\d+$/.test(name) ? Number(name) : name];
  }

  /** Where a field stands in the request. */
  loc(name: string): Loc {
    return this.where(name);
  }

  has(name: string): boolean {
    const value = this.source[name];
    return value !== undefined && value !== null && value !== '';
  }

  raw(name: string): unknown {
    return this.source[name];
  }

  /** A finite number, given as a JSON number or as decimal text; undefined when absent. */
  number(name: string, required = false, range?: readonly [number, number]): number | undefined {
    const value = this.source[name];
    if (value === undefined || value === null || value === '') {
      if (required) this.issues.push({ type: 'missing', loc: this.loc(name), msg: 'Field required' });
      return undefined;
    }
    const parsed =
      typeof value === 'number' ? value : typeof value === 'string' ? decimal(value) : Number.NaN;
    if (!Number.isFinite(parsed)) {
      this.issues.push({ type: 'float_parsing', loc: this.loc(name), msg: 'Input should be a valid number' });
      return undefined;
    }
    if (range && parsed < range[0]) {
      this.issues.push({
        type: 'greater_than_equal',
        loc: this.loc(name),
        msg: `Input should be greater than or equal to ${range[0]}`,
      });
    } else if (range && parsed > range[1]) {
      this.issues.push({
        type: 'less_than_equal',
        loc: this.loc(name),
        msg: `Input should be less than or equal to ${range[1]}`,
      });
    }
    return parsed;
  }

  /** Text (a number is taken as its decimal text: trackers send ids either way). */
  text(name: string): string | undefined {
    const value = this.source[name];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    this.issues.push({ type: 'string_type', loc: this.loc(name), msg: 'Input should be a valid string' });
    return undefined;
  }

  /** A boolean as JSON or as text (`true`/`false`/`1`/`0`). */
  boolean(name: string): boolean | undefined {
    const value = this.source[name];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value === 'boolean') return value;
    if (value === 'true' || value === '1' || value === 1) return true;
    if (value === 'false' || value === '0' || value === 0) return false;
    this.issues.push({ type: 'bool_parsing', loc: this.loc(name), msg: 'Input should be a valid boolean' });
    return undefined;
  }

  /**
   * A time as trackers write it: epoch seconds or milliseconds (as Traccar's server reads them, a
   * number below 10^11 is seconds), or ISO 8601 text, also with a space for the `T` (Traccar
   * Client's and GPSLogger's "yyyy-MM-dd HH:mm:ss", taken as UTC when it names no zone).
   * Seconds and milliseconds are told apart by size (SECONDS_BELOW).
   * Returned as ISO 8601 text for the location input; its range is checked there.
   */
  time(name: string, required = false): string | undefined {
    const value = this.source[name];
    if (value === undefined || value === null || value === '') {
      if (required) this.issues.push({ type: 'missing', loc: this.loc(name), msg: 'Field required' });
      return undefined;
    }
    const ms = epochOrIsoMs(value);
    if (ms === undefined) {
      this.issues.push({
        type: 'value_error',
        loc: this.loc(name),
        msg: 'Input should be epoch seconds, epoch milliseconds or an ISO 8601 date-time',
      });
      return undefined;
    }
    return new Date(ms).toISOString();
  }
}

const DECIMAL = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

function decimal(text: string): number {
  return DECIMAL.test(text) ? Number(text) : Number.NaN;
}

/**
 * Epoch values below this are seconds, above it milliseconds. 10^11 s is the year 5138 and 10^11 ms
 * is March 1973, so no time a tracker sends is ambiguous. (Traccar's server splits at 2^31, which
 * reads seconds after 2038, such as a wrong clock's 2099, as milliseconds in 1970: stored silently
 * at the wrong time instead of refused.)
 */
const SECONDS_BELOW = 1e11;
const ZONE = /(Z|[+-]\d{2}(:?\d{2})?)$/i;

function epochOrIsoMs(value: unknown): number | undefined {
  const number = typeof value === 'number' ? value : typeof value === 'string' ? decimal(value) : Number.NaN;
  if (Number.isFinite(number)) {
    const ms = Math.abs(number) < SECONDS_BELOW ? number * 1000 : number;
    return Number.isFinite(new Date(ms).getTime()) ? Math.round(ms) : undefined;
  }
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value)) return undefined;
  let text = value.trim().replace(' ', 'T');
  if (!ZONE.test(text)) text = `${text}Z`;
  // `+0100` (no colon) is ISO 8601's basic form of the offset; Date.parse wants the colon.
  text = text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}
