/**
 * What exact count limits cost on PostgreSQL (ADR 011, "Count limits"): the count and the insert in
 * one transaction behind the workspace's advisory lock, against the previous way (the count read
 * through the pool before the creating transaction, racy across requests).
 *
 * Storage level, on a fresh database (real migrations, real repositories): the "before" paths are
 * the previous code's statements, the "after" paths the current functions (`admitCreates`,
 * `resolveDeviceRefs`). Measured, alternating the two in rounds so that the machine's noise falls
 * on both alike:
 * - one create (a device) at a time: milliseconds per create, median and p95;
 * - a location batch naming 10 unknown devices, device creation only (`resolveDeviceRefs`);
 * - `--concurrency` creators in ONE workspace at once: creates per second (the lock serialises
 *   them; before, they ran side by side and could pass the limit), in an empty workspace and in one
 *   already holding `--existing` devices (the count, held under the lock, grows with the rows).
 * Usage: node bench/count-limit-cost.ts [-- --ops 300 --rounds 5 --concurrency 8 --existing 100000]
 */
import { parseArgs } from 'node:util';
import { CompiledQuery } from 'kysely';
import { admitCreates, type CountLimit, type CountLimiter } from '../src/billing/count-limits.ts';
import { countResources } from '../src/billing/subscriptions.repository.ts';
import { type DatabaseHandle, openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { withTransaction } from '../src/db/transaction.ts';
import {
  idsByExternalIds,
  insertDevice,
  insertDevicesIfAbsent,
  newDevice,
} from '../src/devices/devices.repository.ts';
import { resolveDeviceRefs } from '../src/locations/device-refs.ts';
import type { IngestContext } from '../src/locations/ingest.service.ts';
import { systemClock } from '../src/shared/clock.ts';
import { uuidv7 } from '../src/shared/ids.ts';
import { createBenchWorkspace } from './support/bench-workspace.ts';
import { median, percentile } from './support/load.ts';
import { createBenchDatabase, dropBenchDatabase } from './support/postgres.ts';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '8' },
    existing: { type: 'string', default: '100000' },
  },
});
const OPS = Number(values.ops);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = Number(values.concurrency);
const EXISTING = Number(values.existing);
const NEW_DEVICES_PER_BATCH = 10;
/** Far above what the bench creates: every create is admitted, so both paths do the same writes. */
const LIMIT = 1_000_000_000;

const round2 = (x: number) => Math.round(x * 100) / 100;

function device(workspaceId: string, externalId: string | null) {
  return newDevice(
    uuidv7(),
    workspaceId,
    { name: 'bench', externalId, userId: null, metadata: {} },
    new Date(),
  );
}

type Path = (workspaceId: string) => Promise<void>;

function singleCreate(handle: DatabaseHandle): { before: Path; after: Path } {
  const { db, capabilities } = handle;
  return {
    before: async (workspaceId) => {
      await countResources(db, workspaceId, 'devices');
      await withTransaction(db, (trx) => insertDevice(trx, device(workspaceId, null)));
    },
    after: async (workspaceId) => {
      const limit: CountLimit = { workspaceId, resource: 'devices', limit: LIMIT, planName: 'Bench' };
      await withTransaction(db, async (trx) => {
        await admitCreates(trx, capabilities, limit);
        await insertDevice(trx, device(workspaceId, null));
      });
    },
  };
}

function batchCreate(handle: DatabaseHandle): { before: Path; after: Path } {
  const { db, capabilities } = handle;
  // A fixed limit (the service reads it from cached subscriptions, a map lookup).
  const countLimit: CountLimiter = (workspaceId, resource, create) =>
    create({ workspaceId, resource, limit: LIMIT, planName: 'Bench' });
  // resolveDeviceRefs reads the database, the clock, the capabilities and the limiter only.
  const ctx = { db, capabilities, clock: systemClock, countLimit } as unknown as IngestContext;
  const refs = () =>
    Array.from({ length: NEW_DEVICES_PER_BATCH }, () => ({ device_external_id: `x-${uuidv7()}` }));
  return {
    before: async (workspaceId) => {
      const externalIds = refs().map((r) => r.device_external_id);
      const known = await idsByExternalIds(db, capabilities, workspaceId, externalIds);
      const unknown = externalIds.filter((e) => !known.has(e));
      await countResources(db, workspaceId, 'devices');
      await withTransaction(db, (trx) =>
        insertDevicesIfAbsent(
          trx,
          unknown.sort().map((e) => device(workspaceId, e)),
        ),
      );
      await idsByExternalIds(db, capabilities, workspaceId, externalIds);
    },
    after: async (workspaceId) => {
      await resolveDeviceRefs(ctx, workspaceId, refs());
    },
  };
}

/** Milliseconds of each of `OPS` calls, one at a time. */
async function latencies(path: Path, workspaceId: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < OPS; i++) {
    const started = performance.now();
    await path(workspaceId);
    out.push(performance.now() - started);
  }
  return out;
}

/** Creates per second with `CONCURRENCY` creators in one workspace. */
async function throughput(path: Path, workspaceId: string): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = 0; i < Math.ceil(OPS / CONCURRENCY); i++) await path(workspaceId);
    }),
  );
  return (CONCURRENCY * Math.ceil(OPS / CONCURRENCY)) / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const name = `bench_count_limits_${process.pid}`;
  const url = createBenchDatabase(name);
  const handle = openDatabase({ kind: 'postgres', url }, { poolSize: 10 });
  try {
    await migrateToLatest(handle);
    const cases = { 'one create': singleCreate(handle), 'batch with 10 new devices': batchCreate(handle) };
    for (const [label, paths] of Object.entries(cases)) {
      const samples = { before: [] as number[], after: [] as number[] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const which of r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
          const { workspaceId } = await createBenchWorkspace(handle.db, 0);
          samples[which].push(...(await latencies(paths[which], workspaceId)));
        }
      }
      const row = (which: 'before' | 'after') =>
        `median ${round2(median(samples[which]))} ms, p95 ${round2(percentile(samples[which], 95))} ms`;
      console.log(`${label}, one at a time: before ${row('before')}; after ${row('after')}`);
      console.log(`  added per call: median ${round2(median(samples.after) - median(samples.before))} ms`);
    }
    const single = cases['one create'];
    const large = (await createBenchWorkspace(handle.db, EXISTING)).workspaceId;
    await handle.db.executeQuery(CompiledQuery.raw('vacuum analyze devices'));
    for (const [label, fresh] of [
      ['an empty workspace', true],
      [`a workspace of ${EXISTING} devices`, false],
    ] as const) {
      const rates = { before: [] as number[], after: [] as number[] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const which of r % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
          const workspaceId = fresh ? (await createBenchWorkspace(handle.db, 0)).workspaceId : large;
          rates[which].push(await throughput(single[which], workspaceId));
        }
      }
      console.log(
        `${CONCURRENCY} creators at once in ${label}: before ${Math.round(median(rates.before))}/s, after ${Math.round(median(rates.after))}/s (median of ${ROUNDS} rounds)`,
      );
    }
  } finally {
    await handle.close();
    dropBenchDatabase(name);
  }
}

await main();
