/**
 * The event quota on location ingestion (seed §8, contract §7). Usage = geofence events this
 * period (`usage_counters`, written by the ingestion transaction). At ≥ 120 % of the plan's
 * `events_per_month` the workspace's ingestion requests are throttled to 60 per rolling minute
 * (429 RATE_LIMITED + Retry-After); at ≥ 150 % every ingestion request gets 403 QUOTA_EXCEEDED
 * until the period ends or the plan changes.
 *
 * Ingestion is the hottest path, so the check reads a per-workspace state kept in memory: loaded
 * from the database at most every QUOTA_STATE_TTL_MS, and moved forward by this node's own
 * ingestions as they complete. Another node's events show here within that TTL (the multi-node
 * slack written down in docs/decisions/011); a plan change drops the state on every node at once.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { MINUTE_MS, type WindowStore, wholeSeconds } from '../limits/sliding-window.ts';
import type { Clock } from '../shared/clock.ts';
import { QuotaExceededError, QuotaThrottledError } from '../shared/errors.ts';
import { SingleFlight } from '../shared/single-flight.ts';
import { eventUsage } from '../usage/usage.repository.ts';
import type { UsageMeter } from '../usage/usage-meter.ts';
import { type BillingPeriod, periodOf } from './period.ts';
import { type QuotaNotifications, thresholdReached } from './quota-notifications.ts';
import type { Subscriptions } from './subscriptions.service.ts';

export const QUOTA_STATE_TTL_MS = 5_000;
export const THROTTLE_PER_MINUTE = 60;
const SOFT_PERCENT = 120;
const HARD_PERCENT = 150;

interface QuotaState {
  period: BillingPeriod;
  used: number;
  quota: number | null;
  loadedAt: number;
  /** The highest threshold this node has made sure is announced. */
  announced: number;
}

export class EventQuota {
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly subscriptions: Subscriptions;
  private readonly throttle: WindowStore;
  private readonly meter: UsageMeter;
  private readonly notifications: QuotaNotifications;
  private readonly logger: Pick<Logger, 'warn'>;
  private readonly states = new Map<string, QuotaState>();
  private readonly loads = new SingleFlight<string, QuotaState>();

  /** `throttle` must be a minute long (contract §7). */
  constructor(deps: {
    logger: Pick<Logger, 'warn'>;
    db: Db;
    clock: Clock;
    subscriptions: Subscriptions;
    throttle: WindowStore;
    meter: UsageMeter;
    notifications: QuotaNotifications;
  }) {
    if (deps.throttle.windowMs !== MINUTE_MS)
      throw new Error('The ingestion throttle needs a minute-long window');
    this.db = deps.db;
    this.clock = deps.clock;
    this.subscriptions = deps.subscriptions;
    this.throttle = deps.throttle;
    this.meter = deps.meter;
    this.notifications = deps.notifications;
    this.logger = deps.logger;
    this.subscriptions.onChange((workspaceId) => {
      this.states.delete(workspaceId);
      this.loads.forget(workspaceId);
    });
  }

  /** Admits one ingestion request or throws 403 QUOTA_EXCEEDED / 429 RATE_LIMITED. */
  async admit(workspaceId: string): Promise<void> {
    const nowMs = this.clock.now().getTime();
    const cached = this.states.get(workspaceId);
    const state =
      cached && nowMs - cached.loadedAt < QUOTA_STATE_TTL_MS && nowMs < cached.period.end.getTime()
        ? cached
        : await this.loads.run(workspaceId, () => this.load(workspaceId, nowMs));
    const { quota, used } = state;
    if (quota === null) return;
    const percent = quota === 0 ? Number.POSITIVE_INFINITY : (used * 100) / quota;
    if (percent >= HARD_PERCENT) {
      throw new QuotaExceededError(
        `Monthly event quota exceeded (${used} of ${quota} events, ${HARD_PERCENT}% cap); location ingestion resumes when the period ends on ${state.period.end.toISOString()} or the plan changes`,
        { used, quota, period_end: state.period.end.toISOString() },
      );
    }
    if (percent < SOFT_PERCENT) return;
    const decision = await this.throttle.consume(`quota-throttle:${workspaceId}`, THROTTLE_PER_MINUTE, nowMs);
    if (decision.allowed) return;
    const retryAfter = wholeSeconds(decision.resetMs, MINUTE_MS);
    throw new QuotaThrottledError(
      `Event usage is over ${SOFT_PERCENT}% of the monthly quota (${used} of ${quota}); location ingestion is throttled to ${THROTTLE_PER_MINUTE} requests per minute, retry in ${retryAfter} s`,
      retryAfter,
      { limit: THROTTLE_PER_MINUTE, period_seconds: MINUTE_MS / 1000, used, quota },
    );
  }

  /** After an ingestion committed `events` events: moves the local state and announces thresholds. */
  async record(workspaceId: string, events: number): Promise<void> {
    if (events <= 0) return;
    this.meter.events(workspaceId, events);
    const state = this.states.get(workspaceId);
    if (!state || state.quota === null || this.clock.now().getTime() >= state.period.end.getTime()) return;
    state.used += events;
    await this.announce(workspaceId, state);
  }

  private async load(workspaceId: string, nowMs: number): Promise<QuotaState> {
    const now = new Date(nowMs);
    const period = periodOf(now);
    const subscription = await this.subscriptions.current(workspaceId);
    const quota = subscription.limits.events_per_month;
    const used = quota === null ? 0 : await eventUsage(this.db, workspaceId, period.id);
    const previous = this.states.get(workspaceId);
    const state: QuotaState = {
      period,
      used,
      quota,
      loadedAt: nowMs,
      announced:
        previous && previous.period.id === period.id && previous.quota === quota ? previous.announced : 0,
    };
    this.states.set(workspaceId, state);
    // Events of other nodes may have carried usage over a threshold that nobody here has seen.
    await this.announce(workspaceId, state);
    return state;
  }

  private async announce(workspaceId: string, state: QuotaState): Promise<void> {
    if (state.quota === null || state.quota === 0) return;
    const reached = thresholdReached(state.used, state.quota);
    if (reached <= state.announced) return;
    const after = state.announced;
    state.announced = reached;
    // A failed notification must not fail the ingestion that crossed the threshold; the next
    // crossing check (this node's next load) tries again.
    try {
      await this.notifications.announce(workspaceId, state.period.id, after, reached, {
        used: state.used,
        quota: state.quota,
      });
    } catch (error) {
      state.announced = after;
      this.logger.warn({ err: error, workspaceId }, 'could not send quota notifications');
    }
  }
}
