import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cellFraction, type GridLevel, StaticGrid } from '../../src/geo/grid-index.ts';
import { lcg } from './fixtures.ts';

const STRIDE = 5;

/** Entries listed for the cell of (x, y) on every level whose quantized and exact boxes contain the point. */
function candidates(grid: StaticGrid, x: number, y: number): number[] {
  const out: number[] = [];
  for (const level of grid.levels as GridLevel[]) {
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
      const q = grid.qboxes[e] as number;
      if (ux < (q & 255) || ux > ((q >>> 16) & 255) || uy < ((q >>> 8) & 255) || uy > q >>> 24) continue;
      const b = e * grid.stride;
      const ent = grid.entries;
      if (x < (ent[b] as number) || y < (ent[b + 1] as number)) continue;
      if (x > (ent[b + 2] as number) || y > (ent[b + 3] as number)) continue;
      out.push(grid.codes[e] as number);
    }
  }
  return out.sort((a, b) => a - b);
}

describe('StaticGrid', () => {
  test('dense and hashed levels, every box found exactly once for points inside, on sides and corners', () => {
    const rand = lcg(81);
    const n = 3000;
    const rows = new Float64Array(STRIDE * n);
    const codes = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      let w: number;
      let s: number;
      let size: number;
      if (i % 150 !== 0) {
        // A dense cluster of small boxes, some sides on cell lines (multiples of 2^-8).
        size = (0.001 + rand() * 0.01) * (rand() < 0.2 ? 30 : 1);
        w = 13 + rand() * 0.5;
        s = 52 + rand() * 0.5;
        if (i % 3 === 0) {
          w = Math.floor(w * 256) / 256;
          s = Math.floor(s * 256) / 256;
        }
      } else {
        // Sparse boxes all over the globe (a hashed level), some at ±180 and ±90.
        size = 0.5 + rand() * 5;
        w = i % 300 === 0 ? 180 - size : rand() * 350 - 175;
        s = i % 450 === 0 ? -90 : rand() * 160 - 85;
      }
      rows.set([w, s, Math.min(180, w + size), Math.min(90, s + size), i], STRIDE * i);
      codes[i] = i;
    }
    const grid = StaticGrid.build(rows, STRIDE, codes, n);
    assert.ok(
      grid.levels.some((l) => l.dense),
      'a dense level',
    );
    assert.ok(
      grid.levels.some((l) => !l.dense),
      'a hashed level',
    );
    const probes: Array<[number, number]> = [];
    for (let k = 0; k < 4000; k++) {
      const i = Math.floor(rand() * n);
      const o = STRIDE * i;
      const [w, s, e, nn] = [rows[o], rows[o + 1], rows[o + 2], rows[o + 3]] as [
        number,
        number,
        number,
        number,
      ];
      probes.push(
        [w + rand() * (e - w), s + rand() * (nn - s)],
        [w, s],
        [e, nn],
        [w, nn],
        [e, s],
        [w, s + rand() * (nn - s)],
        [e, s + rand() * (nn - s)],
      );
    }
    for (let k = 0; k < 2000; k++) probes.push([rand() * 360 - 180, rand() * 180 - 90]);
    probes.push([180, 90], [-180, -90], [180, -90], [-180, 90]);
    for (const [x, y] of probes) {
      const expected: number[] = [];
      for (let i = 0; i < n; i++) {
        const o = STRIDE * i;
        if (
          x >= (rows[o] as number) &&
          x <= (rows[o + 2] as number) &&
          y >= (rows[o + 1] as number) &&
          y <= (rows[o + 3] as number)
        )
          expected.push(i);
      }
      assert.deepEqual(candidates(grid, x, y), expected, `at ${x},${y}`);
    }
  });

  test('setColumns updates every copy of an item', () => {
    const rows = Float64Array.of(13, 52, 13.05, 52.05, 0, 13.01, 52.01, 13.02, 52.02, 0);
    const grid = StaticGrid.build(rows, STRIDE, Int32Array.of(7, 8), 2);
    grid.setColumns(7, 13, 52, 13.05, 52.05, 2, 1, 2); // columns 2 and 4 (the box's east side is only overwritten in copies)
    let copies = 0;
    for (let e = 0; e < grid.codes.length; e++) {
      if (grid.codes[e] !== 7) continue;
      copies++;
      assert.equal(grid.entries[e * STRIDE + 2], 1);
      assert.equal(grid.entries[e * STRIDE + 4], 2);
    }
    assert.ok(copies > 1);
  });
});
