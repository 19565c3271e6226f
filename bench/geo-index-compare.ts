/**
 * Spatial-index comparison behind docs/decisions/006-spatial-index.md, on GEO-100K (100 000 fence boxes,
 * 200 000 query points). Measures the box-filter stage only (which boxes contain the point), the part the
 * index structure decides, for:
 *  - flatbush 4.x `search(x, y, x, y)` (static packed Hilbert R-tree), node sizes 4/8/16;
 *  - an allocation-free point traversal of the same flatbush arrays (what a tuned flatbush lookup can do);
 *  - rbush 4.x `search` (dynamic R*-tree-like), bulk `load` and one-by-one `insert`;
 *  - our StaticGrid (src/geo/grid-index.ts), probed as GeofenceIndex does (entries of 8 doubles, quantized
 *    per-cell pre-filter).
 * Run: node bench/geo-index-compare.ts   (prints a table, then one JSON line)
 */
import Flatbush from 'flatbush';
import RBush from 'rbush';
import { ENTRY } from '../src/geo/fence-layout.ts';
import { writeEntry } from '../src/geo/fence-store.ts';
import { buildFenceStore } from '../src/geo/fence-store-builder.ts';
import { cellFraction, StaticGrid } from '../src/geo/grid-index.ts';
import type { FenceGeometry, Position } from '../src/geo/types.ts';

interface DatasetModule {
  fences(n?: number, seed?: number): Array<{ id: number; geometry: FenceGeometry }>;
  points(n?: number, seed?: number): Position[];
}
const dataset = (await import(
  new URL('../../shared/bench/dataset.mjs', import.meta.url).href
)) as DatasetModule;
const fences = dataset.fences(100_000, 1);
const points = dataset.points(200_000, 2);
const store = buildFenceStore(fences.map((f) => ({ id: String(f.id), geometry: f.geometry })));
const n = store.count;
const boxes = new Float64Array(4 * n);
for (let s = 0; s < n; s++) boxes.set(store.box(s), 4 * s);
const px = Float64Array.from(points, (p) => p[0]);
const py = Float64Array.from(points, (p) => p[1]);

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s[s.length >> 1] as number;
}
function timeIt(fn: () => number, rounds: number): { ms: number; result: number } {
  let result = 0;
  const times: number[] = [];
  fn();
  for (let r = 0; r < rounds; r++) {
    const t = performance.now();
    result = fn();
    times.push(performance.now() - t);
  }
  return { ms: median(times), result };
}

const rows: Array<{ name: string; buildMs: number; lookupsPerSec: number; hits: number }> = [];
function record(name: string, buildMs: number, query: { ms: number; result: number }): void {
  rows.push({
    name,
    buildMs: Math.round(buildMs),
    lookupsPerSec: Math.round(points.length / (query.ms / 1000)),
    hits: query.result,
  });
}

for (const nodeSize of [4, 8, 16]) {
  const build = timeIt(() => {
    const fb = new Flatbush(n, nodeSize);
    for (let i = 0; i < n; i++)
      fb.add(
        boxes[4 * i] as number,
        boxes[4 * i + 1] as number,
        boxes[4 * i + 2] as number,
        boxes[4 * i + 3] as number,
      );
    fb.finish();
    return fb.numItems;
  }, 3);
  const fb = new Flatbush(n, nodeSize);
  for (let i = 0; i < n; i++)
    fb.add(
      boxes[4 * i] as number,
      boxes[4 * i + 1] as number,
      boxes[4 * i + 2] as number,
      boxes[4 * i + 3] as number,
    );
  fb.finish();
  record(
    `flatbush search (node ${nodeSize})`,
    build.ms,
    timeIt(() => {
      let hits = 0;
      for (let i = 0; i < px.length; i++)
        hits += fb.search(px[i] as number, py[i] as number, px[i] as number, py[i] as number).length;
      return hits;
    }, 5),
  );
  // Allocation-free point traversal of flatbush's packed arrays (same order as Flatbush#search).
  const stack = new Int32Array(1024);
  const fbBoxes = fb._boxes;
  const fbIdx = fb._indices;
  const levels = fb._levelBounds;
  const items4 = fb.numItems * 4;
  record(
    `flatbush, allocation-free traversal (node ${nodeSize})`,
    build.ms,
    timeIt(() => {
      let hits = 0;
      for (let q = 0; q < px.length; q++) {
        const x = px[q] as number;
        const y = py[q] as number;
        let top = 0;
        let node = fbBoxes.length - 4;
        let level = levels.length - 1;
        for (;;) {
          const end = Math.min(node + nodeSize * 4, levels[level] as number);
          for (let pos = node; pos < end; pos += 4) {
            if (x < (fbBoxes[pos] as number) || y < (fbBoxes[pos + 1] as number)) continue;
            if (x > (fbBoxes[pos + 2] as number) || y > (fbBoxes[pos + 3] as number)) continue;
            if (node >= items4) {
              stack[top++] = (fbIdx[pos >> 2] as number) | 0;
              stack[top++] = level - 1;
            } else hits++;
          }
          if (top === 0) break;
          level = stack[--top] as number;
          node = stack[--top] as number;
        }
      }
      return hits;
    }, 5),
  );
}

{
  const items = Array.from({ length: n }, (_, i) => ({
    minX: boxes[4 * i] as number,
    minY: boxes[4 * i + 1] as number,
    maxX: boxes[4 * i + 2] as number,
    maxY: boxes[4 * i + 3] as number,
  }));
  const load = timeIt(() => new RBush<(typeof items)[number]>().load(items).all().length, 3);
  const insert = timeIt(() => {
    const t = new RBush<(typeof items)[number]>();
    for (const it of items) t.insert(it);
    return 0;
  }, 1);
  const tree = new RBush<(typeof items)[number]>().load(items);
  const probe = { minX: 0, minY: 0, maxX: 0, maxY: 0 };
  const query = timeIt(() => {
    let hits = 0;
    for (let i = 0; i < px.length; i++) {
      probe.minX = probe.maxX = px[i] as number;
      probe.minY = probe.maxY = py[i] as number;
      hits += tree.search(probe).length;
    }
    return hits;
  }, 5);
  record('rbush search (bulk load)', load.ms, query);
  rows.push({
    name: 'rbush: 100 000 single inserts',
    buildMs: Math.round(insert.ms),
    lookupsPerSec: 0,
    hits: 0,
  });
}

{
  // Our grid as the index builds it: entry rows of ENTRY doubles (box + what the exact test needs) and codes.
  const entryRows = new Float64Array(ENTRY * n);
  const codes = new Int32Array(n);
  for (let s = 0; s < n; s++) {
    entryRows.set(store.box(s), ENTRY * s);
    writeEntry(store, s, entryRows, ENTRY * s);
    codes[s] = s;
  }
  const build = timeIt(() => StaticGrid.build(entryRows, ENTRY, codes, n).levels.length, 3);
  const grid = StaticGrid.build(entryRows, ENTRY, codes, n);
  const { entries, qboxes } = grid;
  record(
    'StaticGrid (ours: dense CSR, quantized pre-filter)',
    build.ms,
    timeIt(() => {
      let hits = 0;
      for (let q = 0; q < px.length; q++) {
        const x = px[q] as number;
        const y = py[q] as number;
        for (const level of grid.levels) {
          const fx = (x + 180) * level.inv;
          const fy = (y + 90) * level.inv;
          const cx = Math.floor(fx);
          const cy = Math.floor(fy);
          let e: number;
          let end: number;
          if (level.dense) {
            const ix = cx - level.x0;
            const iy = cy - level.y0;
            if (ix < 0 || iy < 0 || ix >= level.w || iy >= level.h) continue;
            e = level.cells[iy * level.w + ix] as number;
            end = level.cells[iy * level.w + ix + 1] as number;
          } else {
            const r = level.rowOf(cx, cy, false);
            if (r < 0) continue;
            e = level.cells[r + 2] as number;
            end = level.cells[r + 3] as number;
          }
          const ux = cellFraction(fx, cx);
          const uy = cellFraction(fy, cy);
          for (; e < end; e++) {
            const qb = qboxes[e] as number;
            if (ux < (qb & 255) || ux > ((qb >>> 16) & 255)) continue;
            if (uy < ((qb >>> 8) & 255) || uy > qb >>> 24) continue;
            const b = e * ENTRY;
            if (x < (entries[b] as number) || y < (entries[b + 1] as number)) continue;
            if (x > (entries[b + 2] as number) || y > (entries[b + 3] as number)) continue;
            hits++;
          }
        }
      }
      return hits;
    }, 5),
  );
}

for (const r of rows) {
  console.log(
    `${r.name.padEnd(52)} build ${String(r.buildMs).padStart(5)} ms   ${r.lookupsPerSec > 0 ? `${r.lookupsPerSec.toLocaleString('en-US').padStart(10)} box lookups/s   hits ${r.hits}` : ''}`,
  );
}
console.log(JSON.stringify(rows));
