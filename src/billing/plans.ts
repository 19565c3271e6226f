/**
 * The plan table (contract §7): the items of `GET /subscriptions/plans`. The built-in table can be
 * replaced whole by `PLANS_FILE` (a JSON array of the same objects), validated at start.
 *
 * A limit of `null` means "no limit" (the seed's "custom" enterprise tier: an operator sets the
 * customer's figures per workspace with `cli set-plan`). `overage_cents_per_1000_events` prices the
 * events beyond `events_per_month` on the invoice (null: overage is not billed, only throttled);
 * it is optional in PLANS_FILE (absent = null) so files shaped exactly like the contract's items
 * stay valid. `self_service` (optional too) says whether a workspace may choose the plan itself.
 * See docs/decisions/011-plans-quotas-and-rate-limits.md.
 */

export const LIMIT_NAMES = [
  'api_requests_per_hour',
  'events_per_month',
  'geofences',
  'webhooks',
  'devices',
] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];
export type PlanLimits = Record<LimitName, number | null>;

export interface Plan {
  id: string;
  name: string;
  /** null: priced per contract (enterprise), 0 on the invoice unless the operator sets a price. */
  price_cents_per_month: number | null;
  limits: PlanLimits;
  overage_cents_per_1000_events: number | null;
  /**
   * Whether an owner or admin may choose the plan through `PUT /subscriptions/current` (contract
   * §7); the others are assigned by an operator (`cli set-plan`). Enterprise never is.
   */
  self_service: boolean;
}

/** The plan whose numbers are negotiated per customer: never open to self-service (contract §7). */
export const ENTERPRISE_PLAN_ID = 'enterprise';

export const DEFAULT_PLANS: readonly Plan[] = [
  {
    id: 'free',
    name: 'Free',
    price_cents_per_month: 0,
    limits: {
      api_requests_per_hour: 100,
      events_per_month: 10_000,
      geofences: 50,
      webhooks: 5,
      devices: 100,
    },
    overage_cents_per_1000_events: null,
    self_service: true,
  },
  {
    id: 'pro',
    name: 'Pro',
    price_cents_per_month: 4_900,
    limits: {
      api_requests_per_hour: 1_000,
      events_per_month: 250_000,
      geofences: 5_000,
      webhooks: 50,
      devices: 10_000,
    },
    overage_cents_per_1000_events: 50,
    self_service: true,
  },
  {
    id: 'business',
    name: 'Business',
    price_cents_per_month: 29_900,
    limits: {
      api_requests_per_hour: 5_000,
      events_per_month: 2_500_000,
      geofences: 100_000,
      webhooks: 500,
      devices: 250_000,
    },
    overage_cents_per_1000_events: 30,
    self_service: true,
  },
  {
    id: ENTERPRISE_PLAN_ID,
    name: 'Enterprise',
    price_cents_per_month: null,
    limits: {
      api_requests_per_hour: null,
      events_per_month: null,
      geofences: null,
      webhooks: null,
      devices: null,
    },
    overage_cents_per_1000_events: null,
    self_service: false,
  },
];

const PLAN_KEYS = new Set([
  'id',
  'name',
  'price_cents_per_month',
  'limits',
  'overage_cents_per_1000_events',
  'self_service',
]);

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Checks a parsed PLANS_FILE; returns the plans, or every problem found (named by index and field). */
export function validatePlans(input: unknown): { plans: Plan[] } | { problems: string[] } {
  if (!Array.isArray(input) || input.length === 0) {
    return { problems: ['must be a non-empty JSON array of plan objects'] };
  }
  const problems: string[] = [];
  const plans: Plan[] = [];
  const ids = new Set<string>();
  input.forEach((raw: unknown, index) => {
    const at = `[${index}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      problems.push(`${at} must be an object`);
      return;
    }
    const item = raw as Record<string, unknown>;
    for (const key of Object.keys(item))
      if (!PLAN_KEYS.has(key)) problems.push(`${at}.${key} is not a plan field`);
    const id = item.id;
    if (typeof id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(id)) {
      problems.push(`${at}.id must be a lower-case identifier such as "pro"`);
    } else if (ids.has(id)) problems.push(`${at}.id "${id}" appears twice`);
    else ids.add(id);
    if (typeof item.name !== 'string' || item.name.trim() === '')
      problems.push(`${at}.name must be a string`);
    const price = item.price_cents_per_month;
    if (price !== null && !isCount(price))
      problems.push(`${at}.price_cents_per_month must be an integer ≥ 0 or null`);
    const overage = item.overage_cents_per_1000_events ?? null;
    if (overage !== null && !isCount(overage))
      problems.push(`${at}.overage_cents_per_1000_events must be an integer ≥ 0 or null`);
    // Optional, so files shaped exactly like the contract's items stay valid: open unless enterprise.
    const selfService = item.self_service ?? id !== ENTERPRISE_PLAN_ID;
    if (typeof selfService !== 'boolean') problems.push(`${at}.self_service must be true or false`);
    else if (selfService && id === ENTERPRISE_PLAN_ID)
      problems.push(`${at}.self_service cannot be true: the enterprise plan is assigned by an operator`);
    const limits = item.limits;
    const parsed = {} as PlanLimits;
    if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
      problems.push(`${at}.limits must be an object`);
    } else {
      const record = limits as Record<string, unknown>;
      for (const key of Object.keys(record))
        if (!(LIMIT_NAMES as readonly string[]).includes(key))
          problems.push(`${at}.limits.${key} is not a limit`);
      for (const name of LIMIT_NAMES) {
        const value = record[name];
        if (value === null || isCount(value)) parsed[name] = value;
        else problems.push(`${at}.limits.${name} must be an integer ≥ 0 or null (no limit)`);
      }
    }
    plans.push({
      id: String(id),
      name: String(item.name),
      price_cents_per_month: (price ?? null) as number | null,
      limits: parsed,
      overage_cents_per_1000_events: overage as number | null,
      self_service: selfService === true,
    });
  });
  return problems.length > 0 ? { problems } : { plans };
}

/** The plans in force, by id. */
export class PlanCatalog {
  readonly plans: readonly Plan[];
  readonly defaultPlan: Plan;
  private readonly byId: Map<string, Plan>;

  constructor(plans: readonly Plan[], defaultPlanId: string) {
    this.plans = plans;
    this.byId = new Map(plans.map((p) => [p.id, p]));
    const fallback = this.byId.get(defaultPlanId);
    if (!fallback) throw new Error(`DEFAULT_PLAN "${defaultPlanId}" is not in the plan table`);
    this.defaultPlan = fallback;
  }

  find(id: string): Plan | undefined {
    return this.byId.get(id);
  }

  /** A stored plan id that a later PLANS_FILE removed falls back to the default plan. */
  resolve(id: string | undefined): Plan {
    return (id !== undefined ? this.byId.get(id) : undefined) ?? this.defaultPlan;
  }
}
