/**
 * Distance-to-geometry part of `npm run bench:geo`: `GeofenceIndex.distanceM` against Turf's
 * `pointToPolygonDistance` (@turf/point-to-polygon-distance, geodesic, metres) on the same (point, fence) pairs
 * in the same run. For each point, a fence near it: one picked at random (seeded) among the polygons — and,
 * separately, the circles — whose boxes meet a ~3 km square around the point, so distances range from 0
 * (inside) to a few km, as for a device near a fence it was in. Turf has no circles: circles are timed for the
 * index alone, next to `@turf/distance` minus the radius for scale.
 *
 * Turf takes ~0.5 ms per pair here (it allocates GeoJSON features and runs three haversines and a few cross
 * products per edge), so the comparison uses 4 000 pairs, 3 timed rounds of Turf and 9 of ours (each of ours
 * going over the pairs 5 times, so that a round lasts long enough to time).
 *
 * Also reports the largest difference from Turf over the pairs (Turf's edges are great-circle arcs, ours are
 * straight in lng/lat, which differ by millimetres over these short edges; docs/geometry.md) and the rate of
 * `withinM` for a 100 m buffer.
 */
import { distance } from '@turf/distance';
import { pointToPolygonDistance } from '@turf/point-to-polygon-distance';
import type RBush from 'rbush';
import type { GeofenceIndex } from '../src/geo/geofence-index.ts';
import type { CircleGeometry, FenceGeometry, PolygonGeometry, Position } from '../src/geo/types.ts';

interface Pair<G> {
  id: string;
  geometry: G;
  point: Position;
}

interface TreeItem {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  geometry: FenceGeometry;
}

export interface DistanceFigures {
  distancePairs: number;
  distanceInsideShare: number;
  distanceMedianM: number;
  distancePerSec: number;
  distanceRounds: number[];
  turfDistancePerSec: number;
  turfDistanceRounds: number[];
  distanceRatio: number;
  distancePerCpuSec: number;
  turfDistancePerCpuSec: number;
  distanceCpuRatio: number;
  distanceMaxDiffFromTurfM: number;
  withinPerSec: number;
  circlePairs: number;
  circleDistancePerSec: number;
  circleTurfDistancePerSec: number;
}

const PAIRS = 4000;
/** Passes over the pairs per timed round of the fast loops. */
const PASSES = 5;

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function threadNowUs(): number {
  const u = process.threadCpuUsage();
  return u.user + u.system;
}

/** Pairs for the first `count` points: a random nearby polygon and a random nearby circle for each. */
function pickPairs(
  points: readonly Position[],
  count: number,
  tree: RBush<TreeItem>,
  idOf: Map<FenceGeometry, string>,
): { polygons: Pair<PolygonGeometry>[]; circles: Pair<CircleGeometry>[] } {
  const rand = lcg(7);
  const polygons: Pair<PolygonGeometry>[] = [];
  const circles: Pair<CircleGeometry>[] = [];
  // ~1.5 km either way at 52.5° N.
  const halfLat = 0.0135;
  const halfLng = 0.022;
  for (let i = 0; i < Math.min(count, points.length); i++) {
    const point = points[i] as Position;
    const near = tree.search({
      minX: point[0] - halfLng,
      minY: point[1] - halfLat,
      maxX: point[0] + halfLng,
      maxY: point[1] + halfLat,
    });
    const polys = near.filter((item) => item.geometry.type === 'Polygon');
    const circs = near.filter((item) => item.geometry.type === 'Circle');
    const p = polys[Math.floor(rand() * polys.length)];
    const c = circs[Math.floor(rand() * circs.length)];
    if (p !== undefined) {
      const geometry = p.geometry as PolygonGeometry;
      polygons.push({ id: idOf.get(geometry) as string, geometry, point });
    }
    if (c !== undefined) {
      const geometry = c.geometry as CircleGeometry;
      circles.push({ id: idOf.get(geometry) as string, geometry, point });
    }
  }
  return { polygons, circles };
}

/** Median pairs/s (wall) and pairs per CPU-second of this thread over `rounds` runs of `run` (after a warm-up). */
function rate(
  count: number,
  rounds: number,
  run: () => number,
): { wall: number; cpu: number; all: number[] } {
  run();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const c = threadNowUs();
    const t = performance.now();
    run();
    wall.push(count / ((performance.now() - t) / 1000));
    cpu.push(count / ((threadNowUs() - c) / 1e6));
  }
  return { wall: median(wall), cpu: median(cpu), all: wall };
}

export function benchDistance(
  index: GeofenceIndex,
  entries: ReadonlyArray<{ id: string; geometry: FenceGeometry }>,
  points: readonly Position[],
  tree: RBush<TreeItem>,
  log: (line: string) => void,
): DistanceFigures {
  const idOf = new Map<FenceGeometry, string>();
  for (const e of entries) idOf.set(e.geometry, e.id);
  const { polygons, circles } = pickPairs(points, PAIRS, tree, idOf);

  const ours = new Float64Array(polygons.length);
  const runOurs = (): number => {
    let sum = 0;
    for (let pass = 0; pass < PASSES; pass++) {
      for (let i = 0; i < polygons.length; i++) {
        const pair = polygons[i] as Pair<PolygonGeometry>;
        const d = index.distanceM(pair.id, pair.point[0], pair.point[1]) as number;
        ours[i] = d;
        sum += d;
      }
    }
    return sum;
  };
  const turf = new Float64Array(polygons.length);
  const runTurf = (): number => {
    let sum = 0;
    for (let i = 0; i < polygons.length; i++) {
      const pair = polygons[i] as Pair<PolygonGeometry>;
      const d = Math.max(0, pointToPolygonDistance(pair.point, pair.geometry, { units: 'meters' }));
      turf[i] = d;
      sum += d;
    }
    return sum;
  };
  const runWithin = (): number => {
    let n = 0;
    for (let pass = 0; pass < PASSES; pass++) {
      for (const pair of polygons) if (index.withinM(pair.id, pair.point[0], pair.point[1], 100)) n++;
    }
    return n;
  };
  const runCircles = (): number => {
    let sum = 0;
    for (let pass = 0; pass < PASSES; pass++) {
      for (const pair of circles) sum += index.distanceM(pair.id, pair.point[0], pair.point[1]) as number;
    }
    return sum;
  };
  const runCirclesTurf = (): number => {
    let sum = 0;
    for (let pass = 0; pass < PASSES; pass++) {
      for (const pair of circles) {
        const g = pair.geometry;
        sum += Math.max(0, distance(g.coordinates, pair.point, { units: 'meters' }) - g.radius);
      }
    }
    return sum;
  };

  const n = polygons.length;
  const oursRate = rate(PASSES * n, 9, runOurs);
  const turfRate = rate(n, 3, runTurf);
  const withinRate = rate(PASSES * n, 9, runWithin);
  const circleRate = rate(PASSES * circles.length, 9, runCircles);
  const circleTurfRate = rate(PASSES * circles.length, 9, runCirclesTurf);

  let maxDiff = 0;
  let inside = 0;
  for (let i = 0; i < n; i++) {
    maxDiff = Math.max(maxDiff, Math.abs((ours[i] as number) - (turf[i] as number)));
    if (ours[i] === 0) inside++;
  }
  const fmt = (v: number, digits = 0): string => v.toLocaleString('en-US', { maximumFractionDigits: digits });
  const medianM = median(Array.from(ours));
  log(
    `distance to a nearby polygon (${fmt(n)} pairs, ${fmt((100 * inside) / n, 1)} % inside, median ${fmt(medianM)} m): GeofenceIndex.distanceM median ${fmt(oursRate.wall)}/s (rounds: ${oursRate.all.map((r) => fmt(r)).join(', ')}); Turf pointToPolygonDistance median ${fmt(turfRate.wall)}/s (rounds: ${turfRate.all.map((r) => fmt(r)).join(', ')})`,
  );
  log(
    `ratio distanceM / Turf: ${fmt(oursRate.wall / turfRate.wall, 1)}× (target ≥ 4×); per CPU-second ${fmt(oursRate.cpu)} vs ${fmt(turfRate.cpu)} = ${fmt(oursRate.cpu / turfRate.cpu, 1)}×; largest difference from Turf ${fmt(maxDiff * 1000, 2)} mm; withinM(100 m) median ${fmt(withinRate.wall)}/s`,
  );
  log(
    `distance to a nearby circle (${fmt(circles.length)} pairs): GeofenceIndex.distanceM median ${fmt(circleRate.wall)}/s; @turf/distance − radius ${fmt(circleTurfRate.wall)}/s`,
  );
  return {
    distancePairs: n,
    distanceInsideShare: Math.round((inside / n) * 1000) / 1000,
    distanceMedianM: Math.round(medianM),
    distancePerSec: Math.round(oursRate.wall),
    distanceRounds: oursRate.all.map((r) => Math.round(r)),
    turfDistancePerSec: Math.round(turfRate.wall),
    turfDistanceRounds: turfRate.all.map((r) => Math.round(r)),
    distanceRatio: Math.round((oursRate.wall / turfRate.wall) * 10) / 10,
    distancePerCpuSec: Math.round(oursRate.cpu),
    turfDistancePerCpuSec: Math.round(turfRate.cpu),
    distanceCpuRatio: Math.round((oursRate.cpu / turfRate.cpu) * 10) / 10,
    distanceMaxDiffFromTurfM: Math.round(maxDiff * 1e6) / 1e6,
    withinPerSec: Math.round(withinRate.wall),
    circlePairs: circles.length,
    circleDistancePerSec: Math.round(circleRate.wall),
    circleTurfDistancePerSec: Math.round(circleTurfRate.wall),
  };
}
