/**
 * Geometry engine benchmark on the standard GEO-100K workload (/work/shared/bench/README.md):
 * the first 100 000 `fences()` (seed 1) and 200 000 `points()` (seed 2), generated in-process, or read
 * from NDJSON files given as `--fences file.ndjson --points file.ndjson`.
 *
 * Measures on one core (this process, single-threaded): validation, index build, heap per stored vertex,
 * GeofenceIndex.query lookups/s against the baseline rbush + Turf booleanPointInPolygon + haversine
 * (@turf/distance) in the same run, distance-to-fence lookups (GeofenceIndex.distanceM) against Turf's
 * pointToPolygonDistance on the same (point, nearby fence) pairs (geo-distance.ts), and upsert/remove latency. Medians of several rounds; the machine is
 * shared and noisy. Human-readable lines first, then one JSON object with all figures as the last line.
 *
 * The index build is timed with its input already parsed and validated (100 000 GeoJSON geometries alive,
 * ~0.5 GB of heap, as when a service has just loaded its fences): wall time including garbage collection,
 * the GC pauses inside it, and CPU time (user + system of all threads, process.cpuUsage), which is the
 * robust figure on a shared machine where wall time also counts waiting for a core.
 *
 * Updates run with lookups in between, each timed, so the figures show the worst single update and what
 * readers see while a background compaction runs (ADR 006).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon';
import { distance } from '@turf/distance';
import RBush from 'rbush';
import { geometryBbox, splitBbox } from '../src/geo/bbox.ts';
import { GeofenceIndex } from '../src/geo/geofence-index.ts';
import type { FenceGeometry, Position } from '../src/geo/types.ts';
import { validateGeometry } from '../src/geo/validate-geometry.ts';
import { benchDistance } from './geo-distance.ts';
import { spikyStar, starPolygon } from './geo-shapes.ts';

interface RawFence {
  id: string | number;
  geometry: unknown;
}
interface DatasetModule {
  fences(n?: number, seed?: number): RawFence[];
  points(n?: number, seed?: number): Position[];
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
/** GC pauses (start, duration) observed so far, to attribute them to timed intervals. */
const gcPauses: Array<[number, number]> = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcPauses.push([entry.startTime, entry.duration]);
});
gcObserver.observe({ entryTypes: ['gc'] });
function gcInside(from: number, to: number): number {
  let ms = 0;
  for (const [start, duration] of gcPauses) if (start >= from && start < to) ms += duration;
  return ms;
}

/** CPU milliseconds (user + system, every thread of the process) of a `process.cpuUsage(since)` delta. */
function cpuMs(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function readNdjson<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

async function loadWorkload(): Promise<{ fences: RawFence[]; points: Position[]; source: string }> {
  const fencesPath = argValue('--fences');
  const pointsPath = argValue('--points');
  if (fencesPath !== undefined && pointsPath !== undefined) {
    return {
      fences: readNdjson<RawFence>(fencesPath),
      points: readNdjson<Position>(pointsPath),
      source: 'ndjson',
    };
  }
  const href = new URL('../../shared/bench/dataset.mjs', import.meta.url).href;
  const dataset = (await import(href)) as DatasetModule;
  return { fences: dataset.fences(100_000, 1), points: dataset.points(200_000, 2), source: 'GEO-100K' };
}

const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits });

const workload = await loadWorkload();
const points = workload.points;
console.log(
  `workload ${workload.source}: ${fmt(workload.fences.length)} fences, ${fmt(points.length)} points`,
);

// --- validation -------------------------------------------------------------------------------------
const entries: Array<{ id: string; geometry: FenceGeometry }> = [];
let invalid = 0;
let polygonVertices = 0;
let circles = 0;
let t0 = performance.now();
for (const f of workload.fences) {
  const v = validateGeometry(f.geometry);
  if (!v.ok) {
    invalid++;
    continue;
  }
  entries.push({ id: String(f.id), geometry: v.geometry });
  if (v.geometry.type === 'Polygon') polygonVertices += v.vertexCount;
  else circles++;
}
const validateAllMs = performance.now() - t0;
const fenceCount = workload.fences.length;
// The raw input is garbage from here on (a service parses, validates and drops it); keeping it alive would
// only double the heap every garbage collection has to mark during the timed phases.
workload.fences = [];
console.log(
  `validated all fences in ${fmt(validateAllMs)} ms (${fmt((validateAllMs * 1000) / fenceCount, 1)} µs each), ${invalid} invalid`,
);

function timeValidation(geometry: unknown, runs: number): number {
  for (let i = 0; i < 200; i++) validateGeometry(geometry);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = validateGeometry(geometry);
    times.push(performance.now() - t);
    if (!r.ok) throw new Error(`benchmark polygon rejected: ${JSON.stringify(r)}`);
  }
  return median(times);
}
const star500Ms = timeValidation(starPolygon(500, 13.4, 52.5, 600, 7), 2000);
const spiky500Ms = timeValidation(spikyStar(500), 500);
console.log(
  `validation of a 500-vertex star polygon: median ${fmt(star500Ms * 1000, 1)} µs (target < 1000 µs)`,
);
console.log(
  `validation of a 500-vertex spiky star (adversarial: all edge boxes overlap): median ${fmt(spiky500Ms * 1000, 1)} µs`,
);

// --- index build ------------------------------------------------------------------------------------------
const buildTimes: number[] = [];
const buildCpuTimes: number[] = [];
const buildGcTimes: number[] = [];
let index: GeofenceIndex | undefined;
let builtSize = 0;
for (let r = 0; r < 7; r++) {
  index = undefined;
  gc();
  // Let V8's background threads finish sweeping the 0.5 GB heap after the forced GC, so that the build's
  // CPU time does not include the bench's own GC (and the observer accounts it).
  await new Promise((resolve) => setTimeout(resolve, 300));
  const cpu = process.cpuUsage();
  const t = performance.now();
  index = GeofenceIndex.build(entries);
  const end = performance.now();
  buildCpuTimes.push(cpuMs(process.cpuUsage(cpu)));
  buildTimes.push(end - t);
  builtSize = index.size;
  await new Promise((resolve) => setTimeout(resolve, 20)); // GC entries are delivered asynchronously
  buildGcTimes.push(gcInside(t, end));
}
const buildMs = median(buildTimes);
const buildCpuMs = median(buildCpuTimes);
const buildGcMs = median(buildGcTimes);
const buildNoGcMs = median(buildTimes.map((t, i) => t - (buildGcTimes[i] as number)));
gcObserver.disconnect(); // observing every scavenge costs time in the lookup loops below
console.log(
  `index build of ${fmt(builtSize)} fences (input already parsed, ~${fmt(process.memoryUsage().heapUsed / 1e6)} MB heap alive): median ${fmt(buildMs)} ms wall of ${buildTimes.map((t) => fmt(t)).join(', ')} (target < 500 ms), GC pauses included; CPU time (user + system, all threads): median ${fmt(buildCpuMs)} ms of ${buildCpuTimes.map((t) => fmt(t)).join(', ')}; GC pauses: median ${fmt(buildGcMs)} ms (${buildGcTimes.map((t) => fmt(t)).join(', ')}); wall without the GC pauses: median ${fmt(buildNoGcMs)} ms`,
);

// Streaming build in a child process (bench/geo-build-stream.ts): there only one fence's GeoJSON is alive at
// a time, so the GC that the index's new typed arrays trigger has little to mark.
let stream: Record<string, number> = {};
if (workload.source === 'GEO-100K') {
  const output = execFileSync(
    process.execPath,
    [new URL('./geo-build-stream.ts', import.meta.url).pathname],
    {
      encoding: 'utf8',
    },
  ).trim();
  const lines = output.split('\n');
  for (const line of lines.slice(0, -1)) console.log(line);
  stream = JSON.parse(lines[lines.length - 1] as string) as Record<string, number>;
}

// --- lookups: ours (the first round also builds the polygons' cell grids, lazily) ------------------------
function heapBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
index = undefined;
const heapBefore = heapBytes();
const ours = GeofenceIndex.build(entries);
const heapAfterBuild = heapBytes();
function runOurs(): number {
  let hits = 0;
  for (const p of points) hits += ours.query(p[0], p[1]).length;
  return hits;
}
const reused: string[] = [];
function runOursInto(): number {
  let hits = 0;
  for (const p of points) hits += ours.queryInto(p[0], p[1], reused);
  return hits;
}
t0 = performance.now();
runOurs();
const coldRate = points.length / ((performance.now() - t0) / 1000);
const heapAfter = heapBytes();
const indexHeap = heapAfter - heapBefore;
const storedVertices = polygonVertices + circles;
console.log(
  `index heap (heapUsed + arrayBuffers delta, after the first lookup round built the grids): ${fmt(indexHeap / 1e6, 1)} MB = ${fmt(indexHeap / storedVertices, 1)} bytes per stored vertex (${fmt(polygonVertices)} polygon vertices + ${fmt(circles)} circles; ${fmt((heapAfterBuild - heapBefore) / storedVertices, 1)} B/vertex right after the build); approxHeapBytes() says ${fmt(ours.approxHeapBytes() / 1e6, 1)} MB`,
);
runOurs(); // one more warm-up round: the JIT settles after the grids exist
runOursInto();
/** Lookups per second of this thread's CPU time (robust to waiting for a core on a shared machine). */
function cpuRate(sinceUs: number): number {
  const u = process.threadCpuUsage();
  return points.length / ((u.user + u.system - sinceUs) / 1e6);
}
function threadNowUs(): number {
  const u = process.threadCpuUsage();
  return u.user + u.system;
}
const ourRates: number[] = [];
const ourCpuRates: number[] = [];
const intoRates: number[] = [];
let ourHits = 0;
let intoHits = 0;
for (let r = 0; r < 9; r++) {
  const c = threadNowUs();
  let t = performance.now();
  ourHits = runOurs();
  ourRates.push(points.length / ((performance.now() - t) / 1000));
  ourCpuRates.push(cpuRate(c));
  t = performance.now();
  intoHits = runOursInto();
  intoRates.push(points.length / ((performance.now() - t) / 1000));
}
const ourRate = median(ourRates);
const ourCpuRate = median(ourCpuRates);
const intoRate = median(intoRates);
console.log(
  `GeofenceIndex.query: median ${fmt(ourRate)} lookups/s (rounds: ${ourRates.map((r) => fmt(r)).join(', ')}); first round, building grids: ${fmt(coldRate)}/s; ${fmt(ourHits)} hits = ${fmt(ourHits / points.length, 3)} per point`,
);
console.log(
  `GeofenceIndex.queryInto (reused result array, allocation-free): median ${fmt(intoRate)} lookups/s (rounds: ${intoRates.map((r) => fmt(r)).join(', ')}); ${fmt(intoHits)} hits`,
);

// --- lookups: baseline rbush + Turf -----------------------------------------------------------------------
interface BaselineItem {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  geometry: FenceGeometry;
}
const baselineTree = new RBush<BaselineItem>();
const baselineItems: BaselineItem[] = [];
for (const e of entries) {
  for (const b of splitBbox(geometryBbox(e.geometry))) {
    baselineItems.push({ minX: b[0], minY: b[1], maxX: b[2], maxY: b[3], geometry: e.geometry });
  }
}
t0 = performance.now();
baselineTree.load(baselineItems);
const baselineLoadMs = performance.now() - t0;
function runBaseline(): number {
  let hits = 0;
  const probe = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  for (const p of points) {
    probe.minX = probe.maxX = p[0];
    probe.minY = probe.maxY = p[1];
    for (const item of baselineTree.search(probe)) {
      const g = item.geometry;
      if (g.type === 'Polygon') {
        if (booleanPointInPolygon(p, g)) hits++;
      } else if (distance(g.coordinates, p, { units: 'meters' }) <= g.radius) hits++;
    }
  }
  return hits;
}
runBaseline(); // warm-up
const baseRates: number[] = [];
const baseCpuRates: number[] = [];
let baseHits = 0;
for (let r = 0; r < 5; r++) {
  const c = threadNowUs();
  const t = performance.now();
  baseHits = runBaseline();
  baseRates.push(points.length / ((performance.now() - t) / 1000));
  baseCpuRates.push(cpuRate(c));
}
const baseRate = median(baseRates);
const baseCpuRate = median(baseCpuRates);
console.log(
  `baseline rbush + Turf: median ${fmt(baseRate)} lookups/s (rounds: ${baseRates.map((r) => fmt(r)).join(', ')}); ${fmt(baseHits)} hits; rbush load ${fmt(baselineLoadMs)} ms`,
);
console.log(
  `ratio ours / baseline: ${fmt(ourRate / baseRate, 2)}× (target ≥ 4×; queryInto ${fmt(intoRate / baseRate, 2)}×); hit totals ${ourHits === baseHits && intoHits === baseHits ? 'agree' : 'DIFFER'}`,
);
console.log(
  `per second of thread CPU time: GeofenceIndex.query median ${fmt(ourCpuRate)} lookups (rounds: ${ourCpuRates.map((r) => fmt(r)).join(', ')}), baseline ${fmt(baseCpuRate)} (rounds: ${baseCpuRates.map((r) => fmt(r)).join(', ')}); ratio ${fmt(ourCpuRate / baseCpuRate, 2)}×`,
);

// --- distance to a fence: GeofenceIndex.distanceM against Turf's pointToPolygonDistance (geo-distance.ts) --
const distanceFigures = benchDistance(ours, entries, points, baselineTree, (line) => console.log(line));

// --- updates, with lookups in between (background compaction, ADR 006) -----------------------------------
// 40 000 mixed updates (upserts of existing and new ids, removes), each followed by 4 timed lookups. The
// automatic compactions run in bounded steps inside the updates; the lookups show what a reader sees
// meanwhile. Every update and lookup is timed on its own, in wall time and in this thread's CPU time
// (process.threadCpuUsage): on a shared machine the wall time of a single operation also counts the
// moments the thread was descheduled, its CPU time does not (a GC pause on this thread counts in both).
const upsertTimes: number[] = [];
const upsertCpuUs: number[] = [];
const upsertStarts: number[] = [];
const removeTimes: number[] = [];
const removeCpuUs: number[] = [];
const lookupsCompacting: number[] = [];
const lookupsQuiet: number[] = [];
const updateGcBefore = gcPauses.length;
gcObserver.observe({ entryTypes: ['gc'] });
const compactionsBefore = ours.stats.compactions;
let updatesCompacting = 0;
const updatesCpu = process.cpuUsage();
for (let i = 0; i < 40_000; i++) {
  const e = entries[(i * 7919) % entries.length] as { id: string; geometry: FenceGeometry };
  const c = threadNowUs();
  const t = performance.now();
  if (i % 4 === 3) {
    ours.remove(e.id);
    removeTimes.push(performance.now() - t);
    removeCpuUs.push(threadNowUs() - c);
  } else {
    ours.upsert(i % 8 === 1 ? `new-${i}` : e.id, e.geometry);
    upsertTimes.push(performance.now() - t);
    upsertCpuUs.push(threadNowUs() - c);
    upsertStarts.push(t);
  }
  const compacting = ours.stats.compacting;
  if (compacting) updatesCompacting++;
  for (let k = 0; k < 4; k++) {
    const p = points[(i * 4 + k) % points.length] as Position;
    const tl = performance.now();
    ours.queryInto(p[0], p[1], reused);
    (compacting ? lookupsCompacting : lookupsQuiet).push(performance.now() - tl);
  }
}
const updatesCpuMs = cpuMs(process.cpuUsage(updatesCpu));
const compactions = ours.stats.compactions - compactionsBefore;
await new Promise((resolve) => setTimeout(resolve, 20));
gcObserver.disconnect();
const maxOf = (values: number[]): number => values.reduce((m, v) => Math.max(m, v), 0);
const updateGcMax = maxOf(gcPauses.slice(updateGcBefore).map(([, d]) => d));
// The worst upserts that no GC pause overlapped: what the index itself costs (GC pauses are reported above).
const updatePauses = gcPauses.slice(updateGcBefore);
const gcFree = upsertTimes.flatMap((ms, k) => {
  const from = upsertStarts[k] as number;
  const hit = updatePauses.some(([start, d]) => start < from + ms && start + d > from);
  return hit ? [] : [k];
});
const upsertMaxNoGcMs = maxOf(gcFree.map((k) => upsertTimes[k] as number));
const upsertCpuMaxNoGcUs = maxOf(gcFree.map((k) => upsertCpuUs[k] as number));
gc();
const t1 = performance.now();
ours.compact();
const compactMs = performance.now() - t1;
const us = (ms: number): string => fmt(ms * 1000, 1);
console.log(
  `updates: upsert wall p50 ${us(median(upsertTimes))} µs, p99 ${us(quantile(upsertTimes, 0.99))} µs, p99.9 ${us(quantile(upsertTimes, 0.999))} µs, max ${fmt(maxOf(upsertTimes), 2)} ms; upsert thread CPU p99.9 ${fmt(quantile(upsertCpuUs, 0.999))} µs, max ${fmt(maxOf(upsertCpuUs) / 1000, 2)} ms; remove wall p50 ${us(median(removeTimes))} µs, max ${fmt(maxOf(removeTimes), 2)} ms, thread CPU max ${fmt(maxOf(removeCpuUs) / 1000, 2)} ms; worst upsert that no GC pause overlapped: ${fmt(upsertMaxNoGcMs, 2)} ms wall, ${fmt(upsertCpuMaxNoGcUs / 1000, 2)} ms thread CPU (${fmt(upsertTimes.length - gcFree.length)} upserts overlapped a GC); ${compactions} background compactions in 40,000 updates (${fmt(updatesCompacting)} updates made while one ran); longest GC pause meanwhile ${fmt(updateGcMax, 1)} ms; CPU of updates + lookups ${fmt(updatesCpuMs)} ms`,
);
console.log(
  `lookups between updates: while compacting p50 ${us(median(lookupsCompacting))} µs, p99 ${us(quantile(lookupsCompacting, 0.99))} µs, max ${fmt(maxOf(lookupsCompacting), 2)} ms (${fmt(lookupsCompacting.length)}); otherwise p50 ${us(median(lookupsQuiet))} µs, p99 ${us(quantile(lookupsQuiet, 0.99))} µs, max ${fmt(maxOf(lookupsQuiet), 2)} ms (${fmt(lookupsQuiet.length)}); explicit compact() ${fmt(compactMs)} ms`,
);

const figures = {
  workload: workload.source,
  fences: fenceCount,
  points: points.length,
  invalidFences: invalid,
  validateAllMs: Math.round(validateAllMs),
  validate500StarUs: Math.round(star500Ms * 1000 * 10) / 10,
  validate500SpikyUs: Math.round(spiky500Ms * 1000 * 10) / 10,
  buildMs: Math.round(buildMs),
  buildCpuMs: Math.round(buildCpuMs),
  buildCpuRunsMs: buildCpuTimes.map((t) => Math.round(t)),
  buildRunsMs: buildTimes.map((t) => Math.round(t)),
  buildGcMs: Math.round(buildGcMs),
  buildGcRunsMs: buildGcTimes.map((t) => Math.round(t)),
  buildWithoutGcMs: Math.round(buildNoGcMs),
  streamBuildMs: stream.streamBuildMs,
  streamBuildGcMs: stream.streamBuildGcMs,
  streamBuildMaterialiseMs: stream.materialiseMs,
  streamBuildCpuMs: stream.streamBuildCpuMs,
  streamBuildMaterialiseCpuMs: stream.materialiseCpuMs,
  indexHeapBytes: indexHeap,
  heapBytesPerStoredVertex: Math.round((indexHeap / storedVertices) * 10) / 10,
  approxHeapBytes: ours.approxHeapBytes(),
  heapBytesPerStoredVertexAfterBuild: Math.round(((heapAfterBuild - heapBefore) / storedVertices) * 10) / 10,
  firstRoundLookupsPerSec: Math.round(coldRate),
  lookupsPerSec: Math.round(ourRate),
  lookupsPerSecRounds: ourRates.map((r) => Math.round(r)),
  queryIntoLookupsPerSec: Math.round(intoRate),
  baselineLookupsPerSec: Math.round(baseRate),
  baselineRounds: baseRates.map((r) => Math.round(r)),
  ratio: Math.round((ourRate / baseRate) * 100) / 100,
  lookupsPerCpuSec: Math.round(ourCpuRate),
  baselineLookupsPerCpuSec: Math.round(baseCpuRate),
  cpuRatio: Math.round((ourCpuRate / baseCpuRate) * 100) / 100,
  queryIntoRatio: Math.round((intoRate / baseRate) * 100) / 100,
  ...distanceFigures,
  hits: ourHits,
  baselineHits: baseHits,
  hitsPerPoint: Math.round((ourHits / points.length) * 1000) / 1000,
  upsertP50Us: Math.round(median(upsertTimes) * 1000 * 10) / 10,
  upsertP99Us: Math.round(quantile(upsertTimes, 0.99) * 1000 * 10) / 10,
  upsertP999Us: Math.round(quantile(upsertTimes, 0.999) * 1000 * 10) / 10,
  upsertMaxMs: Math.round(maxOf(upsertTimes) * 100) / 100,
  upsertThreadCpuP999Us: Math.round(quantile(upsertCpuUs, 0.999)),
  upsertThreadCpuMaxMs: Math.round(maxOf(upsertCpuUs) / 10) / 100,
  upsertMaxNoGcMs: Math.round(upsertMaxNoGcMs * 100) / 100,
  upsertThreadCpuMaxNoGcMs: Math.round(upsertCpuMaxNoGcUs / 10) / 100,
  removeMaxMs: Math.round(maxOf(removeTimes) * 100) / 100,
  removeThreadCpuMaxMs: Math.round(maxOf(removeCpuUs) / 10) / 100,
  compactions,
  updatesWhileCompacting: updatesCompacting,
  updateGcMaxMs: Math.round(updateGcMax * 10) / 10,
  lookupWhileCompactingP50Us: Math.round(median(lookupsCompacting) * 1000 * 10) / 10,
  lookupWhileCompactingP99Us: Math.round(quantile(lookupsCompacting, 0.99) * 1000 * 10) / 10,
  lookupWhileCompactingMaxMs: Math.round(maxOf(lookupsCompacting) * 100) / 100,
  lookupQuietP50Us: Math.round(median(lookupsQuiet) * 1000 * 10) / 10,
  lookupQuietP99Us: Math.round(quantile(lookupsQuiet, 0.99) * 1000 * 10) / 10,
  compactMs: Math.round(compactMs),
};
console.log(JSON.stringify(figures));
