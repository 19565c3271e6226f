/**
 * Deliveries that carry a workflow's `webhook` action (origin `workflow`, ADR 014): written by the
 * workflow engine through the port it declares (`WebhookActionDeliveries`), wired at the
 * composition root. Their outcomes reach the workflow engine through the delivery worker's
 * `onSettled` hook.
 */
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import type { WakeSignal } from '../jobs/wake-signal.ts';
import { deliveryRow, type NewDelivery } from './deliveries.repository.ts';
import { deliveryWrites } from './deliveries.tables.ts';

export interface WorkflowDeliveryWriter {
  insert(trx: Executor, deliveries: readonly Omit<NewDelivery, 'origin'>[]): Promise<void>;
  notify(): void;
}

export function workflowDeliveryWriter(
  capabilities: DialectCapabilities,
  deliveriesDue: WakeSignal,
): WorkflowDeliveryWriter {
  return {
    async insert(trx, deliveries) {
      await deliveryWrites.insert(trx, capabilities, deliveries, (d) =>
        deliveryRow({ ...d, origin: 'workflow' }),
      );
    },
    notify: () => deliveriesDue.notify(),
  };
}
