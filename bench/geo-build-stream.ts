/**
 * Streaming index build on GEO-100K (run by bench/geo.ts in a child process, or alone:
 * `node bench/geo-build-stream.ts`): `GeofenceIndex.build(iterable)` fed by a generator that materialises
 * each validated fence as GeoJSON just before the index compiles it, so that only one fence's GeoJSON is
 * alive at a time — as a service streaming rows from its database would. The fences are validated first
 * and kept in a compact binary form (typed arrays, like a binary geometry column), not as GeoJSON.
 *
 * Compare with bench/geo.ts's build, whose input (all 100 000 GeoJSON geometries) is alive during the
 * build: there, V8's full GC triggered by the index's new typed arrays must mark ~0.5 GB of it.
 * Prints human-readable lines, then one JSON object as the last line.
 */

import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { GeofenceIndex } from '../src/geo/geofence-index.ts';
import type { FenceGeometry, Position } from '../src/geo/types.ts';
import { validateGeometry } from '../src/geo/validate-geometry.ts';

interface DatasetModule {
  fences(n?: number, seed?: number): Array<{ id: string | number; geometry: unknown }>;
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const gcPauses: Array<[number, number]> = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push([entry.startTime, entry.duration]);
}).observe({ entryTypes: ['gc'] });
const gcInside = (from: number, to: number): number =>
  gcPauses.reduce((ms, [start, d]) => (start >= from && start < to ? ms + d : ms), 0);
/** CPU milliseconds (user + system, all threads) of a `process.cpuUsage(since)` delta. */
function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}
function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1] as number;
}

// Validate, then pack: per fence a kind, an id, and either (lng, lat, radius) or its rings' positions.
const dataset = (await import(
  new URL('../../shared/bench/dataset.mjs', import.meta.url).href
)) as DatasetModule;
const ids: string[] = [];
const kinds: number[] = []; // 0 circle, else ring count
const params: number[] = []; // circle: lng, lat, radius
const ringLengths: number[] = [];
let coords = new Float64Array(1 << 20);
let used = 0;
{
  let fences: Array<{ id: string | number; geometry: unknown }> | null = dataset.fences(100_000, 1);
  for (const f of fences) {
    const v = validateGeometry(f.geometry);
    if (!v.ok) continue;
    ids.push(String(f.id));
    const g = v.geometry;
    if (g.type === 'Circle') {
      kinds.push(0);
      params.push(g.coordinates[0], g.coordinates[1], g.radius);
      continue;
    }
    kinds.push(g.coordinates.length);
    for (const ring of g.coordinates) {
      ringLengths.push(ring.length);
      if (used + 2 * ring.length > coords.length) {
        const next = new Float64Array(2 * coords.length);
        next.set(coords);
        coords = next;
      }
      for (const p of ring) {
        coords[used++] = p[0];
        coords[used++] = p[1];
      }
    }
  }
  fences = null;
}

/** The fences as GeoJSON entries, one at a time. */
function* stream(): Generator<{ id: string; geometry: FenceGeometry }> {
  let c = 0;
  let r = 0;
  let at = 0;
  for (let i = 0; i < ids.length; i++) {
    const kind = kinds[i] as number;
    if (kind === 0) {
      yield {
        id: ids[i] as string,
        geometry: {
          type: 'Circle',
          coordinates: [params[c] as number, params[c + 1] as number],
          radius: params[c + 2] as number,
        },
      };
      c += 3;
      continue;
    }
    const rings: Position[][] = [];
    for (let k = 0; k < kind; k++) {
      const n = ringLengths[r++] as number;
      const ring: Position[] = new Array(n);
      for (let j = 0; j < n; j++, at += 2) ring[j] = [coords[at] as number, coords[at + 1] as number];
      rings.push(ring);
    }
    yield { id: ids[i] as string, geometry: { type: 'Polygon', coordinates: rings } };
  }
}

const materialiseTimes: number[] = [];
const buildTimes: number[] = [];
const buildCpu: number[] = [];
const materialiseCpu: number[] = [];
const buildGc: number[] = [];
let size = 0;
for (let round = 0; round < 5; round++) {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 300)); // background sweeping done
  let cpu = process.cpuUsage();
  let t = performance.now();
  let count = 0;
  for (const e of stream()) count += e.id.length > 0 ? 1 : 0;
  materialiseTimes.push(performance.now() - t);
  materialiseCpu.push(cpuMs(process.cpuUsage(cpu)));
  gc();
  await new Promise((resolve) => setTimeout(resolve, 300)); // background sweeping done
  cpu = process.cpuUsage();
  t = performance.now();
  const index = GeofenceIndex.build(stream());
  const end = performance.now();
  buildCpu.push(cpuMs(process.cpuUsage(cpu)));
  size = index.size;
  await new Promise((resolve) => setTimeout(resolve, 20));
  buildTimes.push(end - t);
  buildGc.push(gcInside(t, end));
  if (count !== size) throw new Error(`streamed ${count} fences, indexed ${size}`);
}
const figures = {
  fences: size,
  streamBuildMs: Math.round(median(buildTimes)),
  streamBuildRunsMs: buildTimes.map((t) => Math.round(t)),
  streamBuildGcMs: Math.round(median(buildGc)),
  materialiseMs: Math.round(median(materialiseTimes)),
  streamBuildCpuMs: Math.round(median(buildCpu)),
  materialiseCpuMs: Math.round(median(materialiseCpu)),
  streamBuildWithoutMaterialiseMs: Math.round(median(buildTimes) - median(materialiseTimes)),
};
console.log(
  `streaming build of ${size.toLocaleString('en-US')} fences (GeoJSON materialised one fence at a time): median ${figures.streamBuildMs} ms of ${figures.streamBuildRunsMs.join(', ')}, GC pauses inside ${figures.streamBuildGcMs} ms; materialising the GeoJSON alone takes ${figures.materialiseMs} ms, so the index's share is ≈ ${figures.streamBuildWithoutMaterialiseMs} ms; CPU (user + system) median ${figures.streamBuildCpuMs} ms, of which materialising ≈ ${figures.materialiseCpuMs} ms`,
);
console.log(JSON.stringify(figures));
