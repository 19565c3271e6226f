/**
 * Quota notifications (contract §2.5): when event usage reaches 80, 100, 120 and 150 % of the
 * monthly quota, the workspace's owners and admins hear about it once per threshold per period.
 * "Once" holds across nodes: a threshold is announced only by the node whose insert of its
 * (workspace, period, threshold) row succeeds.
 */
import type { Notifier } from '../account/notifier.ts';
import type { Db } from '../db/database.ts';
import type { Clock } from '../shared/clock.ts';

export const QUOTA_THRESHOLDS = [80, 100, 120, 150] as const;

const MEANING: Record<number, string> = {
  80: 'You have used 80% of this month’s geofence events.',
  100: 'You have used all of this month’s geofence events. At 120% location ingestion is throttled.',
  120: 'Location ingestion is now throttled to 60 requests per minute. At 150% it stops until the period ends or the plan changes.',
  150: 'Location ingestion is blocked (403 QUOTA_EXCEEDED) until the period ends or the plan changes.',
};

/** The highest threshold `used` has reached (0 when none). */
export function thresholdReached(used: number, quota: number): number {
  let reached = 0;
  for (const t of QUOTA_THRESHOLDS) if (used * 100 >= quota * t) reached = t;
  return reached;
}

export class QuotaNotifications {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly notifier: Notifier;

  constructor(deps: { db: Db; clock: Clock; notifier: Notifier }) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.notifier = deps.notifier;
  }

  /** Announces every threshold in (after, upTo] not yet announced for the period. */
  async announce(
    workspaceId: string,
    period: string,
    after: number,
    upTo: number,
    usage: { used: number; quota: number },
  ): Promise<void> {
    for (const threshold of QUOTA_THRESHOLDS) {
      if (threshold <= after || threshold > upTo) continue;
      const claimed = await this.db
        .insertInto('quota_notifications')
        .values({ workspace_id: workspaceId, period, threshold, created_at: this.clock.now() })
        .onConflict((oc) => oc.doNothing())
        .returning('threshold')
        .executeTakeFirst();
      if (claimed === undefined) continue; // another node (or an earlier run) announced it
      await this.notifier.notifyWorkspaceAdmins({
        workspaceId,
        topic: 'quota',
        type: 'quota.threshold',
        title: `Event usage at ${threshold}% of your monthly quota`,
        body: `${MEANING[threshold] ?? ''} ${usage.used.toLocaleString('en')} of ${usage.quota.toLocaleString('en')} events used in ${period}.`,
        data: { threshold, period, used: usage.used, quota: usage.quota },
      });
    }
  }
}
