import type { Migration } from './migration.ts';

/** Subscriptions, invoices and usage series (contract §7). */
export const billing: Migration = {
  name: '0006_billing',
  async up() {
    // Filled in by the plans/quotas work (issue 7).
  },
};
