import { circleBbox, ringBbox } from './bbox.ts';
import { MAX_RADIUS_M } from './constants.ts';
import { checkPolygonTopology } from './ring-topology.ts';
import type { GeometryInvalid, GeometryValidation, Position } from './types.ts';
import { type ParsedGeometry, parseGeometrySchema } from './validate-schema.ts';

/** Contract §3: "radius <metres, 1..100000>"; a sub-metre circle is below GPS precision anyway. */
const MIN_RADIUS_M = 1;

/**
 * Validate an untrusted geometry (contract §3): schema checks (→ 422), then geometric checks in this
 * order, each over all rings before the next: unsupported type, unclosed ring, too few positions (after
 * removing repeated consecutive positions), coordinate range, ring topology (self-intersection, ring
 * crossings, connected interior, hole containment), circle radius. The first failing check is reported.
 * Never throws: any unexpected exception (e.g. a throwing getter on a non-JSON object) becomes a
 * schema `value_error`.
 */
export function validateGeometry(input: unknown): GeometryValidation {
  try {
    const parsed = parseGeometrySchema(input);
    if (!parsed.ok) return { ok: false, kind: 'schema', errors: parsed.errors };
    return validateParsed(parsed.value);
  } catch (err) {
    const detail = err instanceof Error ? err.message : 'unexpected input';
    return {
      ok: false,
      kind: 'schema',
      errors: [{ type: 'value_error', loc: [], msg: `Geometry could not be read: ${detail}` }],
    };
  }
}

function invalid(reason: GeometryInvalid['reason'], message: string, location?: Position): GeometryInvalid {
  return location === undefined
    ? { ok: false, kind: 'geometry', reason, message }
    : { ok: false, kind: 'geometry', reason, message, location: [location[0], location[1]] };
}

function inRange(p: Position): boolean {
  return p[0] >= -180 && p[0] <= 180 && p[1] >= -90 && p[1] <= 90;
}

/** Remove repeated consecutive positions (exact equality); the closing position is kept. */
export function removeRepeatedPositions(ring: readonly Position[]): Position[] {
  const out: Position[] = [];
  let last: Position | undefined;
  for (const p of ring) {
    if (last !== undefined && last[0] === p[0] && last[1] === p[1]) continue;
    last = [p[0], p[1]];
    out.push(last);
  }
  return out;
}

function validateParsed(value: ParsedGeometry): GeometryValidation {
  if (value.type === 'unsupported') {
    return invalid(
      'unsupported_type',
      `geometry type '${value.name}' is not supported; use 'Polygon' or 'Circle'`,
    );
  }
  if (value.type === 'Circle') {
    const { center, radius } = value;
    if (!inRange(center)) {
      return invalid(
        'coordinate_out_of_range',
        'longitude must be within −180..180 and latitude within −90..90',
        center,
      );
    }
    if (!(radius >= MIN_RADIUS_M && radius <= MAX_RADIUS_M)) {
      return invalid(
        'invalid_radius',
        `radius must be within ${MIN_RADIUS_M}..${MAX_RADIUS_M} metres, got ${radius}`,
        center,
      );
    }
    const c: Position = [center[0], center[1]];
    return {
      ok: true,
      geometry: { type: 'Circle', coordinates: c, radius },
      bbox: circleBbox(c[0], c[1], radius),
      vertexCount: 1,
    };
  }

  const raw = value.rings;
  for (let r = 0; r < raw.length; r++) {
    const ring = raw[r] as Position[];
    const first = ring[0];
    const last = ring[ring.length - 1];
    if (first !== undefined && last !== undefined && (first[0] !== last[0] || first[1] !== last[1])) {
      return invalid('unclosed_ring', `ring ${r}: the first and last positions must be equal`, first);
    }
  }
  const rings: Position[][] = [];
  for (let r = 0; r < raw.length; r++) {
    const ring = removeRepeatedPositions(raw[r] as Position[]);
    if (ring.length < 4) {
      return invalid(
        'too_few_positions',
        `ring ${r}: a linear ring needs at least 4 positions (3 distinct vertices), got ${ring.length} after removing repeated positions`,
        ring[0],
      );
    }
    rings.push(ring);
  }
  for (const ring of rings) {
    for (const p of ring) {
      if (!inRange(p)) {
        return invalid(
          'coordinate_out_of_range',
          'longitude must be within −180..180 and latitude within −90..90',
          p,
        );
      }
    }
  }
  const topology = checkPolygonTopology(rings);
  if (topology !== null) return invalid(topology.reason, topology.message, topology.location);
  let vertexCount = 0;
  for (const ring of rings) vertexCount += ring.length - 1;
  return {
    ok: true,
    geometry: { type: 'Polygon', coordinates: rings },
    bbox: ringBbox(rings[0] as Position[]),
    vertexCount,
  };
}
