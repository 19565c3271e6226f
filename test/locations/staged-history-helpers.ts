/**
 * The replay of staged-history.test.ts: random tracks of a few devices of one workspace (in and
 * out of order, equal timestamps, single posts and batches, tracking sessions started and stopped
 * part-way, rectangles to cross), planned once and then replayed into several workspaces through
 * the HTTP API, and each workspace's answers about them, with the ids that differ between
 * workspaces replaced by labels, so that two replays can be compared with `deepEqual`.
 *
 * A single post's location is staged, a batch's written to the per-device history at once, so one
 * device's history mixes rows of both tables; every case has single posts (`MIN_POSTS`).
 * `postConcurrently` stages many locations quickly: concurrent single posts form groups.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type Page, signUp } from '../helpers/identity.ts';
import {
  type BatchOut,
  type Credentials,
  createDevice,
  deviceEvents,
  getDevice,
  type LocationOut,
  listAll,
  postLocation,
  type SessionOut,
} from './helpers.ts';

/** Coordinates on a grid of 1e-3 degrees, so that points often sit on the rectangles' edges. */
const GRID = 1e-3;
const LNG0 = 10;
const LAT0 = 50;
const CELLS = 12;

interface Fix {
  i: number;
  j: number;
  /** Seconds after the device's previous fix; negative ones make out-of-order points, 0 ties. */
  dt: number;
  accuracy: number | null;
}

type StepSpec =
  | { kind: 'post'; device: number; fix: Fix }
  | { kind: 'batch'; items: Array<{ device: number; fix: Fix }> }
  | { kind: 'start'; device: number }
  | { kind: 'stop'; device: number };

/** A merge in the merging workspace's database after a step: a whole one, or one chunk only. */
export interface MergeSpec {
  whole: boolean;
  chunkRows: number;
}

/** A page of a device's history; `from`/`to` pick one of the device's fix times (modulo their count). */
export interface HistoryQuery {
  offset: number;
  limit: number;
  from: number | null;
  to: number | null;
}

export interface Case {
  devices: number;
  fences: Array<[number, number, number, number]>;
  steps: Array<{ step: StepSpec; merge: MergeSpec | null }>;
  queries: HistoryQuery[];
}

const span = fc
  .tuple(fc.integer({ min: 0, max: CELLS }), fc.integer({ min: 0, max: CELLS }))
  .filter(([a, b]) => a !== b)
  .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const);

const fixArb: fc.Arbitrary<Fix> = fc.record({
  i: fc.integer({ min: -2, max: CELLS + 2 }),
  j: fc.integer({ min: -2, max: CELLS + 2 }),
  dt: fc.oneof(
    { arbitrary: fc.integer({ min: 1, max: 120 }), weight: 4 },
    { arbitrary: fc.integer({ min: -120, max: -1 }), weight: 1 },
    { arbitrary: fc.constant(0), weight: 1 },
  ),
  accuracy: fc.option(fc.integer({ min: 1, max: 80 }), { nil: null }),
});

const device = fc.nat({ max: 2 });

const stepArb: fc.Arbitrary<StepSpec> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('post' as const), device, fix: fixArb }), weight: 8 },
  {
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      items: fc.array(fc.record({ device, fix: fixArb }), { minLength: 1, maxLength: 6 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('start' as const), device }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('stop' as const), device }), weight: 1 },
);

/** Single posts every case has at least: without them nothing is staged and no merge is tested. */
const MIN_POSTS = 4;

const mergeArb: fc.Arbitrary<MergeSpec | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 2 },
  { arbitrary: fc.record({ whole: fc.boolean(), chunkRows: fc.integer({ min: 1, max: 50 }) }), weight: 1 },
);

export const caseArb: fc.Arbitrary<Case> = fc.record({
  devices: fc.integer({ min: 2, max: 3 }),
  fences: fc.array(
    fc.tuple(span, span).map(([[i0, i1], [j0, j1]]) => [i0, j0, i1, j1] as [number, number, number, number]),
    { minLength: 1, maxLength: 3 },
  ),
  steps: fc
    .array(fc.record({ step: stepArb, merge: mergeArb }), { minLength: 10, maxLength: 40, size: 'max' })
    .filter((steps) => steps.filter((s) => s.step.kind === 'post').length >= MIN_POSTS),
  queries: fc.array(
    fc.record({
      offset: fc.nat({ max: 25 }),
      limit: fc.integer({ min: 1, max: 12 }),
      from: fc.option(fc.nat(), { nil: null }),
      to: fc.option(fc.nat(), { nil: null }),
    }),
    { minLength: 2, maxLength: 4 },
  ),
});

/** A location as posted: the body of a single POST or one batch item (with its `device_id`). */
type Body = { coordinates: [number, number]; timestamp: string; accuracy?: number };

export type PlannedStep =
  | { kind: 'post'; device: number; body: Body }
  | { kind: 'batch'; items: Array<{ device: number; body: Body }> }
  | { kind: 'start'; device: number }
  | { kind: 'stop'; device: number };

export interface Plan {
  steps: Array<{ step: PlannedStep; merge: MergeSpec | null }>;
  /** Each device's fix times, in the order posted (for the `from`/`to` of the history queries). */
  times: string[][];
}

/**
 * The concrete requests of a case, the same for every replay. Each device's clock starts `start`
 * (a day before the server clock: no fix is in the future); a start while a session is active and
 * a stop without one are left out.
 */
export function planOf(c: Case, start: number): Plan {
  const at = Array.from({ length: c.devices }, () => start);
  const times: string[][] = Array.from({ length: c.devices }, () => []);
  const active = Array.from({ length: c.devices }, () => false);
  const bodyOf = (d: number, fix: Fix): Body => {
    at[d] = (at[d] ?? start) + fix.dt * 1000;
    const timestamp = new Date(at[d]).toISOString();
    times[d]?.push(timestamp);
    return {
      coordinates: [LNG0 + fix.i * GRID, LAT0 + fix.j * GRID],
      timestamp,
      ...(fix.accuracy === null ? {} : { accuracy: fix.accuracy }),
    };
  };
  const steps: Plan['steps'] = [];
  for (const { step, merge } of c.steps) {
    if (step.kind === 'batch') {
      const items = step.items.map((item) => {
        const d = item.device % c.devices;
        return { device: d, body: bodyOf(d, item.fix) };
      });
      steps.push({ step: { kind: 'batch', items }, merge });
      continue;
    }
    const d = step.device % c.devices;
    if (step.kind === 'post') {
      steps.push({ step: { kind: 'post', device: d, body: bodyOf(d, step.fix) }, merge });
      continue;
    }
    if (active[d] === (step.kind === 'start')) continue;
    active[d] = step.kind === 'start';
    steps.push({ step: { kind: step.kind, device: d }, merge });
  }
  return { steps, times };
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * One replay: a workspace of its own, its devices and geofences, and the labels of its ids
 * (`u`, `w`, `g<k>`, `d<k>`, `s<n>`, `l<n>` for the locations of single posts, in creation order).
 */
export class Replay {
  readonly t: TestApp;
  readonly credentials: Credentials;
  readonly workspaceId: string;
  readonly deviceIds: string[] = [];
  /** Each device's sessions, in the order started. */
  readonly sessions: string[][] = [];
  /** Each device's locations: ids of its single posts, and how many were stored (batches included). */
  readonly postedIds: string[][] = [];
  readonly storedCounts: number[] = [];
  /** Locations stored by single posts (staged) and by batches (written to `locations` at once). */
  readonly written = { staged: 0, direct: 0 };
  readonly #labels = new Map<string, string>();
  #active: Array<string | null> = [];

  private constructor(t: TestApp, credentials: Credentials, workspaceId: string) {
    this.t = t;
    this.credentials = credentials;
    this.workspaceId = workspaceId;
  }

  static async open(t: TestApp, c: Case, label: string): Promise<Replay> {
    const user = await signUp(t, label);
    const replay = new Replay(t, { token: user.tokens.access_token }, user.workspace.id);
    replay.#labels.set(user.user.id, 'u');
    replay.#labels.set(user.workspace.id, 'w');
    for (const [k, [i0, j0, i1, j1]] of c.fences.entries()) {
      const geometry = polygon(rect(LNG0 + i0 * GRID, LAT0 + j0 * GRID, LNG0 + i1 * GRID, LAT0 + j1 * GRID));
      const fence = await createGeofence(t, replay.credentials, { name: `F${k}`, geometry });
      replay.#labels.set(fence.id, `g${k}`);
    }
    for (let d = 0; d < c.devices; d++) {
      const device = await createDevice(t, replay.credentials, { name: `D${d}` });
      replay.#labels.set(device.id, `d${d}`);
      replay.deviceIds.push(device.id);
      replay.sessions.push([]);
      replay.postedIds.push([]);
      replay.storedCounts.push(0);
      replay.#active.push(null);
    }
    return replay;
  }

  /**
   * `value` with every known id replaced by its label, and other ids (also inside strings, as in
   * an event's `event_id`) by their order of appearance.
   */
  normalize(value: unknown): unknown {
    const unknown = new Map<string, string>();
    const label = (id: string): string => {
      const known = this.#labels.get(id);
      if (known !== undefined) return known;
      if (!unknown.has(id)) unknown.set(id, `#${unknown.size}`);
      return unknown.get(id) as string;
    };
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return v.replace(UUID, label);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') {
        return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
      }
      return v;
    };
    return walk(value);
  }

  #stored(d: number): void {
    this.storedCounts[d] = (this.storedCounts[d] ?? 0) + 1;
  }

  #device(d: number): string {
    const id = this.deviceIds[d];
    if (id === undefined) throw new Error(`no device ${d}`);
    return id;
  }

  /** Sends one step; returns its answer, normalized. */
  async apply(step: PlannedStep): Promise<unknown> {
    const { t, credentials } = this;
    switch (step.kind) {
      case 'post': {
        const answer = await postLocation(t, credentials, this.#device(step.device), step.body);
        const posted = this.postedIds[step.device] as string[];
        this.#labels.set(answer.location.id, `l${this.#labels.size}`);
        posted.push(answer.location.id);
        this.#stored(step.device);
        this.written.staged += 1;
        return this.normalize(answer);
      }
      case 'batch': {
        const locations = step.items.map((item) => ({ device_id: this.#device(item.device), ...item.body }));
        const res = await call(t, '/locations/batch', { ...credentials, body: { locations } });
        const answer = expectStatus<BatchOut>(res, 200, 'batch');
        assert.equal(answer.accepted, step.items.length, 'every item is valid');
        // Each item is stored, also one of a time already stored (only a tracker's resent batch
        // leaves those out).
        for (const item of step.items) this.#stored(item.device);
        this.written.direct += step.items.length;
        return this.normalize(answer);
      }
      case 'start': {
        const res = await call(t, `/devices/${this.#device(step.device)}/sessions`, {
          ...credentials,
          method: 'POST',
        });
        const session = expectStatus<SessionOut>(res, 201, 'start a session');
        this.#labels.set(session.id, `s${this.#labels.size}`);
        this.sessions[step.device]?.push(session.id);
        this.#active[step.device] = session.id;
        return this.normalize(session);
      }
      case 'stop': {
        const id = this.#active[step.device];
        if (id == null) throw new Error(`device ${step.device} has no active session`);
        this.#active[step.device] = null;
        const res = await call(t, `/sessions/${id}/stop`, { ...credentials, method: 'POST' });
        return this.normalize(expectStatus<SessionOut>(res, 200, 'stop a session'));
      }
    }
  }

  async #page(path: string, query: Record<string, string>): Promise<Page<LocationOut>> {
    return expectStatus<Page<LocationOut>>(
      await call(this.t, path, { ...this.credentials, query }),
      200,
      `${path} ${JSON.stringify(query)}`,
    );
  }

  /**
   * Everything the API answers about each device's history, normalized: the device, its events,
   * its whole history, the pages of `queries` (with and without `from`/`to`), and of each of its
   * sessions the session (with its summary), its locations and pages of them.
   */
  async answers(queries: readonly HistoryQuery[], times: readonly string[][]): Promise<unknown> {
    const { t, credentials } = this;
    const out: unknown[] = [];
    for (const [d, id] of this.deviceIds.entries()) {
      const path = `/devices/${id}/locations`;
      const deviceTimes = times[d] ?? [];
      const timeAt = (k: number | null) =>
        k === null || deviceTimes.length === 0 ? undefined : deviceTimes[k % deviceTimes.length];
      const pages: unknown[] = [];
      for (const q of queries) {
        const window = { offset: String(q.offset), limit: String(q.limit) };
        const from = timeAt(q.from);
        const to = timeAt(q.to);
        pages.push(await this.#page(path, window));
        pages.push(
          await this.#page(path, {
            ...window,
            ...(from === undefined ? {} : { from }),
            ...(to === undefined ? {} : { to }),
          }),
        );
      }
      const sessions: unknown[] = [];
      for (const sessionId of this.sessions[d] ?? []) {
        const sessionPages: unknown[] = [];
        for (const q of queries) {
          const window = { offset: String(q.offset % 8), limit: String(q.limit) };
          sessionPages.push(await this.#page(`/sessions/${sessionId}/locations`, window));
          sessionPages.push(await this.#page(path, { ...window, session_id: sessionId }));
        }
        sessions.push({
          session: expectStatus<SessionOut>(await call(t, `/sessions/${sessionId}`, credentials), 200),
          locations: await listAll<LocationOut>(t, credentials, `/sessions/${sessionId}/locations`),
          pages: sessionPages,
        });
      }
      out.push({
        device: await getDevice(t, credentials, id),
        events: await deviceEvents(t, credentials, id),
        history: await listAll<LocationOut>(t, credentials, path),
        pages,
        sessions,
      });
    }
    return this.normalize(out);
  }
}

/**
 * Posts each of `locations` as a single POST to its device, `width` at a time (a chunk in flight
 * at once), so that the requests are grouped and their locations staged. Returns the stored
 * locations in the order of `locations`.
 */
export async function postConcurrently(
  t: TestApp,
  credentials: Credentials,
  locations: ReadonlyArray<{ deviceId: string; body: Record<string, unknown> }>,
  width = 64,
): Promise<LocationOut[]> {
  const out: LocationOut[] = [];
  for (let i = 0; i < locations.length; i += width) {
    const answers = await Promise.all(
      locations.slice(i, i + width).map((l) => postLocation(t, credentials, l.deviceId, l.body)),
    );
    out.push(...answers.map((a) => a.location));
  }
  return out;
}
