/**
 * No address can be flooded with verification e-mails (contract §2.1): `POST
 * /auth/verify-email/resend` sends at most 3 per address per rolling hour; beyond, 429
 * RATE_LIMIT_EXCEEDED with Retry-After and no new token (the last link keeps working). The e-mail
 * sent at registration is not counted: it goes out once per account. A resend for an address that
 * is already verified sends nothing and spends nothing. The limiter is built in src/deps.ts like
 * the other identity limits (memory, or Redis with REDIS_URL), keyed by the address's SHA-256.
 */
import { enforceRateLimit } from '../limits/enforce.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { normalizeEmail } from '../shared/email-address.ts';
import { sha256Hex } from '../shared/random-secrets.ts';

export const VERIFICATION_RESENDS_PER_ADDRESS = 3;
export const VERIFICATION_RESEND_PERIOD_SECONDS = 3600;

/** Spends one e-mail of the address's budget or throws the 429. */
export async function spendVerificationEmail(budget: RateLimiter, email: string): Promise<void> {
  await enforceRateLimit(budget, sha256Hex(normalizeEmail(email)), 'verification e-mails to this address');
}
