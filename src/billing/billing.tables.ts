/** Tables of plans, invoices and usage series (contract §7; migration 0006). */
import type { JsonColumn, NullableJsonColumn, TimestampColumn } from '../db/columns.ts';

/**
 * One row per plan change: the subscription in force at time t is the workspace's latest row with
 * `effective_from <= t`; no row = DEFAULT_PLAN. Keeping the history lets an invoice use the plan
 * that was in force at the end of its period even when it is computed later.
 */
export interface SubscriptionsTable {
  id: string;
  workspace_id: string;
  plan: string;
  /** Operator overrides of the plan's limits (`cli set-plan --events-per-month …`), or null. */
  custom_limits: NullableJsonColumn;
  /** Operator-set monthly price (enterprise contracts), or null for the plan's price. */
  custom_price_cents: number | null;
  effective_from: TimestampColumn;
}

export interface InvoicesTable {
  id: string;
  workspace_id: string;
  /** 'YYYY-MM', unique per workspace: the job may run on several nodes. */
  period: string;
  period_start: TimestampColumn;
  period_end: TimestampColumn;
  plan: string;
  amount_cents: number;
  line_items: JsonColumn;
  status: string;
  created_at: TimestampColumn;
}

/** Daily series for `GET /subscriptions/usage`, flushed from each node's in-memory meter. */
export interface UsageDailyTable {
  workspace_id: string;
  /** 'YYYY-MM-DD' in UTC. */
  day: string;
  events: number;
  api_requests: number;
}

/** Quota thresholds already announced (80/100/120/150 %), so each is notified once per period. */
export interface QuotaNotificationsTable {
  workspace_id: string;
  period: string;
  threshold: number;
  created_at: TimestampColumn;
}

export interface BillingTables {
  subscriptions: SubscriptionsTable;
  invoices: InvoicesTable;
  usage_daily: UsageDailyTable;
  quota_notifications: QuotaNotificationsTable;
}
