/**
 * The current subscription of each workspace and plan changes (contract §7). Limits are read on
 * every API-key request and every ingestion, so they are cached per workspace: a node sees its own
 * plan changes at once, other nodes at once over the Redis plan-change bus, or within
 * SUBSCRIPTION_CACHE_TTL_MS without Redis.
 */
import type { Db } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import { InsufficientPermissionsError, NotFoundError, ValidationError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { SingleFlight } from '../shared/single-flight.ts';
import { type BillingPeriod, periodOf } from './period.ts';
import type { PlanChangeBus } from './plan-change-bus.ts';
import { LIMIT_NAMES, type Plan, type PlanCatalog, type PlanLimits } from './plans.ts';
import {
  type CustomLimits,
  insertSubscription,
  type SubscriptionRow,
  subscriptionAt,
  workspaceExists,
} from './subscriptions.repository.ts';

export const SUBSCRIPTION_CACHE_TTL_MS = 5_000;
const CACHE_LIMIT = 50_000;

export interface Subscription {
  plan: Plan;
  /** The plan's limits with the operator's overrides applied. */
  limits: PlanLimits;
  /** Monthly base price on the invoice. */
  priceCents: number;
  customLimits: CustomLimits | null;
}

interface CacheEntry {
  value: Subscription;
  checkedAt: number;
}

export function effectiveSubscription(catalog: PlanCatalog, row: SubscriptionRow | undefined): Subscription {
  const plan = catalog.resolve(row?.plan);
  const limits = { ...plan.limits };
  const custom = row?.customLimits ?? null;
  if (custom)
    for (const name of LIMIT_NAMES) if (custom[name] !== undefined) limits[name] = custom[name] ?? null;
  return {
    plan,
    limits,
    priceCents: row?.customPriceCents ?? plan.price_cents_per_month ?? 0,
    customLimits: custom,
  };
}

export class Subscriptions {
  readonly catalog: PlanCatalog;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly bus: PlanChangeBus;
  private readonly cache = new Map<string, CacheEntry>();
  private readonly loads = new SingleFlight<string, Subscription>();
  private readonly listeners: Array<(workspaceId: string) => void> = [];

  constructor(deps: { db: Db; clock: Clock; catalog: PlanCatalog; bus: PlanChangeBus }) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.catalog = deps.catalog;
    this.bus = deps.bus;
    this.bus.subscribe((workspaceId) => this.dropLocal(workspaceId));
    this.bus.onResync(() => {
      for (const workspaceId of [...this.cache.keys()]) this.dropLocal(workspaceId);
    });
  }

  /** Called (on every node) when a workspace's plan changes. */
  onChange(listener: (workspaceId: string) => void): void {
    this.listeners.push(listener);
  }

  /** The workspace's subscription now, from the cache while it is fresh. */
  async current(workspaceId: string, nowMs?: number): Promise<Subscription> {
    const now = nowMs ?? this.clock.now().getTime();
    const cached = this.cache.get(workspaceId);
    if (cached && now - cached.checkedAt < SUBSCRIPTION_CACHE_TTL_MS) return cached.value;
    return this.loads.run(workspaceId, () => this.load(workspaceId, now));
  }

  private async load(workspaceId: string, now: number): Promise<Subscription> {
    const value = effectiveSubscription(
      this.catalog,
      await subscriptionAt(this.db, workspaceId, new Date(now)),
    );
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(workspaceId, { value, checkedAt: now });
    return value;
  }

  /** The subscription that was in force at `at` (for invoices of closed periods). */
  async at(db: Executor, workspaceId: string, at: Date): Promise<Subscription> {
    return effectiveSubscription(this.catalog, await subscriptionAt(db, workspaceId, at));
  }

  period(): BillingPeriod {
    return periodOf(this.clock.now());
  }

  /**
   * A plan change asked for by the workspace itself (`PUT /subscriptions/current`, contract §7):
   * only plans open to self-service; the others (enterprise, whose numbers are negotiated) are
   * assigned by an operator with `cli set-plan`.
   */
  async changeBySelfService(workspaceId: string, planId: string): Promise<Subscription> {
    const plan = this.catalog.find(planId);
    if (plan && !plan.self_service) {
      throw new InsufficientPermissionsError(
        `The ${plan.name} plan cannot be chosen here; contact us to have it set up for this workspace`,
      );
    }
    return this.change(workspaceId, planId);
  }

  /**
   * Switches the workspace's plan from now on (`cli set-plan`, and self-service changes above).
   * Custom limits and price are the operator's; a change through the API clears them.
   */
  async change(
    workspaceId: string,
    planId: string,
    custom: { limits?: CustomLimits | null; priceCents?: number | null } = {},
  ): Promise<Subscription> {
    const plan = this.catalog.find(planId);
    if (!plan) {
      throw new ValidationError(
        `Unknown plan "${planId}"; plans: ${this.catalog.plans.map((p) => p.id).join(', ')}`,
      );
    }
    if (!(await workspaceExists(this.db, workspaceId))) throw new NotFoundError('Workspace');
    const customLimits = custom.limits && Object.keys(custom.limits).length > 0 ? custom.limits : null;
    await insertSubscription(this.db, {
      id: uuidv7(),
      workspaceId,
      plan: plan.id,
      customLimits,
      customPriceCents: custom.priceCents ?? null,
      effectiveFrom: this.clock.now(),
    });
    this.dropLocal(workspaceId);
    this.bus.publish(workspaceId);
    return this.current(workspaceId);
  }

  private dropLocal(workspaceId: string): void {
    this.cache.delete(workspaceId);
    this.loads.forget(workspaceId);
    for (const listener of this.listeners) listener(workspaceId);
  }
}
