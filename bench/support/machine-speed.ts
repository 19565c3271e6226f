/**
 * How fast the machine is during a benchmark run, measured as bench:ingest does: bare Fastify's
 * small POST (./bare-fastify.ts, `/echo`, 64 connections, autocannon) as a share of the reference
 * machine's figure. The absolute targets were set for this kind of machine at its usual speed;
 * a shared VM's speed drifts by up to a factor of two between runs, where throughput and CPU ratios
 * do not scale linearly, so a run below `JUDGED_FROM` reports its figures without judging them.
 */
import type { ChildProcess } from 'node:child_process';
import { freePort, type LoadResult, load, startServer, stopServer } from './load.ts';

/**
 * Bare Fastify 5's small POST on the reference machine, req/s at 64 connections
 * (../shared/bench/README.md). The same value as `REFERENCE_BARE_POST_RPS` of bench/ingest.ts:
 * change both together.
 */
export const REFERENCE_BARE_POST_RPS = 45_000;
/** Runs where bare Fastify is slower than this share of the reference are not judged (as bench/ingest.ts). */
export const JUDGED_FROM = 0.8;

/** Bare Fastify in a child process for the whole bench, measured between the bench's own phases. */
export interface BareReference {
  /** One load of `seconds` on the small POST. */
  measure(seconds: number): Promise<LoadResult>;
  stop(): Promise<void>;
}

export async function startBareReference(): Promise<BareReference> {
  const port = await freePort();
  const server: ChildProcess = await startServer('bench/support/bare-fastify.ts', {}, port);
  return {
    measure: (seconds) =>
      load({
        url: `http://127.0.0.1:${port}/echo`,
        method: 'POST',
        body: '{"coordinates":[13.4,52.5]}',
        seconds,
        serverPid: server.pid,
      }),
    stop: () => stopServer(server),
  };
}

/** Bare Fastify's req/s as a share of the reference machine's, two decimals. */
export function speedVsReference(bareRps: number): number {
  return Math.round((bareRps / REFERENCE_BARE_POST_RPS) * 100) / 100;
}
