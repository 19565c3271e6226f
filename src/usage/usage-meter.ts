/**
 * Counts API-key requests and geofence events per workspace and UTC day in process memory and
 * flushes the sums to `usage_daily` every few seconds (a background job, and at shutdown), so the
 * hot path does a Map update and no database write (docs/decisions/011). Readers add this node's
 * unflushed counts to the stored ones; other nodes' counts appear after their next flush. A crash
 * loses at most one flush interval of this statistic; the billing truth for events is
 * `usage_counters`, written in the ingestion transaction.
 */
import type { Db } from '../db/database.ts';
import type { Clock } from '../shared/clock.ts';
import { addDailyUsage, type DailyIncrement } from './usage-daily.repository.ts';

interface Pending {
  events: number;
  apiRequests: number;
}

const DAY_MS = 86_400_000;

export class UsageMeter {
  private readonly db: Db;
  private readonly clock: Clock;
  /** day ('YYYY-MM-DD') → workspace id → counts; `today` is the map of [dayStart, dayEnd). */
  private pending = new Map<string, Map<string, Pending>>();
  private today = new Map<string, Pending>();
  private dayStart = 0;
  private dayEnd = 0;

  constructor(deps: { db: Db; clock: Clock }) {
    this.db = deps.db;
    this.clock = deps.clock;
  }

  apiRequest(workspaceId: string, nowMs: number): void {
    this.entry(workspaceId, nowMs).apiRequests++;
  }

  events(workspaceId: string, count: number): void {
    if (count > 0) this.entry(workspaceId, this.clock.now().getTime()).events += count;
  }

  private entry(workspaceId: string, nowMs: number): Pending {
    if (nowMs >= this.dayEnd || nowMs < this.dayStart) this.switchDay(nowMs);
    let entry = this.today.get(workspaceId);
    if (entry === undefined) {
      entry = { events: 0, apiRequests: 0 };
      this.today.set(workspaceId, entry);
    }
    return entry;
  }

  private dayMap(day: string): Map<string, Pending> {
    let map = this.pending.get(day);
    if (map === undefined) {
      map = new Map();
      this.pending.set(day, map);
    }
    return map;
  }

  private switchDay(nowMs: number): void {
    this.dayStart = nowMs - (nowMs % DAY_MS);
    this.dayEnd = this.dayStart + DAY_MS;
    this.today = this.dayMap(new Date(this.dayStart).toISOString().slice(0, 10));
  }

  /** This node's counts not yet flushed, for one workspace, by day. */
  unflushed(workspaceId: string): Map<string, Pending> {
    const out = new Map<string, Pending>();
    for (const [day, byWorkspace] of this.pending) {
      const value = byWorkspace.get(workspaceId);
      if (value) out.set(day, { ...value });
    }
    return out;
  }

  /** Writes the counts gathered since the last flush; on failure they are added back for the next. */
  async flush(): Promise<number> {
    const increments: DailyIncrement[] = [];
    for (const [day, byWorkspace] of this.pending) {
      for (const [workspaceId, value] of byWorkspace) increments.push({ day, workspaceId, ...value });
    }
    if (increments.length === 0) return 0;
    this.pending = new Map();
    this.dayEnd = 0; // the next count starts a fresh map for its day
    try {
      await addDailyUsage(this.db, increments);
    } catch (error) {
      for (const i of increments) {
        const entry = this.dayMap(i.day).get(i.workspaceId);
        if (entry) {
          entry.events += i.events;
          entry.apiRequests += i.apiRequests;
        } else this.dayMap(i.day).set(i.workspaceId, { events: i.events, apiRequests: i.apiRequests });
      }
      throw error;
    }
    return increments.length;
  }
}
