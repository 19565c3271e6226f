/**
 * The workflows' subscription to the event outbox (contract §6, ADR 014): each event starts a run
 * of every enabled workflow whose trigger matches it, in the dispatcher's transaction, so an event
 * is never without its runs.
 */
import type { DialectCapabilities } from '../db/database.ts';
import type { OutboxFanOut, OutboxSubscriber } from '../events/outbox-dispatcher.ts';
import { startRuns } from './run-starter.ts';
import { triggerableWorkflows } from './runs.repository.ts';
import type { WebhookActionDeliveries } from './webhook-action-port.ts';

export function workflowOutboxSubscriber(
  capabilities: DialectCapabilities,
  webhookActions: WebhookActionDeliveries,
): OutboxSubscriber {
  return {
    async prepare(trx, workspaceIds): Promise<OutboxFanOut> {
      const flows = await triggerableWorkflows(trx, workspaceIds);
      return {
        wants: (workspaceId) => flows.has(workspaceId),
        async write(trx2, events, now) {
          if (flows.size === 0) return {};
          return startRuns(trx2, capabilities, events, flows, now, webhookActions);
        },
      };
    },
  };
}
