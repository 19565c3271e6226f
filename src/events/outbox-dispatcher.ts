/**
 * The outbox dispatcher (ADR 008 "The outbox", ADR 010 "Dispatcher"): turns committed
 * `event_outbox` rows into the jobs of whoever subscribes to events — webhook deliveries, workflow
 * runs — in one transaction per batch with the rows' `dispatched_at`, so an event is never without
 * its jobs (a crash before the dispatch leaves the outbox row, dispatched after the restart).
 * Subscribers are registered by their domains at the composition root; this module knows none.
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import { findEventsByIds, type GeofenceEvent } from './events.repository.ts';
import { markDispatched, takeUndispatched } from './outbox.repository.ts';

/** What one subscriber does with a batch, decided once its subscriptions are read. */
export interface OutboxFanOut {
  /** Whether any event of this workspace may interest the subscriber (others are not read). */
  wants(workspaceId: string): boolean;
  /** Writes the jobs of these events (outbox order); returns how many of each were created. */
  write(
    trx: Executor,
    events: readonly GeofenceEvent[],
    now: Date,
  ): Promise<Readonly<Record<string, number>>>;
}

export interface OutboxSubscriber {
  /** Reads the subscriptions of these workspaces in the dispatch transaction. */
  prepare(trx: Executor, workspaceIds: readonly string[]): Promise<OutboxFanOut>;
}

export interface DispatchContext {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  subscribers: readonly OutboxSubscriber[];
}

export interface Dispatched {
  rows: number;
  /** Jobs created, summed over subscribers by kind (e.g. `deliveries`, `runs`). */
  created: Record<string, number>;
}

/** Dispatches up to `limit` outbox rows, oldest first. */
export async function dispatchOutbox(ctx: DispatchContext, limit = 500): Promise<Dispatched> {
  return withTransaction(ctx.db, async (trx) => {
    const rows = await takeUndispatched(trx, ctx.capabilities, limit);
    const created: Record<string, number> = {};
    if (rows.length === 0) return { rows: 0, created };
    const now = ctx.clock.now();
    const workspaceIds = [...new Set(rows.map((r) => r.workspaceId))];
    const fanOuts: OutboxFanOut[] = [];
    for (const subscriber of ctx.subscribers) fanOuts.push(await subscriber.prepare(trx, workspaceIds));
    // Only events somebody may want are read: in a workspace without subscriptions the rows are
    // just marked dispatched (events nobody receives are not read or parsed).
    const wanted = rows.filter((r) => fanOuts.some((f) => f.wants(r.workspaceId))).map((r) => r.eventRowId);
    const events = wanted.length > 0 ? await findEventsByIds(trx, wanted) : new Map<string, GeofenceEvent>();
    // Outbox order is event order (UUIDv7 ids in processing order): the jobs keep it.
    const inOrder = rows.flatMap((r) => {
      const event = events.get(r.eventRowId);
      return event ? [event] : [];
    });
    for (const fanOut of fanOuts) {
      const counts = await fanOut.write(trx, inOrder, now);
      for (const [kind, n] of Object.entries(counts)) created[kind] = (created[kind] ?? 0) + n;
    }
    await markDispatched(
      trx,
      rows.map((r) => r.id),
      now,
    );
    return { rows: rows.length, created };
  });
}
