import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pointInPolygon } from '../../src/geo/point-in-polygon.ts';
import {
  appendPolygonGrid,
  cellBottom,
  cellMargin,
  cellRight,
  gridLocate,
  gridSize,
  lookupPoint,
} from '../../src/geo/polygon-grid.ts';
import type { PolygonGeometry, Position } from '../../src/geo/types.ts';
import { ARENA_CHUNK_MASK, U16Arena } from '../../src/geo/u16-builder.ts';
import { pointInPolygonExact } from './exact-oracle.ts';
import { lcg, nextDown, nextUp, starPolygon } from './fixtures.ts';

/**
 * The per-polygon grid (polygon-grid.ts) decides a point from its cell's edges and the parity of the cell's
 * corner. These tests force the grid size, so that probes and vertices can be placed exactly on the cells'
 * (grown) sides and corners, the places where the path p → q → C meets edges and vertices.
 */

interface Compiled {
  coords: Float64Array;
  ringEnds: Uint16Array;
  rings: number;
  box: Float64Array;
}

function compile(poly: PolygonGeometry): Compiled {
  const positions = poly.coordinates.flat();
  const coords = new Float64Array(2 * positions.length);
  positions.forEach((p, i) => {
    coords[2 * i] = p[0];
    coords[2 * i + 1] = p[1];
  });
  const ringEnds = new Uint16Array(poly.coordinates.length);
  let end = 0;
  poly.coordinates.forEach((ring, k) => {
    end += ring.length;
    ringEnds[k] = end;
  });
  const shell = poly.coordinates[0] as Position[];
  const xs = shell.map((p) => p[0]);
  const ys = shell.map((p) => p[1]);
  const box = Float64Array.of(Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys));
  return { coords, ringEnds, rings: poly.coordinates.length, box };
}

function buildGrid(c: Compiled, g: number): { data: U16Arena; block: number } {
  const data = new U16Arena(16);
  const b = c.box;
  const block = appendPolygonGrid(
    c.coords,
    0,
    c.ringEnds,
    0,
    c.rings,
    data,
    b[0] as number,
    b[1] as number,
    b[2] as number,
    b[3] as number,
    g,
  );
  return { data, block };
}

function locate(c: Compiled, grid: { data: U16Arena; block: number }, x: number, y: number): number {
  lookupPoint[0] = x;
  lookupPoint[1] = y;
  const chunk = grid.data.chunk(grid.block);
  const local = grid.block & ARENA_CHUNK_MASK;
  return gridLocate(c.coords, chunk, local, gridSize(chunk, local), c.box, 0, 0);
}

/** The grown cell sides X_i (right) and Y_j (bottom) of a G × G grid over the box, as the grid computes them. */
function cellLines(box: Float64Array, g: number): { xs: number[]; ys: number[] } {
  const [minX, minY, maxX, maxY] = box as unknown as [number, number, number, number];
  const cw = (maxX - minX) / g;
  const ch = (maxY - minY) / g;
  const m = cellMargin(cw, ch);
  return {
    xs: Array.from({ length: g }, (_, i) => cellRight(minX, cw, i, m)),
    ys: Array.from({ length: g }, (_, j) => cellBottom(minY, ch, j, m)),
  };
}

function inBox(box: Float64Array, x: number, y: number): boolean {
  return (
    x >= (box[0] as number) && x <= (box[2] as number) && y >= (box[1] as number) && y <= (box[3] as number)
  );
}

/** Probes on the cell lines and corners, level with every vertex, on vertices and edges, and random. */
function adversarialProbes(
  poly: PolygonGeometry,
  box: Float64Array,
  g: number,
  rand: () => number,
): Position[] {
  const { xs, ys } = cellLines(box, g);
  const vx = poly.coordinates.flat().map((p) => p[0]);
  const vy = poly.coordinates.flat().map((p) => p[1]);
  const out: Position[] = [];
  for (const x of xs) {
    for (const y of vy) out.push([x, y], [nextDown(x), y], [nextUp(x), y]);
    for (const y of ys) out.push([x, y]);
  }
  for (const y of ys) for (const x of vx) out.push([x, y], [x, nextUp(y)]);
  for (const ring of poly.coordinates) {
    for (let i = 0; i + 1 < ring.length; i++) {
      const a = ring[i] as Position;
      const b = ring[i + 1] as Position;
      out.push(a, [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2], [a[0], nextUp(a[1])], [nextDown(a[0]), a[1]]);
    }
  }
  const w = (box[2] as number) - (box[0] as number);
  const h = (box[3] as number) - (box[1] as number);
  for (let i = 0; i < 200; i++) out.push([(box[0] as number) + rand() * w, (box[1] as number) + rand() * h]);
  return out.filter(([x, y]) => inBox(box, x, y));
}

describe('per-polygon grid: corner parity + own-cell edges (exact)', () => {
  test('star polygons (with holes), forced grid sizes, probes on cell sides, corners and vertex levels', () => {
    const rand = lcg(71);
    let probes = 0;
    let undecided = 0;
    for (let i = 0; i < 24; i++) {
      const poly = starPolygon(
        rand,
        13 + rand(),
        52 + rand(),
        100 + rand() * 500,
        16 + Math.floor(rand() * 120),
        i % 3 === 0,
      );
      const c = compile(poly);
      for (const g of [2, 3, 5, 8, 13, 29]) {
        const grid = buildGrid(c, g);
        assert.ok(grid.block >= 0, `grid built (G=${g})`);
        for (const [x, y] of adversarialProbes(poly, c.box, g, rand)) {
          const r = locate(c, grid, x, y);
          probes++;
          if (r < 0) {
            undecided++;
            continue;
          }
          assert.equal(r === 1, pointInPolygon(x, y, poly), `G=${g} at ${x},${y}`);
        }
      }
    }
    assert.ok(undecided < probes / 100, `${undecided} of ${probes} probes left to the scan`);
  });

  test('a sample checked against BigInt arithmetic', () => {
    const rand = lcg(72);
    for (let i = 0; i < 6; i++) {
      const poly = starPolygon(rand, 13, 52, 300, 60, i % 2 === 0);
      const c = compile(poly);
      const grid = buildGrid(c, 7);
      const pts = adversarialProbes(poly, c.box, 7, rand);
      for (let k = 0; k < pts.length; k += 5) {
        const [x, y] = pts[k] as Position;
        const r = locate(c, grid, x, y);
        if (r >= 0) assert.equal(r === 1, pointInPolygonExact(x, y, poly.coordinates), `${x},${y}`);
      }
    }
  });

  test('vertices exactly on cell sides (slanted edges): the grid is built and exact', () => {
    // The box [0, 1]² with G = 5; a zig-zag whose inner vertices lie exactly on grown cell sides (X_i or
    // Y_j, never both: a corner on the boundary would leave its parity undefined).
    const box = Float64Array.of(0, 0, 1, 1);
    const { xs, ys } = cellLines(box, 5);
    const ring: Position[] = [
      [0, 0],
      [1, 0],
      [1, 1],
      [xs[3] as number, 0.93],
      [0.71, ys[3] as number],
      [xs[2] as number, 0.52],
      [0.45, ys[4] as number],
      [xs[1] as number, 0.61],
      [0.12, ys[2] as number],
      [xs[0] as number, 0.97],
      [0, 1],
      [0, 0],
    ];
    const poly: PolygonGeometry = { type: 'Polygon', coordinates: [ring] };
    const c = compile(poly);
    const grid = buildGrid(c, 5);
    assert.ok(grid.block >= 0, 'vertices on cell sides (not corners) keep the grid');
    let decided = 0;
    for (const [x, y] of adversarialProbes(poly, c.box, 5, lcg(73))) {
      const r = locate(c, grid, x, y);
      if (r < 0) continue;
      decided++;
      assert.equal(r === 1, pointInPolygon(x, y, poly), `${x},${y}`);
    }
    assert.ok(decided > 100);
  });

  test('a vertex on a cell corner, or an edge along a cell side across a corner: no grid, the store scans', () => {
    const box = Float64Array.of(0, 0, 1, 1);
    const { xs, ys } = cellLines(box, 4);
    const [x1, x2] = [xs[0], xs[1]] as [number, number];
    // A U shape whose inner walls run along two grown cell sides, through the corners (X_i, Y_j).
    const ring: Position[] = [
      [0, 0],
      [1, 0],
      [1, 1],
      [x2, 1],
      [x2, 0.3],
      [x1, 0.3],
      [x1, 1],
      [0, 1],
      [0, 0],
    ];
    const poly: PolygonGeometry = { type: 'Polygon', coordinates: [ring] };
    assert.equal(buildGrid(compile(poly), 4).block, -1);
    const corner = ring.map((p) => [...p] as Position);
    corner[4] = [0.6, ys[1] as number];
    corner[5] = [x1, ys[1] as number]; // exactly the corner of cell (0, 1)
    assert.equal(buildGrid(compile({ type: 'Polygon', coordinates: [corner] }), 4).block, -1);
  });
});
