import type { Migration } from './migration.ts';

/** Webhook deliveries, their attempts and the dead-letter queue (contract §5). */
export const webhookDeliveries: Migration = {
  name: '0005_webhook_deliveries',
  async up() {
    // Filled in by the delivery-engine work (issue 6).
  },
};
