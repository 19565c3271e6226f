/** Geofence events per workspace and calendar month (UTC), the basis of event quotas (contract §7). */
export interface UsageCountersTable {
  workspace_id: string;
  /** 'YYYY-MM' in UTC. */
  period: string;
  /** One of USAGE_SHARDS rows of the month; the month's usage is their sum (migration 0008). */
  shard: number;
  events: number;
}
