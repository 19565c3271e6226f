import { orient2d } from 'robust-predicates';
import { circleBbox, ringBbox } from './bbox.ts';
import { EARTH_RADIUS_M } from './constants.ts';
import { toRadians } from './haversine.ts';
import type { Bbox, FenceGeometry, PolygonGeometry } from './types.ts';

/**
 * Compiled, lookup-ready form of a validated fence.
 *
 * Polygons: all rings as one interleaved `Float64Array` [x0, y0, x1, y1, …] (rings closed), ring
 * boundaries in `ringEnds`, and for polygons with many edges a y-slab table (the bbox height cut into
 * equal slabs, each listing the edges whose y-range meets it), so a lookup only visits the edges of one
 * slab instead of all of them — the classic "slab" acceleration of ray casting (Haines, Graphics Gems
 * IV, §"Grid/slab methods"). The exact crossing test is the one of point-in-ring.ts, on typed arrays.
 *
 * Circles: centre, radius and cos(centre latitude), so the haversine distance is the exact expression of
 * `haversineDistance` (bit-identical), just with the centre's cosine hoisted.
 *
 * A single class with one shape for both kinds keeps the lookup call sites monomorphic in V8.
 */
export class CompiledFence {
  readonly id: string;
  /** 0 = polygon, 1 = circle. */
  readonly kind: 0 | 1;
  /** Box used by the index (circles padded by {@link CIRCLE_INDEX_PAD_DEG}); may wrap (west > east). */
  readonly bbox: Bbox;
  readonly vertexCount: number;
  // Polygon data.
  readonly coords: Float64Array;
  /** End (exclusive) of each ring in positions; ring k spans [ringEnds[k-1] ?? 0, ringEnds[k]). */
  readonly ringEnds: Uint16Array;
  readonly slabCount: number;
  readonly slabMinY: number;
  readonly slabScale: number;
  /** Slab k's edges are slabEdges[slabStarts[k] .. slabStarts[k+1]); an edge is named by its start position. */
  readonly slabStarts: Uint32Array;
  readonly slabEdges: Uint16Array;
  // Circle data.
  readonly lng: number;
  readonly lat: number;
  readonly radius: number;
  readonly cosLat: number;

  constructor(id: string, geometry: FenceGeometry) {
    this.id = id;
    if (geometry.type === 'Circle') {
      const [lng, lat] = geometry.coordinates;
      this.kind = 1;
      this.bbox = circleBbox(lng, lat, geometry.radius, CIRCLE_INDEX_PAD_DEG);
      this.vertexCount = 1;
      this.coords = EMPTY_F64;
      this.ringEnds = EMPTY_U16;
      this.slabCount = 0;
      this.slabMinY = 0;
      this.slabScale = 0;
      this.slabStarts = EMPTY_U32;
      this.slabEdges = EMPTY_U16;
      this.lng = lng;
      this.lat = lat;
      this.radius = geometry.radius;
      this.cosLat = Math.cos(toRadians(lat));
      return;
    }
    const { coords, ringEnds, vertexCount } = flatten(geometry);
    this.kind = 0;
    this.bbox = ringBbox(geometry.coordinates[0] ?? []);
    this.vertexCount = vertexCount;
    this.coords = coords;
    this.ringEnds = ringEnds;
    this.lng = 0;
    this.lat = 0;
    this.radius = 0;
    this.cosLat = 0;
    const edges = vertexCount;
    if (edges < SLAB_MIN_EDGES) {
      this.slabCount = 0;
      this.slabMinY = 0;
      this.slabScale = 0;
      this.slabStarts = EMPTY_U32;
      this.slabEdges = EMPTY_U16;
      return;
    }
    const slabs = buildSlabs(coords, ringEnds, this.bbox[1], this.bbox[3], Math.ceil(edges / EDGES_PER_SLAB));
    this.slabCount = slabs.count;
    this.slabMinY = this.bbox[1];
    this.slabScale = slabs.scale;
    this.slabStarts = slabs.starts;
    this.slabEdges = slabs.edges;
  }

  /** Approximate retained bytes (typed-array payloads + object/header overheads), for capacity planning. */
  get approxBytes(): number {
    const arrays = [this.coords, this.ringEnds, this.slabStarts, this.slabEdges];
    let bytes = 200 + 2 * this.id.length; // object with 19 fields + 4 box numbers + id string
    for (const a of arrays) if (a.length > 0) bytes += a.byteLength + TYPED_ARRAY_OVERHEAD;
    return bytes;
  }
}

/** ~0.1 mm: makes the circle's index box conservative against rounding in its trigonometry. */
export const CIRCLE_INDEX_PAD_DEG = 1e-9;
/** Polygons with at least this many edges get a y-slab table (measured: below it a plain scan is as fast). */
export const SLAB_MIN_EDGES = 24;
/** Target edges per slab. */
export const EDGES_PER_SLAB = 2;
/** V8 JSTypedArray + JSArrayBuffer headers, roughly. */
const TYPED_ARRAY_OVERHEAD = 120;
const EMPTY_F64 = new Float64Array(0);
const EMPTY_U16 = new Uint16Array(0);
const EMPTY_U32 = new Uint32Array(0);

function flatten(polygon: PolygonGeometry): {
  coords: Float64Array;
  ringEnds: Uint16Array;
  vertexCount: number;
} {
  let positions = 0;
  for (const ring of polygon.coordinates) positions += ring.length;
  const coords = new Float64Array(positions * 2);
  const ringEnds = new Uint16Array(polygon.coordinates.length);
  let k = 0;
  let r = 0;
  for (const ring of polygon.coordinates) {
    for (const p of ring) {
      coords[k++] = p[0];
      coords[k++] = p[1];
    }
    ringEnds[r++] = k >> 1;
  }
  return { coords, ringEnds, vertexCount: positions - polygon.coordinates.length };
}

function slabOf(y: number, minY: number, scale: number, count: number): number {
  const s = Math.floor((y - minY) * scale);
  return s < 0 ? 0 : s >= count ? count - 1 : s;
}

/**
 * Assign every edge to the slabs its y-range meets. `slabOf` is monotone in y, so the slab of any y in
 * [edge min y, edge max y] lies between the slabs of the two ends: no crossing edge is ever missed. If
 * long edges would make the table large (> 8 entries per edge), use fewer slabs.
 */
function buildSlabs(
  coords: Float64Array,
  ringEnds: Uint16Array,
  minY: number,
  maxY: number,
  wanted: number,
): { count: number; scale: number; starts: Uint32Array; edges: Uint16Array } {
  const height = maxY - minY;
  let count = Math.max(1, wanted);
  for (;;) {
    const scale = height > 0 ? count / height : 0;
    const starts = new Uint32Array(count + 1);
    let entries = 0;
    let begin = 0;
    for (const end of ringEnds) {
      for (let i = begin; i + 1 < end; i++) {
        const ya = coords[2 * i + 1] as number;
        const yb = coords[2 * i + 3] as number;
        const s0 = slabOf(Math.min(ya, yb), minY, scale, count);
        const s1 = slabOf(Math.max(ya, yb), minY, scale, count);
        for (let s = s0; s <= s1; s++) starts[s + 1] = (starts[s + 1] as number) + 1;
        entries += s1 - s0 + 1;
      }
      begin = end;
    }
    const edgesTotal = (coords.length >> 1) - ringEnds.length;
    if (entries > 8 * edgesTotal && count > 1) {
      count = Math.max(1, count >> 1);
      continue;
    }
    for (let s = 0; s < count; s++) starts[s + 1] = (starts[s + 1] as number) + (starts[s] as number);
    const fill = starts.slice(0, count);
    const edges = new Uint16Array(entries);
    begin = 0;
    for (const end of ringEnds) {
      for (let i = begin; i + 1 < end; i++) {
        const ya = coords[2 * i + 1] as number;
        const yb = coords[2 * i + 3] as number;
        const s0 = slabOf(Math.min(ya, yb), minY, scale, count);
        const s1 = slabOf(Math.max(ya, yb), minY, scale, count);
        for (let s = s0; s <= s1; s++) {
          const at = fill[s] as number;
          edges[at] = i;
          fill[s] = at + 1;
        }
      }
      begin = end;
    }
    return { count, scale, starts, edges };
  }
}

/**
 * Exact crossing-number contribution of edge a→b for the point (x, y) (see point-in-ring.ts):
 * 1 = the +x ray crosses it, 0 = it does not, -1 = the point lies on the edge.
 */
function edgeStep(ax: number, ay: number, bx: number, by: number, x: number, y: number): number {
  if (ay > y !== by > y) {
    if (ax > x && bx > x) return 1;
    if (ax < x && bx < x) return 0;
    const o = orient2d(ax, ay, bx, by, x, y);
    if (o === 0) return -1;
    return o < 0 === by > ay ? 1 : 0;
  }
  if (ay === y) {
    if (ax === x) return -1;
    if (by === y && ax < x !== bx < x) return -1;
  }
  return 0;
}

/** Exact polygon test on the compiled form; boundary counts as inside. */
export function polygonContains(f: CompiledFence, x: number, y: number): boolean {
  const c = f.coords;
  let crossings = 0;
  if (f.slabCount > 0) {
    const s = slabOf(y, f.slabMinY, f.slabScale, f.slabCount);
    const edges = f.slabEdges;
    const end = f.slabStarts[s + 1] as number;
    for (let k = f.slabStarts[s] as number; k < end; k++) {
      const i = (edges[k] as number) << 1;
      const step = edgeStep(c[i] as number, c[i + 1] as number, c[i + 2] as number, c[i + 3] as number, x, y);
      if (step < 0) return true;
      crossings += step;
    }
    return (crossings & 1) === 1;
  }
  let begin = 0;
  for (let r = 0; r < f.ringEnds.length; r++) {
    const end = (f.ringEnds[r] as number) << 1;
    let ax = c[begin] as number;
    let ay = c[begin + 1] as number;
    for (let i = begin + 2; i < end; i += 2) {
      const bx = c[i] as number;
      const by = c[i + 1] as number;
      // Inline fast rejection of edges entirely above or below the ray (the common case).
      if (ay > y !== by > y || ay === y) {
        const step = edgeStep(ax, ay, bx, by, x, y);
        if (step < 0) return true;
        crossings += step;
      }
      ax = bx;
      ay = by;
    }
    begin = end;
  }
  return (crossings & 1) === 1;
}

/**
 * Exact circle test, bit-identical to `haversineDistance(f.lng, f.lat, x, y) <= f.radius`;
 * `cosY` must be `Math.cos(toRadians(y))`, computed once per query point.
 */
export function circleContains(f: CompiledFence, x: number, y: number, cosY: number): boolean {
  const dLat = toRadians(y - f.lat);
  const dLon = toRadians(x - f.lng);
  const a = Math.sin(dLat / 2) ** 2 + Math.sin(dLon / 2) ** 2 * f.cosLat * cosY;
  return 2 * Math.atan2(Math.sqrt(a), Math.sqrt(1 - a)) * EARTH_RADIUS_M <= f.radius;
}

/** Exact containment test of a compiled fence (boundary inside). */
export function fenceContains(f: CompiledFence, x: number, y: number): boolean {
  return f.kind === 1 ? circleContains(f, x, y, Math.cos(toRadians(y))) : polygonContains(f, x, y);
}

/** Compile a validated geometry for lookups. */
export function compileFence(id: string, geometry: FenceGeometry): CompiledFence {
  return new CompiledFence(id, geometry);
}
