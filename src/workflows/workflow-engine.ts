/**
 * The workflow workers of one process, wired from the composition root: the action runtime (the
 * guarded HTTP client, the mailer, the customer database pools) and one job worker per lane.
 * Started and stopped with the job engine (`src/engine.ts`), whose outbox dispatcher starts the
 * runs (ADR 014, ADR 020).
 */
import type { Dispatcher } from 'undici';
import type { Deps } from '../deps.ts';
import { type ActionWorker, type ActionWorkerOptions, createActionJobWorker } from './action-worker.ts';
import type { ActionRuntime } from './actions/action.ts';
import { ACTION_EXECUTORS } from './actions/executors.ts';
import { PostgresDatabaseTargets } from './database-targets.ts';

export function createActionRuntime(deps: Deps, dispatcher: Dispatcher): ActionRuntime {
  const timeoutMs = deps.config.workflowActionTimeoutMs;
  return {
    dispatcher,
    allowPrivateTargets: deps.config.webhookAllowPrivateTargets,
    timeoutMs,
    mail: deps.mailer,
    databases: new PostgresDatabaseTargets({
      timeoutMs,
      allowPrivateTargets: deps.config.webhookAllowPrivateTargets,
    }),
  };
}

export function createActionWorker(
  deps: Deps,
  runtime: ActionRuntime,
  overrides: Partial<ActionWorkerOptions> = {},
): ActionWorker {
  return createActionJobWorker({
    db: deps.database.db,
    capabilities: deps.database.capabilities,
    clock: deps.clock,
    logger: deps.logger,
    secretBox: deps.secretBox,
    notifier: deps.notifier,
    executors: ACTION_EXECUTORS,
    runtime,
    retryScheduleMs: deps.config.webhookRetryScheduleMs,
    leaseMarginMs: deps.config.webhookLeaseMarginMs,
    maxInFlight: deps.config.webhookConcurrency,
    ...overrides,
  });
}

/**
 * Lanes of action types, each with its own worker and slots: an action that waits on a slow
 * customer database or mail server never holds the slots of chat messages and HTTP calls.
 */
export const ACTION_LANES: ReadonlyArray<{ name: string; types: readonly string[]; share: number }> = [
  { name: 'fast', types: ['slack', 'discord', 'teams', 'sms', 'lambda', 'sns'], share: 0.75 },
  { name: 'slow', types: ['database', 'email'], share: 0.25 },
];

/** One worker per lane, the process's action concurrency split between them. */
export function createActionLaneWorkers(deps: Deps, runtime: ActionRuntime): ActionWorker[] {
  return ACTION_LANES.map((lane) =>
    createActionWorker(deps, runtime, {
      types: lane.types,
      maxInFlight: Math.max(8, Math.round(deps.config.webhookConcurrency * lane.share)),
    }),
  );
}
