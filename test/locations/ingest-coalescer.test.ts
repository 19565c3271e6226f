/**
 * Group commit of single-location requests: concurrent submissions of a workspace share one
 * ingestion call, a lone one is not delayed, failures reach every request of the group, and an
 * unknown device fails only its own request.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { GeofenceEvent } from '../../src/events/events.repository.ts';
import type { IngestContext, IngestItem, IngestResult } from '../../src/locations/ingest.service.ts';
import { IngestCoalescer, type IngestFunction, MAX_GROUP } from '../../src/locations/ingest-coalescer.ts';
import type { ParsedLocation } from '../../src/locations/location-input.ts';
import type { StoredLocation } from '../../src/locations/locations.repository.ts';

const ctx = {} as IngestContext;
const location = (lng: number): ParsedLocation => ({
  lng,
  lat: 0,
  recordedAt: new Date(0),
  recordedAtIso: new Date(0).toISOString(),
  accuracy: null,
  speed: null,
  heading: null,
  altitude: null,
  metadata: {},
});

/** A fake ingestion recording its calls; devices named `missing` do not exist. */
function recorder(fail = false) {
  const calls: Array<{ workspaceId: string; items: readonly IngestItem[] }> = [];
  const ingest: IngestFunction = async (_ctx, workspaceId, items) => {
    calls.push({ workspaceId, items });
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (fail) throw new Error('transaction failed');
    const result: IngestResult = { stored: new Map(), missingDevice: [], eventsByRef: new Map(), events: [] };
    for (const item of items) {
      if (item.deviceId === 'missing') {
        result.missingDevice.push(item.ref);
        continue;
      }
      result.stored.set(item.ref, {
        id: `loc-${item.location.lng}`,
        deviceId: item.deviceId,
      } as StoredLocation);
      result.eventsByRef.set(item.ref, [{ id: `event-${item.location.lng}` } as GeofenceEvent]);
    }
    return result;
  };
  return { calls, ingest };
}

describe('ingest coalescer', () => {
  test('concurrent submissions of one workspace share a call; each gets its own result', async () => {
    const { calls, ingest } = recorder();
    const coalescer = new IngestCoalescer(ctx, { ingest });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_v, i) =>
        coalescer.submit('w1', i === 7 ? 'missing' : `d${i % 3}`, location(i)),
      ),
    );
    assert.equal(calls.length, 1, 'one group');
    assert.equal(calls[0]?.items.length, 30);
    results.forEach((r, i) => {
      if (i === 7) assert.equal(r.location, undefined, 'unknown device: no location');
      else assert.deepEqual([r.location?.id, r.events.map((e) => e.id)], [`loc-${i}`, [`event-${i}`]]);
    });
  });

  test('arrivals during a running group form the next group; workspaces are grouped apart', async () => {
    const { calls, ingest } = recorder();
    const coalescer = new IngestCoalescer(ctx, { ingest });
    const first = Promise.all([
      coalescer.submit('w1', 'd', location(1)),
      coalescer.submit('w2', 'd', location(2)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1)); // the first groups are running now
    const second = Promise.all([
      coalescer.submit('w1', 'd', location(3)),
      coalescer.submit('w1', 'd', location(4)),
    ]);
    await Promise.all([first, second]);
    assert.deepEqual(
      calls.map((c) => [c.workspaceId, c.items.map((i) => i.location.lng)]),
      [
        ['w1', [1]],
        ['w2', [2]],
        ['w1', [3, 4]],
      ],
    );
  });

  test('a failed transaction fails every request of its group, and the next group still runs', async () => {
    const failing = recorder(true);
    const coalescer = new IngestCoalescer(ctx, { ingest: failing.ingest });
    const outcomes = await Promise.allSettled([
      coalescer.submit('w', 'a', location(1)),
      coalescer.submit('w', 'b', location(2)),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['rejected', 'rejected'],
    );
    await assert.rejects(coalescer.submit('w', 'a', location(3)), /transaction failed/);
    assert.equal(failing.calls.length, 2);
  });

  test(`groups are capped at ${MAX_GROUP} locations`, async () => {
    const { calls, ingest } = recorder();
    const coalescer = new IngestCoalescer(ctx, { ingest });
    await Promise.all(
      Array.from({ length: MAX_GROUP + 5 }, (_v, i) => coalescer.submit('w', 'd', location(i))),
    );
    assert.deepEqual(
      calls.map((c) => c.items.length),
      [MAX_GROUP, 5],
    );
  });

  test('with several slots, groups of one workspace run side by side', async () => {
    const { calls, ingest } = recorder();
    const coalescer = new IngestCoalescer(ctx, { ingest, maxConcurrentGroups: 2 });
    const first = coalescer.submit('w', 'a', location(1));
    await new Promise((resolve) => setImmediate(resolve)); // group 1 started
    const second = coalescer.submit('w', 'b', location(2));
    await new Promise((resolve) => setImmediate(resolve)); // group 2 started beside it
    const third = Promise.all([
      coalescer.submit('w', 'c', location(3)),
      coalescer.submit('w', 'd', location(4)),
    ]);
    await Promise.all([first, second, third]);
    assert.deepEqual(
      calls.map((c) => c.items.map((i) => i.location.lng)),
      [[1], [2], [3, 4]],
    );
  });

  test('a device held by a running group waits for it; other devices go ahead, order kept', async () => {
    const calls: Array<{ lngs: number[] }> = [];
    const releases: Array<() => void> = [];
    const ingest: IngestFunction = async (_ctx, _workspaceId, items) => {
      const lngs = items.map((i) => i.location.lng);
      calls.push({ lngs });
      await new Promise<void>((resolve) => releases.push(resolve));
      const result: IngestResult = {
        stored: new Map(),
        missingDevice: [],
        eventsByRef: new Map(),
        events: [],
      };
      for (const item of items)
        result.stored.set(item.ref, { id: `loc-${item.location.lng}` } as StoredLocation);
      return result;
    };
    const coalescer = new IngestCoalescer(ctx, { ingest, maxConcurrentGroups: 3 });
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const all = [coalescer.submit('w', 'a', location(1)), coalescer.submit('w', 'b', location(2))];
    await tick(); // group 1 holds a and b
    all.push(
      coalescer.submit('w', 'a', location(3)), // a is held: waits
      coalescer.submit('w', 'c', location(4)), // free: goes ahead
      coalescer.submit('w', 'a', location(5)), // after 3, never before it
    );
    await tick();
    assert.deepEqual(
      calls.map((c) => c.lngs),
      [[1, 2], [4]],
      'only the free device started beside group 1',
    );
    releases.shift()?.(); // group 1 commits: a is free again
    await tick();
    await tick();
    assert.deepEqual(calls[2]?.lngs, [3, 5], 'the waiting requests of a, in order');
    for (const release of releases.splice(0)) release();
    await tick();
    for (const release of releases.splice(0)) release();
    const results = await Promise.all(all);
    assert.deepEqual(
      results.map((r) => r.location?.id),
      ['loc-1', 'loc-2', 'loc-3', 'loc-4', 'loc-5'],
    );
  });
});
