/**
 * The webhook engine of one process: the outbox dispatcher loop and the delivery worker, wired
 * from the composition root. The server runs it in-process (unless RUN_WORKER=false); `src/worker.ts`
 * runs it alone to scale delivery out. Several engines on one database cooperate (ADR 010).
 */
import type { Dispatcher } from 'undici';
import type { Deps } from '../deps.ts';
import { DwellWorker } from '../locations/dwell-worker.ts';
import type { ActionWorker } from '../workflows/action-worker.ts';
import { createActionRuntime, createActionWorker } from '../workflows/workflow-engine.ts';
import { DeliveryWorker, type DeliveryWorkerOptions } from './delivery-worker.ts';
import { createGuardedDispatcher } from './outbound-guard.ts';
import { dispatchOutbox } from './outbox-dispatcher.ts';

const DISPATCH_BATCH = 500;

export interface WebhookEngine {
  worker: DeliveryWorker;
  /** Fires dwell timers (contract §4.5, ADR 015); its events go through the outbox like any other. */
  dwell: DwellWorker;
  /** Runs workflow actions; `webhook` actions are deliveries of `worker` (ADR 014). */
  workflows: ActionWorker;
  stop(): Promise<void>;
}

/** The HTTP client of deliveries: keep-alive connections, the SSRF guard unless private targets are allowed. */
export function createDeliveryDispatcher(deps: Deps): Dispatcher {
  return createGuardedDispatcher({ allowPrivate: deps.config.webhookAllowPrivateTargets });
}

export function createDeliveryWorker(
  deps: Deps,
  dispatcher: Dispatcher,
  overrides: Partial<DeliveryWorkerOptions> = {},
): DeliveryWorker {
  return new DeliveryWorker({
    db: deps.database.db,
    capabilities: deps.database.capabilities,
    clock: deps.clock,
    logger: deps.logger,
    secretBox: deps.secretBox,
    notifier: deps.notifier,
    dispatcher,
    retryScheduleMs: deps.config.webhookRetryScheduleMs,
    leaseMarginMs: deps.config.webhookLeaseMarginMs,
    maxInFlight: deps.config.webhookConcurrency,
    ...overrides,
  });
}

/** Dispatches the outbox until it is empty; returns the deliveries and workflow runs created. */
export async function drainOutbox(deps: Deps): Promise<{ deliveries: number; runs: number }> {
  const created = { deliveries: 0, runs: 0 };
  for (;;) {
    const result = await dispatchOutbox(
      { db: deps.database.db, capabilities: deps.database.capabilities, clock: deps.clock },
      DISPATCH_BATCH,
    );
    created.deliveries += result.deliveries;
    created.runs += result.runs;
    if (result.rows < DISPATCH_BATCH) return created;
  }
}

/**
 * The dwell worker: stored dwell events wake this node's dispatcher, count against the quota and go
 * to the live stream (ADR 016).
 */
export function createDwellWorker(deps: Deps): DwellWorker {
  return new DwellWorker({
    db: deps.database.db,
    capabilities: deps.database.capabilities,
    clock: deps.clock,
    logger: deps.logger,
    onFired: (batch) => {
      if (batch.dispatch) deps.signals.outbox.notify();
      for (const [workspaceId, events] of batch.events) {
        void deps.billing.eventQuota.record(workspaceId, events.length);
        deps.streamPublisher.events(workspaceId, events);
      }
    },
  });
}

export function startWebhookEngine(deps: Deps): WebhookEngine {
  const dispatcher = createDeliveryDispatcher(deps);
  const worker = createDeliveryWorker(deps, dispatcher);
  const runtime = createActionRuntime(deps, dispatcher);
  const workflows = createActionWorker(deps, runtime);
  const dwell = createDwellWorker(deps);
  const { signals } = deps;
  const pollMs = deps.config.webhookPollMs;
  let stopping = false;
  const dispatching = (async () => {
    while (!stopping) {
      try {
        const created = await drainOutbox(deps);
        if (created.deliveries > 0) signals.deliveries.notify();
        if (created.runs > 0) signals.workflowActions.notify();
      } catch (error) {
        deps.logger.error({ err: error }, 'outbox dispatch failed');
      }
      // Woken by this node's ingestions; other nodes' events are found by the poll.
      if (!stopping) await signals.outbox.wait(pollMs);
    }
  })();
  worker.start(signals.deliveries, pollMs);
  workflows.start(signals.workflowActions, pollMs);
  dwell.start(signals.dwell, pollMs);
  return {
    worker,
    workflows,
    dwell,
    stop: async () => {
      stopping = true;
      signals.outbox.notify();
      // Side by side: the workers give back claimed jobs not started at once (contract §0), not
      // after the dispatcher's last batch.
      await Promise.all([dispatching, dwell.stop(), worker.stop(), workflows.stop()]);
      await runtime.databases.close();
      await dispatcher.close();
    },
  };
}
