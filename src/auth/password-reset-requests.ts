/**
 * The request side of password reset (contract §2.1): `POST /auth/password-reset/request` answers
 * 202 the same way, after the same work, whether the address has an account or not. The request
 * path only counts the client IP (20 per rolling hour, beyond: 429 RATE_LIMIT_EXCEEDED) and queues
 * the address; everything that depends on the address (its own budget of 3 e-mails an hour, the
 * account lookup, the token, the e-mail) runs after the answer, off the request path. Beyond an
 * address's budget the answer is still 202 and no e-mail goes out.
 *
 * The queue lives in this process: a crash loses the resets waiting in it (at most a moment's
 * worth), and the user asks again. Both budgets are rolling-window limiters like login's, in Redis
 * when REDIS_URL is set so every node spends the same budget.
 */
import type { Logger } from 'pino';
import { enforceRateLimit } from '../limits/enforce.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { normalizeEmail } from '../shared/email-address.ts';
import { sha256Hex } from '../shared/random-secrets.ts';

export const RESET_PERIOD_SECONDS = 3600;
export const RESET_REQUESTS_PER_IP = 20;
export const RESET_EMAILS_PER_ADDRESS = 3;
/** Waiting resets beyond this are dropped (still answered 202): a flood must not grow memory without end. */
const MAX_WAITING = 10_000;

interface WaitingReset {
  email: string;
  requestedAt: Date;
}

export class PasswordResetRequests {
  private readonly perIp: RateLimiter;
  private readonly perAddress: RateLimiter;
  private readonly logger: Logger;
  private readonly send: (email: string, requestedAt: Date) => Promise<void>;
  private readonly waiting: WaitingReset[] = [];
  private draining: Promise<void> | undefined;

  constructor(deps: {
    /** RESET_REQUESTS_PER_IP per RESET_PERIOD_SECONDS. */
    perIp: RateLimiter;
    /** RESET_EMAILS_PER_ADDRESS per RESET_PERIOD_SECONDS. */
    perAddress: RateLimiter;
    logger: Logger;
    /** Looks the address up and e-mails a token when it has an account. */
    send: (email: string, requestedAt: Date) => Promise<void>;
  }) {
    this.perIp = deps.perIp;
    this.perAddress = deps.perAddress;
    this.logger = deps.logger;
    this.send = deps.send;
  }

  /** The whole request path: the same for every address. Throws 429 beyond the IP's budget. */
  async accept(clientIp: string, email: string, requestedAt: Date): Promise<void> {
    await enforceRateLimit(this.perIp, clientIp, 'password-reset requests from this address');
    if (this.waiting.length >= MAX_WAITING) {
      this.logger.warn('password-reset queue full: request dropped');
      return;
    }
    this.waiting.push({ email, requestedAt });
    // setImmediate: the drain starts once this request's answer has been handed to the socket.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /** Resolves once every queued reset has been handled (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
      await this.handle(next).catch((error: unknown) =>
        this.logger.error({ err: error }, 'password-reset e-mail could not be prepared'),
      );
    }
    this.draining = undefined;
  }

  private async handle(reset: WaitingReset): Promise<void> {
    // Keyed by a hash: the store (possibly Redis) never holds the address itself.
    const budget = await this.perAddress.consume(sha256Hex(normalizeEmail(reset.email)));
    if (!budget.allowed) return;
    await this.send(reset.email, reset.requestedAt);
  }
}
