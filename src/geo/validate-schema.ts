import { MAX_SCHEMA_ERRORS, MAX_VERTICES } from './constants.ts';
import type { Position, SchemaError, SchemaErrorType } from './types.ts';

/**
 * Schema-level (HTTP 422) checks of a geometry object: JSON shapes only, no geometry. Errors are
 * pydantic-shaped (`type`, `loc`, `msg`) with `loc` relative to the geometry object. Several errors are
 * collected, at most {@link MAX_SCHEMA_ERRORS}, and positions are only inspected once the vertex count
 * is known to be within {@link MAX_VERTICES}, so the cost on huge garbage input is bounded by the
 * number of rings, not of positions.
 *
 * Decisions (docs/geometry.md): a position is `[lng, lat]` with an optional third finite number
 * (altitude, RFC 7946 §3.1.1), which is accepted and dropped; numbers must be finite JS numbers (no
 * numeric strings); unknown members (e.g. `bbox`, foreign members) are ignored; `type` is matched
 * case-sensitively; only own properties are read.
 */

/** Output of the schema step: plain 2-D data ready for the geometric checks, or the type name to reject. */
export type ParsedGeometry =
  | { type: 'Polygon'; rings: Position[][] }
  | { type: 'Circle'; center: Position; radius: number }
  | { type: 'unsupported'; name: string };

export type SchemaResult = { ok: true; value: ParsedGeometry } | { ok: false; errors: SchemaError[] };

class ErrorSink {
  readonly errors: SchemaError[] = [];
  add(type: SchemaErrorType, loc: Array<string | number>, msg: string): void {
    if (this.errors.length < MAX_SCHEMA_ERRORS) this.errors.push({ type, loc, msg });
  }
  get full(): boolean {
    return this.errors.length >= MAX_SCHEMA_ERRORS;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function own(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

/** Validate one position; returns the 2-D position or `null` after recording errors. */
function parsePosition(value: unknown, loc: Array<string | number>, sink: ErrorSink): Position | null {
  if (!Array.isArray(value)) {
    sink.add('list_type', loc, 'Input should be a valid array [lng, lat]');
    return null;
  }
  if (value.length < 2) {
    sink.add('too_short', loc, `Position should have at least 2 items after validation, not ${value.length}`);
    return null;
  }
  if (value.length > 3) {
    sink.add(
      'too_long',
      loc,
      `Position should have at most 3 items (lng, lat, altitude), not ${value.length}`,
    );
    return null;
  }
  let ok = true;
  for (let i = 0; i < value.length; i++) {
    if (!isFiniteNumber(value[i])) {
      sink.add('float_parsing', [...loc, i], 'Input should be a finite number');
      ok = false;
    }
  }
  return ok ? [value[0] as number, value[1] as number] : null;
}

function parsePolygon(coordinates: unknown, sink: ErrorSink): Position[][] | null {
  if (!Array.isArray(coordinates)) {
    sink.add('list_type', ['coordinates'], 'Input should be a valid array of linear rings');
    return null;
  }
  if (coordinates.length === 0) {
    sink.add('too_short', ['coordinates'], 'Polygon should have at least 1 linear ring');
    return null;
  }
  // Each ring needs at least 3 vertices, so more rings than MAX_VERTICES can never be valid; checking
  // it first bounds the work below even for degenerate empty rings.
  if (coordinates.length > MAX_VERTICES) {
    sink.add('too_long', ['coordinates'], `Polygon should have at most ${MAX_VERTICES} rings`);
    return null;
  }
  let vertices = 0;
  let shapeOk = true;
  for (let r = 0; r < coordinates.length; r++) {
    const ring: unknown = coordinates[r];
    if (!Array.isArray(ring)) {
      sink.add('list_type', ['coordinates', r], 'Input should be a valid array of positions');
      shapeOk = false;
      continue;
    }
    vertices += Math.max(0, ring.length - 1);
  }
  if (vertices > MAX_VERTICES) {
    sink.add(
      'too_long',
      ['coordinates'],
      `Polygon should have at most ${MAX_VERTICES} vertices (Σ over rings of positions − 1), not ${vertices}`,
    );
    return null;
  }
  if (!shapeOk) return null;
  const rings: Position[][] = [];
  for (let r = 0; r < coordinates.length && !sink.full; r++) {
    const ring = coordinates[r] as unknown[];
    const out: Position[] = [];
    for (let i = 0; i < ring.length && !sink.full; i++) {
      const p = parsePosition(ring[i], ['coordinates', r, i], sink);
      if (p !== null) out.push(p);
    }
    rings.push(out);
  }
  return sink.errors.length === 0 ? rings : null;
}

/** Run the schema checks; never throws for any input (see {@link validateGeometry} for the catch-all). */
export function parseGeometrySchema(input: unknown): SchemaResult {
  const sink = new ErrorSink();
  if (!isRecord(input)) {
    sink.add('dict_type', [], 'Input should be a valid geometry object');
    return { ok: false, errors: sink.errors };
  }
  const type = own(input, 'type');
  const coordinates = own(input, 'coordinates');
  if (type === undefined || typeof type !== 'string') {
    if (type === undefined) sink.add('missing', ['type'], 'Field required');
    else sink.add('literal_error', ['type'], "Input should be 'Polygon' or 'Circle'");
    if (coordinates === undefined) sink.add('missing', ['coordinates'], 'Field required');
    return { ok: false, errors: sink.errors };
  }
  if (type !== 'Polygon' && type !== 'Circle')
    return { ok: true, value: { type: 'unsupported', name: type } };
  if (coordinates === undefined) sink.add('missing', ['coordinates'], 'Field required');

  if (type === 'Polygon') {
    const rings = coordinates === undefined ? null : parsePolygon(coordinates, sink);
    if (rings === null || sink.errors.length > 0) return { ok: false, errors: sink.errors };
    return { ok: true, value: { type: 'Polygon', rings } };
  }

  const center = coordinates === undefined ? null : parsePosition(coordinates, ['coordinates'], sink);
  const radius = own(input, 'radius');
  if (radius === undefined) sink.add('missing', ['radius'], 'Field required');
  else if (!isFiniteNumber(radius)) sink.add('float_parsing', ['radius'], 'Input should be a finite number');
  if (center === null || sink.errors.length > 0) return { ok: false, errors: sink.errors };
  return { ok: true, value: { type: 'Circle', center, radius: radius as number } };
}
