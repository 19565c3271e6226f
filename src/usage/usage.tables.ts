/** Geofence events per workspace and calendar month (UTC), the basis of event quotas (contract §7). */
export interface UsageCountersTable {
  workspace_id: string;
  /** 'YYYY-MM' in UTC. */
  period: string;
  events: number;
}
