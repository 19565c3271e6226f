/**
 * Which due deliveries a claim may take now (ADR 010 "Claiming and leases", "Rate limit windows").
 * Pure decisions from what the claim read — the due rows, their webhooks, the sends already counted
 * in the webhooks' rate windows — so that the repository only runs the statements it is handed the
 * numbers for, and the rules can be read (and changed) in one place.
 */
import type { DeliveryOrigin } from './deliveries.tables.ts';

/**
 * Sends are counted per second over the 61 seconds overlapping (now − 60 s, now]: whichever request
 * of any 60-second window is sent last saw all the others counted, so no 60 s window ever holds more
 * than the limit.
 */
export const RATE_WINDOW_SECONDS = 60;
/** A disabled webhook keeps its deliveries pending; they resume within this long of re-enabling. */
const DISABLED_RECHECK_MS = 60_000;
/** Counted seconds older than this are no longer read by any claim and may be deleted. */
const RATE_WINDOW_KEPT_SECONDS = 2 * RATE_WINDOW_SECONDS;

export interface DueDelivery {
  id: string;
  webhookId: string;
  origin: DeliveryOrigin;
}

export interface RateLimitedWebhook {
  id: string;
  enabled: boolean;
  rateLimitPerMinute: number;
  timeoutSeconds: number;
}

/** Sends of one webhook in one epoch second, as stored in `webhook_rate_windows`. */
export interface CountedSends {
  webhookId: string;
  second: number;
  sends: number;
}

export type ClaimDecision =
  /** Attempt it now: leased until the attempt must have ended (its timeout plus the margin). */
  | { kind: 'lease'; id: string; webhookId: string; leaseUntil: Date }
  /** Not attempted now and no attempt used: due again at `dueAt`. */
  | { kind: 'defer'; id: string; dueAt: Date };

export interface ClaimPlan {
  /** One per due delivery whose webhook was read, in the order the deliveries were given. */
  decisions: ClaimDecision[];
  /** The epoch second the leased sends are counted in. */
  second: number;
  /** Sends to add to each webhook's count of `second`. */
  sends: Map<string, number>;
}

/** The first second a claim at `now` counts (the window's oldest bucket). */
export function rateWindowStart(now: Date): number {
  return epochSecond(now) - RATE_WINDOW_SECONDS;
}

/** Counted seconds before this one count for nothing any more. */
export function rateWindowsPurgeBefore(now: Date): number {
  return epochSecond(now) - RATE_WINDOW_KEPT_SECONDS;
}

/**
 * Decides each due delivery: a disabled webhook's waits (test deliveries are sent anyway); a
 * webhook whose window is full defers the rest until its oldest counted second leaves the window;
 * otherwise it is leased and counted. Deliveries whose webhook is not in `webhooks` (deleted since
 * they were read) get no decision: they stay as they are and the next claim fails them.
 */
export function planClaims(
  due: readonly DueDelivery[],
  webhooks: ReadonlyMap<string, RateLimitedWebhook>,
  counted: readonly CountedSends[],
  now: Date,
  leaseMarginMs: number,
): ClaimPlan {
  const second = epochSecond(now);
  const used = new Map<string, number>();
  const oldest = new Map<string, number>();
  for (const c of counted) {
    used.set(c.webhookId, (used.get(c.webhookId) ?? 0) + c.sends);
    oldest.set(c.webhookId, Math.min(oldest.get(c.webhookId) ?? c.second, c.second));
  }
  const sends = new Map<string, number>();
  const decisions: ClaimDecision[] = [];
  for (const d of due) {
    const hook = webhooks.get(d.webhookId);
    if (!hook) continue;
    if (!hook.enabled && d.origin !== 'test') {
      decisions.push({ kind: 'defer', id: d.id, dueAt: new Date(now.getTime() + DISABLED_RECHECK_MS) });
      continue;
    }
    const taken = sends.get(hook.id) ?? 0;
    if ((used.get(hook.id) ?? 0) + taken >= hook.rateLimitPerMinute) {
      // Due again when the oldest counted second leaves the window.
      const first = Math.min(oldest.get(hook.id) ?? second, second);
      decisions.push({ kind: 'defer', id: d.id, dueAt: new Date((first + RATE_WINDOW_SECONDS + 1) * 1000) });
      continue;
    }
    sends.set(hook.id, taken + 1);
    // Long enough for one attempt; a worker still busy with earlier ones extends it (extendLeases).
    const leaseUntil = new Date(now.getTime() + hook.timeoutSeconds * 1000 + leaseMarginMs);
    decisions.push({ kind: 'lease', id: d.id, webhookId: hook.id, leaseUntil });
  }
  return { decisions, second, sends };
}

function epochSecond(time: Date): number {
  return Math.floor(time.getTime() / 1000);
}
