/**
 * GeofenceIndex compaction off the write path: the rebuild runs in bounded steps inside the updates (or
 * `compactStep()`), while the old static part and the overlays keep answering; updates made meanwhile are
 * replayed. Every answer is checked against the exact BigInt oracle (polygons) and the haversine definition
 * (circles), through several compactions, at every stage of a rebuild.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { geometryBbox } from '../../src/geo/bbox.ts';
import { GeofenceIndex } from '../../src/geo/geofence-index.ts';
import { pointInCircle } from '../../src/geo/point-in-circle.ts';
import type { FenceGeometry, Position } from '../../src/geo/types.ts';
import { validateGeometry } from '../../src/geo/validate-geometry.ts';
import { pointInPolygonExact } from './exact-oracle.ts';
import { lcg, starPolygon } from './fixtures.ts';

function validated(g: FenceGeometry): FenceGeometry {
  const v = validateGeometry(g);
  if (!v.ok) throw new Error(`fixture invalid: ${JSON.stringify(v)}`);
  return v.geometry;
}

/** Small fences in a 0.1° square, so that points hit a few and the oracle stays affordable. */
function fence(rand: () => number): FenceGeometry {
  const cx = 13 + rand() * 0.1;
  const cy = 52 + rand() * 0.1;
  if (rand() < 0.3) return validated({ type: 'Circle', coordinates: [cx, cy], radius: 50 + rand() * 550 });
  const vertices = 4 + Math.floor(rand() * (rand() < 0.8 ? 30 : 120));
  return validated(starPolygon(rand, cx, cy, 100 + rand() * 500, vertices, vertices > 12 && rand() < 0.2));
}

/** The model: live fences with their boxes; `expected` is the exact answer, sorted. */
class Model {
  readonly live = new Map<string, { g: FenceGeometry; box: number[] }>();
  set(id: string, g: FenceGeometry): void {
    this.live.set(id, { g, box: geometryBbox(g) });
  }
  expected(x: number, y: number): string[] {
    const out: string[] = [];
    for (const [id, { g, box }] of this.live) {
      if (g.type === 'Circle') {
        if (pointInCircle(x, y, g)) out.push(id);
      } else if (
        x >= (box[0] as number) &&
        x <= (box[2] as number) &&
        y >= (box[1] as number) &&
        y <= (box[3] as number) &&
        pointInPolygonExact(x, y, g.coordinates)
      ) {
        out.push(id);
      }
    }
    return out.sort();
  }
  /** Random points in the cluster and boundary points (vertices) of random live fences. */
  points(rand: () => number, n: number): Position[] {
    const all = [...this.live.values()];
    const pts: Position[] = [];
    for (let i = 0; i < n; i++) {
      const f = all[Math.floor(rand() * all.length)];
      if (i % 3 === 0 && f !== undefined && f.g.type === 'Polygon') {
        const ring = f.g.coordinates[0] as Position[];
        pts.push(ring[Math.floor(rand() * (ring.length - 1))] as Position);
      } else pts.push([13 - 0.005 + rand() * 0.11, 52 - 0.005 + rand() * 0.11]);
    }
    return pts;
  }
}

function check(index: GeofenceIndex, model: Model, points: Position[], label: string): number {
  let hits = 0;
  for (const [x, y] of points) {
    const expected = model.expected(x, y);
    assert.deepEqual([...index.query(x, y)].sort(), expected, `${label}: at ${x},${y}`);
    hits += expected.length;
  }
  assert.equal(index.size, model.live.size, `${label}: size`);
  return hits;
}

describe('GeofenceIndex: background compaction', () => {
  test('continuous updates through several compactions stay exactly right at every stage', () => {
    const rand = lcg(97);
    const model = new Model();
    const initial: Array<{ id: string; geometry: FenceGeometry }> = [];
    for (let i = 0; i < 1500; i++) {
      const g = fence(rand);
      model.set(`f${i}`, g);
      initial.push({ id: `f${i}`, geometry: g });
    }
    const index = GeofenceIndex.build(initial, { compactMin: 200, compactRatio: 0.1 });
    let next = 1500;
    let updatesWhileCompacting = 0;
    let checksWhileCompacting = 0;
    let hits = 0;
    for (let u = 0; u < 4000; u++) {
      const ids = [...model.live.keys()];
      const op = rand();
      if (op < 0.35) {
        const id = `f${next++}`;
        const g = fence(rand);
        model.set(id, g);
        index.upsert(id, g);
      } else if (op < 0.7) {
        const id = ids[Math.floor(rand() * ids.length)] as string;
        const g = fence(rand);
        model.set(id, g);
        index.upsert(id, g);
      } else {
        const id = ids[Math.floor(rand() * ids.length)] as string;
        assert.equal(index.remove(id), true);
        model.live.delete(id);
        assert.equal(index.remove(id), false, 'a second remove finds nothing');
      }
      if (index.stats.compacting) updatesWhileCompacting++;
      // Check often, and always while a rebuild is half done.
      if (u % 100 === 0 || (index.stats.compacting && u % 11 === 0)) {
        if (index.stats.compacting) checksWhileCompacting++;
        hits += check(index, model, model.points(rand, 40), `update ${u}`);
      }
    }
    assert.ok(index.stats.compactions >= 4, JSON.stringify(index.stats));
    assert.ok(updatesWhileCompacting > 200, `rebuilds spanned only ${updatesWhileCompacting} updates`);
    assert.ok(checksWhileCompacting > 30, `only ${checksWhileCompacting} checks during a rebuild`);
    assert.ok(hits > 1000, `only ${hits} hits`);
    for (const id of model.live.keys()) assert.ok(index.has(id), id);
    assert.equal(index.has('f-none'), false);
    index.compact();
    assert.equal(index.stats.compacting, false);
    assert.deepEqual(
      { overlay: index.stats.overlayFences, tombstones: index.stats.tombstones },
      { overlay: 0, tombstones: 0 },
    );
    check(index, model, model.points(rand, 600), 'after compact()');
  });

  test('changes to fences already copied, not yet copied, and in the frozen overlay are replayed', () => {
    const rand = lcg(5);
    const model = new Model();
    const initial: Array<{ id: string; geometry: FenceGeometry }> = [];
    for (let i = 0; i < 3000; i++) {
      const g = fence(rand);
      model.set(`s${i}`, g);
      initial.push({ id: `s${i}`, geometry: g });
    }
    const index = GeofenceIndex.build(initial, { autoCompact: false, compactMin: 900 });
    // Overlay fences, new ones and replacements of static ones: 700 + 350 tombstones, past the threshold (900).
    for (let i = 0; i < 700; i++) {
      const id = i % 2 === 0 ? `o${i}` : `s${i}`;
      const g = fence(rand);
      model.set(id, g);
      index.upsert(id, g);
    }
    assert.equal(index.stats.compacting, false, 'autoCompact: false never starts one by itself');
    // Step into the copy pass (128 slots per step: sizing takes 24 steps), then change fences on both
    // sides of it.
    let steps = 0;
    while (steps < 27) {
      assert.equal(index.compactStep(), true);
      steps++;
    }
    const copied = 's2'; // slot 2: copied in the first steps of the copy pass
    const notYet = 's2999'; // the last slot
    const frozenNew = 'o0'; // in the frozen overlay, copied last
    const frozenReplaced = 's1'; // replaced into the overlay before the rebuild: frozen too
    assert.equal(index.remove(copied), true);
    model.live.delete(copied);
    const g1 = fence(rand);
    index.upsert(notYet, g1);
    model.set(notYet, g1);
    assert.equal(index.remove(frozenNew), true);
    model.live.delete(frozenNew);
    const g2 = fence(rand);
    index.upsert(frozenReplaced, g2);
    model.set(frozenReplaced, g2);
    check(index, model, model.points(rand, 300), 'mid-copy');
    // Re-add a fence removed after being copied: it must live in the overlay, not resurrect the old copy.
    const g3 = fence(rand);
    index.upsert(copied, g3);
    model.set(copied, g3);
    let more = 0;
    while (index.compactStep()) {
      more++;
      if (more % 10 === 0) check(index, model, model.points(rand, 30), `step ${steps + more}`);
    }
    assert.ok(steps + more > 40, `the rebuild took only ${steps + more} steps: not split into bounded work`);
    assert.equal(index.stats.compactions, 1);
    // After the swap: the four changes are tombstones/overlay entries, everything else is static.
    assert.equal(index.stats.overlayFences, 3, JSON.stringify(index.stats)); // s2999, s1, s2 re-added
    // The copy of s2; s2999 was replaced before its slot was copied, s1 and o0 before the frozen overlay was.
    assert.equal(index.stats.tombstones, 1, JSON.stringify(index.stats));
    check(index, model, model.points(rand, 600), 'after the swap');
    for (const id of [copied, notYet, frozenReplaced]) assert.equal(index.has(id), true, id);
    assert.equal(index.has(frozenNew), false);
    index.compact();
    assert.deepEqual(index.stats, {
      size: model.live.size,
      staticFences: model.live.size,
      overlayFences: 0,
      tombstones: 0,
      compactions: 2,
      compacting: false,
    });
    check(index, model, model.points(rand, 300), 'after compact()');
  });

  test('compact() finishes a running rebuild first; removing everything mid-rebuild leaves an empty index', () => {
    const rand = lcg(11);
    const model = new Model();
    const initial: Array<{ id: string; geometry: FenceGeometry }> = [];
    for (let i = 0; i < 1000; i++) {
      const g = fence(rand);
      model.set(`a${i}`, g);
      initial.push({ id: `a${i}`, geometry: g });
    }
    const index = GeofenceIndex.build(initial, { autoCompact: false, compactMin: 100 });
    for (let i = 0; i < 120; i++) assert.equal(index.remove(`a${i}`), true);
    for (let i = 0; i < 120; i++) model.live.delete(`a${i}`);
    assert.equal(index.compactStep(), true);
    index.compact();
    assert.equal(index.stats.compactions, 2);
    check(index, model, model.points(rand, 200), 'after compact()');
    for (let i = 120; i < 240; i++) index.remove(`a${i}`);
    assert.equal(index.compactStep(), true);
    for (const id of [...model.live.keys()]) index.remove(id);
    model.live.clear();
    while (index.compactStep());
    assert.equal(index.size, 0);
    assert.deepEqual(index.query(13.05, 52.05), []);
    assert.equal(index.stats.staticFences, 0);
  });
});
