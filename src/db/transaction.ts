/**
 * Every write that must be atomic goes through `withTransaction`. The function at the top of a unit
 * of work opens it and passes `trx` down; storage functions accept `Db | Trx` (an `Executor`) and
 * never open one of their own, with the single exception below. Who opens them:
 * - services, never routes: a route calls one service function and that function opens the
 *   transaction (auth, workspaces, geofences, devices, tracking sessions, webhooks, deliveries);
 * - ingestion: `ingestLocations` (ingest.service.ts) opens one per call — per request on the batch
 *   path, per group of single-location requests gathered by the ingest coalescer, which only decides
 *   what goes into a group; `resolveDeviceRefs` commits devices created on the fly in a short one of
 *   their own before it;
 * - the webhook engine's loops, as the top of their own work: the outbox dispatcher (one per batch of
 *   outbox rows) and the delivery worker (one per claim, one per group-committed batch of outcomes);
 * - `addDailyUsage` (usage-daily.repository.ts), called by the usage meter's periodic flush: the
 *   repository opens it so that a flush written in chunks lands whole or not at all.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { DatabaseSchema } from './schema.ts';

export type Trx = Transaction<DatabaseSchema>;
export type Executor = Kysely<DatabaseSchema>;

export function withTransaction<T>(db: Db, work: (trx: Trx) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
