/**
 * The workflow worker of one process, wired from the composition root: the action runtime (the
 * guarded HTTP client, the mailer, the customer database pools) and the worker loop. Started and
 * stopped with the webhook engine, whose dispatcher starts the runs (ADR 014).
 */
import type { Dispatcher } from 'undici';
import type { Deps } from '../deps.ts';
import { ActionWorker, type ActionWorkerOptions } from './action-worker.ts';
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
  return new ActionWorker({
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
