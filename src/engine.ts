/**
 * The job engine of one process (ADR 010, ADR 020), composed here because it joins domains that
 * do not know each other: the event outbox's dispatcher with its subscribers (webhooks, workflows),
 * one job worker per kind (webhook deliveries; workflow actions, one worker per lane; outgoing
 * e-mails), the dwell timers and the history merge. The server runs it in-process (unless RUN_WORKER=false);
 * `src/worker.ts` and `cli worker` run it alone. Several engines on one database cooperate through
 * leases.
 */
import type { Dispatcher } from 'undici';
import type { Deps } from './deps.ts';
import { dispatchOutbox, type OutboxSubscriber } from './events/outbox-dispatcher.ts';
import { createDwellJobWorker, type DwellWorker } from './locations/dwell-job.ts';
import { createHistoryMerger, type HistoryMerger } from './locations/history-merge.ts';
import { createMailJobWorker, type MailWorker, type MailWorkerOptions } from './mail/mail-job.ts';
import { createGuardedDispatcher } from './outbound/outbound-guard.ts';
import { exitGracefullyOnSignals, logUnhandledRejections } from './shutdown.ts';
import {
  createDeliveryJobWorker,
  type DeliveryWorker,
  type DeliveryWorkerOptions,
} from './webhooks/delivery-worker.ts';
import { createRetryJobWorker, type RetryJobWorker } from './webhooks/dlq-retry-job.ts';
import { webhookOutboxSubscriber } from './webhooks/webhook-fan-out.ts';
import { type WorkflowDeliveryWriter, workflowDeliveryWriter } from './webhooks/workflow-deliveries.ts';
import { settleWebhookActions } from './workflows/action-queue.repository.ts';
import type { ActionWorker } from './workflows/action-worker.ts';
import { createActionLaneWorkers, createActionRuntime } from './workflows/workflow-engine.ts';
import { workflowOutboxSubscriber } from './workflows/workflow-fan-out.ts';

export { createActionRuntime, createActionWorker } from './workflows/workflow-engine.ts';

const DISPATCH_BATCH = 500;

export interface JobEngine {
  /** Sends webhook deliveries, including those of workflows' `webhook` actions. */
  deliveries: DeliveryWorker;
  /** Runs workflow actions, one worker per lane (ACTION_LANES). */
  workflows: ActionWorker[];
  /** Fires dwell timers (contract §4.5, ADR 015); its events go through the outbox like any other. */
  dwell: DwellWorker;
  /** Sends the e-mails stored `pending` (src/mail/mailer.ts), with retries. */
  mail: MailWorker;
  /** Works through "retry all matching" dead-letter jobs, batch by batch (ADR 018). */
  deadLetterRetries: RetryJobWorker;
  /** Merges staged locations into the per-device history (ADR 008). */
  history: HistoryMerger;
  stop(): Promise<void>;
}

/** The HTTP client of deliveries and actions: keep-alive connections, the SSRF guard unless private targets are allowed. */
export function createDeliveryDispatcher(deps: Deps): Dispatcher {
  return createGuardedDispatcher({ allowPrivate: deps.config.webhookAllowPrivateTargets });
}

/** Where workflows write the deliveries of their `webhook` actions (the port they declare). */
export function webhookActionDeliveries(deps: Deps): WorkflowDeliveryWriter {
  return workflowDeliveryWriter(deps.database.capabilities, deps.signals.deliveries);
}

export function createDeliveryWorker(
  deps: Deps,
  dispatcher: Dispatcher,
  overrides: Partial<DeliveryWorkerOptions> = {},
): DeliveryWorker {
  const { capabilities } = deps.database;
  return createDeliveryJobWorker({
    db: deps.database.db,
    capabilities,
    clock: deps.clock,
    logger: deps.logger,
    secretBox: deps.secretBox,
    notifier: deps.notifier,
    dispatcher,
    retryScheduleMs: deps.config.webhookRetryScheduleMs,
    leaseMarginMs: deps.config.webhookLeaseMarginMs,
    maxInFlight: deps.config.webhookConcurrency,
    // A `webhook` action follows its delivery (ADR 014), settled in the transaction that records it.
    onSettled: (trx, settled) => settleWebhookActions(trx, capabilities, settled),
    ...overrides,
  });
}

function outboxSubscribers(deps: Deps): OutboxSubscriber[] {
  const { capabilities } = deps.database;
  return [
    webhookOutboxSubscriber(capabilities),
    workflowOutboxSubscriber(capabilities, webhookActionDeliveries(deps)),
  ];
}

/** Dispatches the outbox until it is empty; returns the deliveries and workflow runs created. */
export async function drainOutbox(deps: Deps): Promise<{ deliveries: number; runs: number }> {
  const created = { deliveries: 0, runs: 0 };
  const ctx = {
    db: deps.database.db,
    capabilities: deps.database.capabilities,
    clock: deps.clock,
    subscribers: outboxSubscribers(deps),
  };
  for (;;) {
    const result = await dispatchOutbox(ctx, DISPATCH_BATCH);
    created.deliveries += result.created.deliveries ?? 0;
    created.runs += result.created.runs ?? 0;
    if (result.rows < DISPATCH_BATCH) return created;
  }
}

/**
 * The dwell timers' job worker: stored dwell events wake this node's dispatcher, count against the
 * quota and go to the live stream (ADR 016).
 */
export function createDwellWorker(deps: Deps): DwellWorker {
  return createDwellJobWorker({
    db: deps.database.db,
    capabilities: deps.database.capabilities,
    clock: deps.clock,
    logger: deps.logger,
    onFired: (workspaceId, events, dispatch) => {
      if (dispatch) deps.signals.outbox.notify();
      void deps.billing.eventQuota.record(workspaceId, events.length);
      deps.streamPublisher.events(workspaceId, events);
    },
  });
}

/** The e-mail job worker: sends `pending` messages of the outbox through the mailer's transport. */
export function createMailWorker(deps: Deps, overrides: Partial<MailWorkerOptions> = {}): MailWorker {
  return createMailJobWorker(deps.mailer.jobKind, { clock: deps.clock, logger: deps.logger, ...overrides });
}

/** The "retry all matching" dead-letter jobs' worker: its batches wake the delivery worker. */
export function createDeadLetterRetryWorker(deps: Deps): RetryJobWorker {
  return createRetryJobWorker({
    db: deps.database.db,
    capabilities: deps.database.capabilities,
    clock: deps.clock,
    signals: deps.signals,
    logger: deps.logger,
  });
}

export function startJobEngine(deps: Deps): JobEngine {
  const dispatcher = createDeliveryDispatcher(deps);
  const deliveries = createDeliveryWorker(deps, dispatcher);
  const runtime = createActionRuntime(deps, dispatcher);
  const workflows = createActionLaneWorkers(deps, runtime);
  const dwell = createDwellWorker(deps);
  const mail = createMailWorker(deps);
  const deadLetterRetries = createDeadLetterRetryWorker(deps);
  const history = createHistoryMerger({
    db: deps.database.db,
    capabilities: deps.database.capabilities,
    logger: deps.logger,
    state: deps.historyMerge,
  });
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
  deliveries.start(signals.deliveries, pollMs);
  for (const worker of workflows) worker.start(signals.workflowActions, pollMs);
  dwell.start(signals.dwell, pollMs);
  mail.start(signals.mail, pollMs);
  deadLetterRetries.start(signals.deadLetterRetries, pollMs);
  history.start(signals.historyMerge, deps.config.historyMergeMs);
  return {
    deliveries,
    workflows,
    dwell,
    mail,
    deadLetterRetries,
    history,
    stop: async () => {
      stopping = true;
      signals.outbox.notify();
      // Side by side: the workers give back claimed jobs not started at once (contract §0), not
      // after the dispatcher's last batch.
      await Promise.all([
        dispatching,
        dwell.stop(),
        mail.stop(),
        deadLetterRetries.stop(),
        history.stop(),
        deliveries.stop(),
        ...workflows.map((w) => w.stop()),
      ]);
      await runtime.databases.close();
      await dispatcher.close();
    },
  };
}

/**
 * A process that only runs the job engine (no HTTP): `node src/worker.ts`, `npm run worker` or
 * `cli worker`. SIGTERM or SIGINT stop claiming, give back claimed jobs not started, let attempts
 * in flight finish within SHUTDOWN_GRACE_SECONDS and record them, then exit 0 (src/shutdown.ts).
 * Never resolves: the process ends in the shutdown handler.
 */
export function runWorkerUntilSignal(deps: Deps): Promise<never> {
  logUnhandledRejections(deps.logger);
  const engine = startJobEngine(deps);
  deps.logger.info({ worker: engine.deliveries.id }, 'job worker started');
  exitGracefullyOnSignals({
    logger: deps.logger,
    graceMs: deps.config.shutdownGraceMs,
    drain: () => engine.stop(),
    close: () => deps.close(),
  });
  return new Promise<never>(() => {});
}
