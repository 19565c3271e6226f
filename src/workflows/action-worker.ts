/**
 * The workflow worker (ADR 014; the mechanics of the delivery worker, ADR 010): a loop claims due
 * action jobs in batches (a lease each), runs each through its type's executor, concurrently and
 * independently of its siblings, and records outcomes in batches (group commit). `runOnce()`
 * does one claim → run → record round: tests drive the retry schedule with a manual clock.
 *
 * Shutdown (contract §0): `stop()` stops claiming, gives back the leases of claimed jobs not yet
 * started at once, lets attempts in flight finish (each bounded by the action timeout) and records
 * them. A crash leaves leases to run out: the attempt is made again (same attempt number) — at
 * least once, never lost. Outcomes that cannot be recorded while the database is unreachable are
 * kept and recorded when it answers again, so a database restart makes no action run twice.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Notifier } from '../account/notifier.ts';
import { isConnectionFailure } from '../db/availability.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/encryption.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { WakeSignal } from '../webhooks/wake-signal.ts';
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
import { TemplateBudgetError, type TemplateContext } from './templates.ts';

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
  batchSize?: number;
  maxInFlight?: number;
  workerId?: string;
}

const FLUSH_DELAY_MS = 3;
const FLUSH_AT = 200;
/** Between tries to record outcomes while the database is unreachable. */
const RECORD_RETRY_MS = 500;

export class ActionWorker {
  readonly id: string;
  private readonly o: ActionWorkerOptions;
  private readonly batchSize: number;
  private readonly maxInFlight: number;
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();
  private results: ActionAttempt[] = [];
  private flushing: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wakeLoop: (() => void) | undefined;
  private wanted = false;
  private unsubscribe: (() => void) | undefined;
  private unstarted: string[] = [];
  private readonly configs = new Map<string, Record<string, unknown>>();

  constructor(options: ActionWorkerOptions) {
    this.o = options;
    this.id = options.workerId ?? `workflow-worker-${uuidv7()}`;
    this.batchSize = options.batchSize ?? 100;
    this.maxInFlight = options.maxInFlight ?? 256;
  }

  /** One round: claim a batch, run it, record the outcomes. Returns how many were attempted. */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.batchSize);
    await Promise.all(claimed.map((job) => this.launch(job)));
    await this.flush();
    return claimed.length;
  }

  start(signal: WakeSignal, pollMs: number): void {
    if (this.loop) return;
    this.unsubscribe = signal.subscribe(() => {
      this.wanted = true;
      this.wakeLoop?.();
    });
    this.loop = (async () => {
      while (!this.stopping) {
        try {
          const room = Math.min(this.batchSize, this.maxInFlight - this.inFlight);
          // Claim in sizeable batches (as the delivery worker does): a claim transaction per action
          // finished would cost more than the actions, and on SQLite queue behind ingestion.
          if (room < Math.min(this.batchSize, this.maxInFlight) / 2) {
            await this.pause(pollMs);
            continue;
          }
          this.wanted = false;
          const claimed = await this.claim(room);
          for (const job of claimed) void this.launch(job);
          if (claimed.length > 0) continue;
          if (!this.wanted) await this.pause(pollMs);
        } catch (error) {
          this.o.logger.error({ err: error, worker: this.id }, 'workflow worker round failed');
          await this.pause(1000);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wakeLoop?.();
    await this.loop;
    // Jobs claimed but not started are given back at once, while those in flight finish.
    const unstarted = this.unstarted;
    this.unstarted = [];
    this.o.logger.info(
      { worker: this.id, given_back: unstarted.length, in_flight: this.inFlight - unstarted.length },
      'workflow worker stopping: claimed actions not started given back, attempts in flight finishing',
    );
    const released = releaseActionLeases(this.o.db, this.id, unstarted, this.o.clock.now()).catch(
      (error: unknown) =>
        this.o.logger.warn({ err: error, worker: this.id }, 'could not give back claimed workflow actions'),
    );
    await Promise.all([...this.running, released]);
    await this.flush();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        if (self.wakeLoop === done) self.wakeLoop = undefined;
        resolve();
      }
      this.wakeLoop = done;
    });
  }

  private async claim(limit: number): Promise<ClaimedAction[]> {
    const now = this.o.clock.now();
    const leaseUntil = new Date(now.getTime() + this.o.runtime.timeoutMs + this.o.leaseMarginMs);
    const claimed = await withTransaction(this.o.db, (trx) =>
      claimDueActions(trx, this.o.capabilities, { now, workerId: this.id, limit, leaseUntil }),
    );
    this.inFlight += claimed.length;
    return claimed;
  }

  private launch(job: ClaimedAction): Promise<void> {
    const run = (async () => {
      if (this.stopping && this.loop) {
        this.unstarted.push(job.id);
        return;
      }
      const startedAt = this.o.clock.now();
      const started = performance.now();
      const outcome = await this.attempt(job);
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      this.results.push({ job, startedAt, finishedAt: this.o.clock.now(), durationMs, outcome });
      this.scheduleFlush();
    })()
      .catch((error: unknown) =>
        this.o.logger.error({ err: error, worker: this.id }, 'workflow action failed'),
      )
      .finally(() => {
        this.inFlight -= 1;
        this.running.delete(run);
        this.wakeLoop?.();
      });
    this.running.add(run);
    return run;
  }

  /** One attempt; anything thrown is a failed attempt, never a crash (e.g. a key that no longer opens). */
  private async attempt(job: ClaimedAction): Promise<ActionOutcome> {
    const executor = this.o.executors[job.type];
    if (!executor) return failed(`No executor for action type ${job.type}`);
    try {
      const config = this.configOf(job.action);
      const context = JSON.parse(job.context) as TemplateContext;
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

  private scheduleFlush(): void {
    if (this.results.length >= FLUSH_AT) {
      void this.flush();
      return;
    }
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, FLUSH_DELAY_MS);
  }

  private flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.flushing) return this.flushing.then(() => (this.results.length > 0 ? this.flush() : undefined));
    if (this.results.length === 0) return Promise.resolve();
    this.flushing = (async () => {
      while (this.results.length > 0) {
        const batch = this.results;
        this.results = [];
        try {
          const failedForGood = await withTransaction(this.o.db, (trx) =>
            recordActionAttempts(trx, this.o.capabilities, this.id, this.o.retryScheduleMs, batch),
          );
          await this.notifyFailures(failedForGood);
        } catch (error) {
          if (isConnectionFailure(error)) {
            // Kept, not dropped: recorded once the database answers, so no action runs twice.
            this.o.logger.warn(
              { err: error, worker: this.id, count: batch.length },
              'database unavailable: workflow outcomes kept until it answers',
            );
            this.results = batch.concat(this.results);
            await delay(RECORD_RETRY_MS);
            continue;
          }
          // The leases run out and the actions are attempted again: at least once, never lost.
          this.o.logger.error(
            { err: error, worker: this.id, count: batch.length },
            'recording workflow attempts failed',
          );
        }
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
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
      const context = JSON.parse(first.job.context) as TemplateContext;
      const count = list.length;
      try {
        await this.o.notifier.notifyWorkspaceAdmins({
          workspaceId: first.job.workspaceId,
          topic: 'dlq',
          type: 'workflow.action_failed',
          title: `Workflow "${context.workflow.name}": ${count === 1 ? `a ${first.job.type} action` : `${count} actions`} failed for good`,
          body: `After ${first.job.attempt} attempts, the ${first.job.type} action failed: ${first.errorMessage}. Retry the run with POST /api/v1/workflows/${first.job.workflowId}/runs/{run_id}/retry.`,
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
