/**
 * Group commit for single-location requests. Concurrent POST /devices/{id}/locations of one
 * workspace are gathered and ingested together, in one transaction of the batch path, instead of
 * one transaction each: BEGIN/COMMIT, the device lock query and the inserts are paid once per group.
 *
 * - An idle workspace flushes on the next turn of the event loop (setImmediate), so a lone request
 *   waits for nothing. While a group's transaction runs, new requests queue and form the next group
 *   the moment it commits: the busier the workspace, the larger the groups.
 * - Results are exactly those of separate requests applied in the group's order: each device's
 *   locations are evaluated in timestamp order under its row lock (ingest.service.ts), and each
 *   request gets its own stored location and events. A request naming an unknown device fails
 *   alone (404); a failing transaction fails every request of its group (each gets the error, none
 *   of them is stored).
 * - Groups are capped at MAX_GROUP locations, like a batch request.
 * - On PostgreSQL a few groups of one workspace may run at once (their transactions overlap on the
 *   server), each of devices no running group holds; on SQLite one, since its writers are
 *   serialised anyway.
 */
import type { GeofenceEvent } from '../events/events.repository.ts';
import {
  type IngestContext,
  type IngestItem,
  type IngestOptions,
  type IngestResult,
  ingestLocations,
} from './ingest.service.ts';
import type { ParsedLocation } from './location-input.ts';
import type { StoredLocation } from './locations.repository.ts';

export interface SingleResult {
  /** Undefined when the device does not exist in the workspace. */
  location: StoredLocation | undefined;
  events: GeofenceEvent[];
}

interface Waiter {
  deviceId: string;
  location: ParsedLocation;
  resolve(result: SingleResult): void;
  reject(error: unknown): void;
}

interface WorkspaceQueue {
  waiting: Waiter[];
  /** Groups whose transaction is running. */
  running: number;
  /** Devices of the running groups (a device is in at most one: see takeGroup). */
  held: Set<string>;
  /** A start is scheduled for the next turn of the event loop. */
  scheduled: boolean;
}

export const MAX_GROUP = 1000;

export type IngestFunction = (
  ctx: IngestContext,
  workspaceId: string,
  items: readonly IngestItem[],
  options: IngestOptions,
) => Promise<IngestResult>;

export interface CoalescerOptions {
  /**
   * Groups of one workspace whose transactions may run at once. 1 where writers are serialised
   * anyway (SQLite); a few on PostgreSQL, where groups of different devices commit in parallel and
   * groups sharing a device queue on its row lock.
   */
  maxConcurrentGroups?: number;
  /** Replaceable so tests can observe the groups. */
  ingest?: IngestFunction;
}

export class IngestCoalescer {
  readonly #ctx: IngestContext;
  readonly #ingest: IngestFunction;
  readonly #maxGroups: number;
  readonly #queues = new Map<string, WorkspaceQueue>();

  constructor(ctx: IngestContext, options: CoalescerOptions = {}) {
    this.#ctx = ctx;
    this.#ingest = options.ingest ?? ingestLocations;
    this.#maxGroups = Math.max(1, options.maxConcurrentGroups ?? 1);
  }

  submit(workspaceId: string, deviceId: string, location: ParsedLocation): Promise<SingleResult> {
    return new Promise<SingleResult>((resolve, reject) => {
      let queue = this.#queues.get(workspaceId);
      if (!queue) {
        queue = { waiting: [], running: 0, held: new Set(), scheduled: false };
        this.#queues.set(workspaceId, queue);
      }
      queue.waiting.push({ deviceId, location, resolve, reject });
      // With a free slot, start on the next turn so that requests arriving in this one join the
      // group; with none, the next group starts when a running one commits.
      if (!queue.scheduled && queue.running < this.#maxGroups) {
        const q = queue;
        q.scheduled = true;
        setImmediate(() => {
          q.scheduled = false;
          this.#pump(workspaceId, q);
        });
      }
    });
  }

  /** Starts groups while there are waiters and free slots; forgets an idle workspace. */
  #pump(workspaceId: string, queue: WorkspaceQueue): void {
    while (queue.running < this.#maxGroups && queue.waiting.length > 0) {
      const group = takeGroup(queue);
      // Everything waiting is for devices a running group holds: the next commit pumps again.
      if (group.length === 0) break;
      const devices = new Set(group.map((w) => w.deviceId));
      for (const d of devices) queue.held.add(d);
      queue.running += 1;
      void this.#flush(workspaceId, group).finally(() => {
        queue.running -= 1;
        for (const d of devices) queue.held.delete(d);
        this.#pump(workspaceId, queue);
      });
    }
    if (queue.running === 0 && queue.waiting.length === 0 && !queue.scheduled) {
      this.#queues.delete(workspaceId);
    }
  }

  async #flush(workspaceId: string, group: Waiter[]): Promise<void> {
    const items: IngestItem[] = group.map((w, ref) => ({ ref, deviceId: w.deviceId, location: w.location }));
    try {
      // A group's locations are staged (ADR 008, "The staged history"): they name few devices each.
      const result = await this.#ingest(this.#ctx, workspaceId, items, { staged: true });
      group.forEach((w, ref) => {
        w.resolve({ location: result.stored.get(ref), events: result.eventsByRef.get(ref) ?? [] });
      });
    } catch (error) {
      for (const w of group) w.reject(error);
    }
  }
}

/**
 * The next group: waiters in arrival order, up to MAX_GROUP, leaving in the queue those whose
 * device a running group holds. On PostgreSQL several groups run at once; a group sharing a device
 * with a running one would only wait on that device's row lock (ADR 008), holding its other rows
 * locked meanwhile, so such requests wait here instead and go with the next group. Requests for one
 * device keep their order: once one is left waiting, every later one for that device is too.
 */
function takeGroup(queue: WorkspaceQueue): Waiter[] {
  if (queue.held.size === 0) return queue.waiting.splice(0, MAX_GROUP);
  const group: Waiter[] = [];
  const left: Waiter[] = [];
  for (const waiter of queue.waiting) {
    if (group.length < MAX_GROUP && !queue.held.has(waiter.deviceId)) group.push(waiter);
    else left.push(waiter);
  }
  queue.waiting = left;
  return group;
}

/**
 * The node's coalescer, shared by every route that records single locations (the JSON route and
 * the tracker routes), so their requests form one group per workspace. Two groups at once on
 * PostgreSQL: one fills while the other waits on the database. More make smaller groups, each
 * paying its round trips and statements (ADR 008, "Group commit").
 */
export function nodeCoalescer(ctx: IngestContext): IngestCoalescer {
  return new IngestCoalescer(ctx, { maxConcurrentGroups: ctx.capabilities.rowLocks ? 2 : 1 });
}
