/**
 * Workflow actions as a job kind of the one job loop (`src/jobs/job-worker.ts`; ADR 014, ADR 020):
 * a claim leases due action jobs (of the worker's lane's types), each runs through its type's
 * executor concurrently and independently of its siblings, and outcomes are recorded in groups,
 * with one notification per workflow per group for actions that failed for good.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Notifier } from '../account/notifier.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { type JobKind, JobWorker } from '../jobs/job-worker.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/encryption.ts';
import {
  type ActionAttempt,
  type ClaimedAction,
  claimDueActions,
  type FailedAction,
  recordActionAttempts,
  releaseActionLeases,
} from './action-queue.repository.ts';
import { openConfig, type StoredAction } from './action-secrets.ts';
import type { ActionExecutor, ActionOutcome, ActionRuntime } from './actions/action.ts';
import { parseRunContext } from './run-context.ts';
import { TemplateBudgetError } from './templates.ts';

export type ActionExecutors = Readonly<Record<string, ActionExecutor<never>>>;

export interface ActionWorkerOptions {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  secretBox: SecretBox;
  notifier: Pick<Notifier, 'notifyWorkspaceAdmins'>;
  executors: ActionExecutors;
  runtime: ActionRuntime;
  /** Delays between attempts (WEBHOOK_RETRY_SCHEDULE); attempts = length + 1. */
  retryScheduleMs: readonly number[];
  leaseMarginMs: number;
  /** The action types this worker claims (a lane, see ACTION_LANES); every type when absent. */
  types?: readonly string[];
  batchSize?: number;
  maxInFlight?: number;
  workerId?: string;
}

export type ActionWorker = JobWorker<ClaimedAction, ActionAttempt>;

export function createActionJobWorker(options: ActionWorkerOptions): ActionWorker {
  return new JobWorker(new ActionKind(options), {
    clock: options.clock,
    logger: options.logger,
    batchSize: options.batchSize ?? 100,
    maxInFlight: options.maxInFlight ?? 256,
    workerId: options.workerId,
  });
}

class ActionKind implements JobKind<ClaimedAction, ActionAttempt> {
  readonly name = 'workflow action';
  private readonly o: ActionWorkerOptions;
  private readonly configs = new Map<string, Record<string, unknown>>();

  constructor(options: ActionWorkerOptions) {
    this.o = options;
  }

  claim(workerId: string, limit: number, now: Date): Promise<ClaimedAction[]> {
    const leaseUntil = new Date(now.getTime() + this.o.runtime.timeoutMs + this.o.leaseMarginMs);
    return withTransaction(this.o.db, (trx) =>
      claimDueActions(trx, this.o.capabilities, { now, workerId, limit, leaseUntil, types: this.o.types }),
    );
  }

  async execute(job: ClaimedAction): Promise<ActionAttempt> {
    const startedAt = this.o.clock.now();
    const started = performance.now();
    const outcome = await this.attempt(job);
    const durationMs = Math.round((performance.now() - started) * 100) / 100;
    return { job, startedAt, finishedAt: this.o.clock.now(), durationMs, outcome };
  }

  failure(job: ClaimedAction, _error: unknown, startedAt: Date): ActionAttempt {
    return {
      job,
      startedAt,
      finishedAt: this.o.clock.now(),
      durationMs: 0,
      outcome: failed('Internal error: the attempt could not be made'),
    };
  }

  async record(workerId: string, batch: readonly ActionAttempt[]): Promise<void> {
    const failedForGood = await withTransaction(this.o.db, (trx) =>
      recordActionAttempts(trx, this.o.capabilities, workerId, this.o.retryScheduleMs, [...batch]),
    );
    await this.notifyFailures(failedForGood);
  }

  release(workerId: string, ids: readonly string[], now: Date): Promise<void> {
    return releaseActionLeases(this.o.db, workerId, ids, now);
  }

  /** One attempt; anything thrown is a failed attempt, never a crash (e.g. a key that no longer opens). */
  private async attempt(job: ClaimedAction): Promise<ActionOutcome> {
    const executor = this.o.executors[job.type];
    if (!executor) return failed(`No executor for action type ${job.type}`);
    try {
      const config = this.configOf(job.action);
      const context = parseRunContext(job.context);
      return await (executor as ActionExecutor<unknown>).execute(config, context, this.o.runtime);
    } catch (error) {
      // The template and the event are the run's: another attempt would stop at the same bound.
      if (error instanceof TemplateBudgetError) return { ...failed(error.message), final: true };
      this.o.logger.error(
        { err: error, action: job.id, type: job.type },
        'workflow action attempt could not be made',
      );
      return failed('Internal error: the attempt could not be made');
    }
  }

  /** The config with its secrets opened, once per stored action text (runs share their workflow's). */
  private configOf(action: string): Record<string, unknown> {
    let config = this.configs.get(action);
    if (config === undefined) {
      if (this.configs.size > 10_000) this.configs.clear();
      config = openConfig(JSON.parse(action) as StoredAction, this.o.secretBox);
      this.configs.set(action, config);
    }
    return config;
  }

  /** One notification per workflow per recorded batch, like dead-lettered deliveries (contract §6). */
  private async notifyFailures(failures: FailedAction[]): Promise<void> {
    const groups = new Map<string, FailedAction[]>();
    for (const f of failures) {
      const list = groups.get(f.job.workflowId) ?? [];
      list.push(f);
      groups.set(f.job.workflowId, list);
    }
    for (const list of groups.values()) {
      const first = list[0] as FailedAction;
      const context = parseRunContext(first.job.context);
      const count = list.length;
      try {
        await this.o.notifier.notifyWorkspaceAdmins({
          workspaceId: first.job.workspaceId,
          topic: 'dlq',
          type: 'workflow.action_failed',
          title: `Workflow "${context.workflow.name}": ${count === 1 ? `a ${first.job.type} action` : `${count} actions`} failed for good`,
          body: `After ${first.job.attempt} attempts, the ${first.job.type} action failed: ${first.errorMessage}. Retry the run with POST /api/v1/workflows/${first.job.workflowId}/runs/{run_id}/retry.`,
          action: {
            label: 'Review and retry on the dashboard',
            path: runsPath(first.job.workflowId, list),
          },
          data: {
            workflow_id: first.job.workflowId,
            workflow_name: context.workflow.name,
            run_ids: [...new Set(list.map((f) => f.job.runId))],
            error_message: first.errorMessage,
          },
        });
      } catch (error) {
        this.o.logger.warn(
          { err: error, workflow: first.job.workflowId },
          'workflow failure notification failed',
        );
      }
    }
  }
}

function failed(errorMessage: string): ActionOutcome {
  return { success: false, statusCode: null, errorMessage, responseExcerpt: null };
}

/** The dashboard page of the failed run, or of the workflow's runs when several failed at once. */
function runsPath(workflowId: string, failures: readonly FailedAction[]): string {
  const runs = `/workflows/${encodeURIComponent(workflowId)}/runs`;
  const ids = [...new Set(failures.map((f) => f.job.runId))];
  return ids.length === 1 ? `${runs}/${encodeURIComponent(String(ids[0]))}` : runs;
}
