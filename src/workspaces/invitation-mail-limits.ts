/**
 * No address can be flooded with invitation e-mails (contract §2.1). Two budgets per address, each
 * 3 e-mails per rolling hour, whichever workspace sends them:
 * - resends (`POST /workspaces/{id}/invitations/{id}/resend`), as the contract states;
 * - new invitations (`POST /workspaces/{id}/members` for an address without an account), since
 *   inviting, revoking and inviting again, or inviting from many workspaces, mails the address too.
 * Beyond either: 429 RATE_LIMIT_EXCEEDED with Retry-After, and nothing is changed or sent (a refused
 * resend leaves the earlier link working). The limiters are built in src/deps.ts like the other
 * identity limits (memory, or Redis with REDIS_URL), keyed by the address's SHA-256 so the store
 * never holds the address.
 */
import { enforceRateLimit } from '../limits/enforce.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { normalizeEmail } from '../shared/email-address.ts';
import { sha256Hex } from '../shared/random-secrets.ts';

export const INVITATION_EMAILS_PER_ADDRESS = 3;
export const INVITATION_EMAIL_PERIOD_SECONDS = 3600;

export interface InvitationMailLimits {
  /** INVITATION_EMAILS_PER_ADDRESS resends per INVITATION_EMAIL_PERIOD_SECONDS. */
  resends: RateLimiter;
  /** INVITATION_EMAILS_PER_ADDRESS new invitations per INVITATION_EMAIL_PERIOD_SECONDS. */
  newInvitations: RateLimiter;
}

/** Spends one e-mail of the address's budget or throws the 429. */
export async function spendInvitationEmail(budget: RateLimiter, email: string): Promise<void> {
  await enforceRateLimit(budget, sha256Hex(normalizeEmail(email)), 'invitation e-mails to this address');
}
