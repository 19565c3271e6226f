/**
 * The index's payload arrays must not count as V8 "external memory" (long-lived.ts, ADR 006): that figure
 * schedules full GCs, which used to land inside every build. They must still show in
 * process.memoryUsage().arrayBuffers, which the bench's memory figure relies on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getHeapStatistics } from 'node:v8';
import { GeofenceIndex } from '../../src/geo/geofence-index.ts';
import { longF64 } from '../../src/geo/long-lived.ts';
import type { FenceGeometry } from '../../src/geo/types.ts';
import { lcg, starPolygon } from './fixtures.ts';

test('index arrays are reported as ArrayBuffer memory but not as V8 external memory', () => {
  const rand = lcg(3);
  const entries: Array<{ id: string; geometry: FenceGeometry }> = [];
  for (let i = 0; i < 20_000; i++) {
    entries.push({ id: `p${i}`, geometry: starPolygon(rand, 13 + rand(), 52 + rand(), 300, 60) });
  }
  const external = getHeapStatistics().external_memory;
  const buffers = process.memoryUsage().arrayBuffers;
  const index = GeofenceIndex.build(entries);
  const externalGrowth = getHeapStatistics().external_memory - external;
  const bufferGrowth = process.memoryUsage().arrayBuffers - buffers;
  assert.equal(index.size, 20_000);
  // 20 000 × 61 positions × 16 B ≈ 19.5 MB of coordinates alone.
  assert.ok(bufferGrowth > 19_000_000, `arrayBuffers grew by ${bufferGrowth} B only`);
  assert.ok(
    externalGrowth < bufferGrowth / 10,
    `external memory grew by ${externalGrowth} B of ${bufferGrowth}`,
  );
  // The control: an ordinary ArrayBuffer of the same size is counted.
  const before = getHeapStatistics().external_memory;
  const plain = new Float64Array(bufferGrowth / 8);
  assert.ok(getHeapStatistics().external_memory - before >= plain.byteLength / 2, 'control not counted');
  assert.equal(longF64(4).buffer instanceof SharedArrayBuffer, true);
});
