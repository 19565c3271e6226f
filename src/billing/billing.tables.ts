// Tables of subscriptions, invoices and usage series (filled in by the plans/quotas work).
export type BillingTables = Record<never, never>;
