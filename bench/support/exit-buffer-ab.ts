/**
 * bench:ingest --exit-buffer M: the cost of contract §4.5's `exit_buffer_m` on batch ingestion
 * (target: ≤ 15 % against the same run without). Two fresh workspaces on the running server hold
 * the same geofences, created in step: A with every rule null (the plain path of §4.3), B with
 * `exit_buffer_m` M on every geofence. Both get byte-identical batches (same devices, same points,
 * same timestamps), so their devices start every pass from the state the same history left.
 *
 * Two workloads, each with devices of its own:
 *  - uniform: INGEST-10K's points (devices jump across the region): B asks the buffer at every exit,
 *    which holds almost none back;
 *  - edge: devices walking across their geofence's edge (./edge-walk.ts): B asks the buffer at two
 *    steps of three, the near one held back, the far one not; A and B produce about as many events.
 *
 * Passes alternate A, B, B, A, … (each round swaps the order, so a slow drift — the database
 * growing, the machine's load — weighs on both alike), one untimed warm-up pass each first.
 * Per pass: locations/s end to end and server CPU per 1,000 locations (from /proc; far less
 * sensitive than throughput to other work on the machine). The cost is the median over rounds of
 * B ÷ A of the round's two passes.
 */

import { checkWalk, phaseOf, WALK_PHASES, type WalkCheck, type WalkFence, walkPoint } from './edge-walk.ts';
import { type Auth, api, apiKeyAccount, pool } from './ingest-api.ts';
import { median, processCpuMs } from './load.ts';

export const EXIT_BUFFER_TARGET = 0.15;

export interface ExitBufferOptions {
  base: string;
  serverPid: number | undefined;
  /** The geofences (INGEST-10K's), with the centres the edge walk needs. */
  walkers: readonly WalkFence[];
  points: ReadonlyArray<[number, number]>;
  /** Devices per workload and workspace (the edge walk uses at most one per geofence). */
  devices: number;
  bufferM: number;
  /** Batches of 1,000 per timed pass (the edge workload rounds up to whole walk cycles). */
  batchesPerPass: number;
  /** Rounds of one A and one B pass. */
  rounds: number;
  inFlight: number;
}

export interface PassFigures {
  locations_per_s: number;
  cpu_ms_per_1000: number;
  enters: number;
  exits: number;
  /** Edge workload: exits at a near step (within the buffer); B should have none. */
  exits_near?: number;
}

export interface ConfigFigures {
  exit_buffer_m: number | null;
  /** Medians over the timed passes. */
  locations_per_s: number;
  cpu_ms_per_1000: number;
  events_per_pass: number;
  exits_per_pass: number;
  exits_near_per_pass?: number;
  passes: PassFigures[];
}

export interface WorkloadFigures {
  workload: 'uniform' | 'edge';
  locations_per_pass: number;
  a: ConfigFigures;
  b: ConfigFigures;
  /** Median over rounds of B's CPU per 1,000 ÷ A's, minus 1 (0.05 = 5 % more). */
  cpu_cost: number;
  /** Median over rounds of A's locations/s ÷ B's, minus 1. */
  throughput_cost: number;
  /** Exits per pass the buffer held back (A's minus B's; edge: at the near steps). */
  exits_held_per_pass: number;
  cpu_within_target: boolean;
}

export interface ExitBufferFigures {
  exit_buffer_m: number;
  in_flight: number;
  rounds: number;
  target: number;
  /** One walk cycle of every edge device, placed by the service's own distance to the geometry. */
  walk_check: WalkCheck;
  workloads: WorkloadFigures[];
}

interface Workspace {
  auth: Auth;
  exitBufferM: number | null;
}

type Batch = {
  locations: Array<{ device_external_id: string; coordinates: [number, number]; timestamp: string }>;
};

export async function measureExitBuffer(o: ExitBufferOptions): Promise<ExitBufferFigures> {
  const a: Workspace = { auth: await apiKeyAccount(o.base, 'bench-a@example.com'), exitBufferM: null };
  const b: Workspace = { auth: await apiKeyAccount(o.base, 'bench-b@example.com'), exitBufferM: o.bufferM };
  // In step, so that neither workspace's rows sit in a more favourable part of the tables.
  await pool([...o.walkers.keys()], 8, async (i) => {
    const geometry = (o.walkers[i] as WalkFence).geometry;
    for (const w of [a, b]) {
      await api(
        o.base,
        'POST',
        '/geofences',
        {
          name: `fence ${i}`,
          external_id: `f${i}`,
          geometry,
          // A leaves the field out, as the default run does (null by default).
          ...(w.exitBufferM === null ? {} : { exit_buffer_m: w.exitBufferM }),
        },
        w.auth,
      );
    }
  });
  const groups = Math.ceil(o.devices / 1000);
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  const stamp = (batch: number) => new Date(t0 + batch * 1000).toISOString();

  // Batch k carries device group k mod `groups`; each device's step is k div `groups`.
  const uniformBatch = (k: number): Batch => ({
    locations: Array.from({ length: 1000 }, (_, i) => {
      const n = k * 1000 + i;
      return {
        device_external_id: `u-${n % o.devices}`,
        coordinates: o.points[n % o.points.length] as [number, number],
        timestamp: stamp(k),
      };
    }),
  });
  const walkDevices = Math.min(o.devices, o.walkers.length);
  const edgeBatch = (k: number): Batch => {
    const step = Math.floor(k / groups);
    return {
      locations: Array.from({ length: 1000 }, (_, i) => {
        const d = ((k % groups) * 1000 + i) % walkDevices;
        return {
          device_external_id: `e-${d}`,
          coordinates: walkPoint(o.walkers[d] as WalkFence, d, step, o.bufferM),
          timestamp: stamp(k),
        };
      }),
    };
  };
  const cycle = groups * WALK_PHASES.length;
  const workloads: WorkloadFigures[] = [];
  for (const workload of ['uniform', 'edge'] as const) {
    const batchAt = workload === 'uniform' ? uniformBatch : edgeBatch;
    const passBatches =
      workload === 'uniform' ? o.batchesPerPass : Math.ceil(o.batchesPerPass / cycle) * cycle;
    const nearStep = (k: number) => workload === 'edge' && phaseOf(Math.floor(k / groups)) === 'near';
    const pass = async (w: Workspace, first: number): Promise<PassFigures> => {
      const batches = Array.from({ length: passBatches }, (_, i) => first + i);
      let enters = 0;
      let exits = 0;
      let exitsNear = 0;
      const cpuBefore = processCpuMs(o.serverPid) ?? 0;
      const started = process.hrtime.bigint();
      await pool(batches, o.inFlight, async (k) => {
        const answer = await api(o.base, 'POST', '/locations/batch', batchAt(k), w.auth);
        for (const e of answer.events as Array<{ event_type: string }>) {
          if (e.event_type === 'enter') enters++;
          else if (e.event_type === 'exit') {
            exits++;
            if (nearStep(k)) exitsNear++;
          }
        }
      });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpuMs = (processCpuMs(o.serverPid) ?? 0) - cpuBefore;
      return {
        locations_per_s: Math.round((passBatches * 1000) / seconds),
        cpu_ms_per_1000: Math.round((cpuMs / passBatches) * 10) / 10,
        enters,
        exits,
        ...(workload === 'edge' ? { exits_near: exitsNear } : {}),
      };
    };
    // The first visit of every device creates it; then one untimed pass each (code paths warm).
    for (let k = 0; k < groups; k++) {
      for (const w of [a, b]) await api(o.base, 'POST', '/locations/batch', batchAt(k), w.auth);
    }
    await pass(a, groups);
    await pass(b, groups);
    const passesA: PassFigures[] = [];
    const passesB: PassFigures[] = [];
    for (let round = 0; round < o.rounds; round++) {
      const first = groups + (round + 1) * passBatches;
      const order = round % 2 === 0 ? [a, b] : [b, a];
      for (const w of order) (w === a ? passesA : passesB).push(await pass(w, first));
    }
    const cpuRatios = passesA.map((p, r) => (passesB[r] as PassFigures).cpu_ms_per_1000 / p.cpu_ms_per_1000);
    const rateRatios = passesA.map((p, r) => p.locations_per_s / (passesB[r] as PassFigures).locations_per_s);
    const cpuCost = round3(median(cpuRatios) - 1);
    const configA = summarize(null, passesA);
    const configB = summarize(o.bufferM, passesB);
    workloads.push({
      workload,
      locations_per_pass: passBatches * 1000,
      a: configA,
      b: configB,
      cpu_cost: cpuCost,
      throughput_cost: round3(median(rateRatios) - 1),
      exits_held_per_pass:
        workload === 'edge'
          ? (configA.exits_near_per_pass ?? 0) - (configB.exits_near_per_pass ?? 0)
          : configA.exits_per_pass - configB.exits_per_pass,
      cpu_within_target: cpuCost <= EXIT_BUFFER_TARGET,
    });
  }
  return {
    exit_buffer_m: o.bufferM,
    in_flight: o.inFlight,
    rounds: o.rounds,
    target: EXIT_BUFFER_TARGET,
    walk_check: checkWalk(o.walkers.slice(0, walkDevices), o.bufferM),
    workloads,
  };
}

function summarize(exitBufferM: number | null, passes: PassFigures[]): ConfigFigures {
  const near = passes.flatMap((p) => (p.exits_near === undefined ? [] : [p.exits_near]));
  return {
    exit_buffer_m: exitBufferM,
    locations_per_s: Math.round(median(passes.map((p) => p.locations_per_s))),
    cpu_ms_per_1000: Math.round(median(passes.map((p) => p.cpu_ms_per_1000)) * 10) / 10,
    events_per_pass: median(passes.map((p) => p.enters + p.exits)),
    exits_per_pass: median(passes.map((p) => p.exits)),
    ...(near.length > 0 ? { exits_near_per_pass: median(near) } : {}),
    passes,
  };
}

const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Printed lines of the figures. */
export function describeExitBuffer(database: string, f: ExitBufferFigures): string[] {
  const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
  const c = f.walk_check;
  const lines = [
    `${database}: exit buffer ${f.exit_buffer_m} m, A (rules null) vs B (exit_buffer_m ${f.exit_buffer_m}) on every geofence, ${f.rounds} rounds A/B at ${f.in_flight} in flight; edge walk: ${c.nearHeld}/${c.near} near points within the buffer, ${c.farBeyond}/${c.far} far points beyond it, ${c.insideInside}/${c.inside} inside points inside`,
  ];
  for (const w of f.workloads) {
    const side = (x: ConfigFigures) =>
      `${x.locations_per_s} locations/s, CPU ${x.cpu_ms_per_1000} ms per 1,000, ${x.events_per_pass} events (${x.exits_per_pass} exits${x.exits_near_per_pass === undefined ? '' : `, ${x.exits_near_per_pass} at near steps`}) per pass`;
    lines.push(
      `  ${w.workload.padEnd(7)} (${w.locations_per_pass} locations a pass) A ${side(w.a)}; B ${side(w.b)}; ` +
        `exits held back ${w.exits_held_per_pass} per pass; cost B vs A: CPU ${pct(w.cpu_cost)}, throughput ${pct(w.throughput_cost)} ` +
        `(target ≤ ${pct(f.target)}: ${w.cpu_within_target ? 'met' : 'NOT met'})`,
    );
  }
  return lines;
}
