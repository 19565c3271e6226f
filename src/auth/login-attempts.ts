/**
 * The per-IP login limit (contract §2.2, seed §8) counts failed attempts only: wrong credentials
 * spend the budget (LOGIN_RATE_LIMIT, default 5 per minute), successful sign-ins do not. Once the
 * window holds the limit's worth of failures, every attempt from that address is refused with 429
 * RATE_LIMIT_EXCEEDED, the right password included, until the oldest failure leaves the window
 * (Retry-After says when): the limit is there to stop guessing, and a guesser who has just hit the
 * password must not learn it from a 200. Anything else a sign-in can meet (an unverified address, a
 * workspace it is not a member of) is not a guess and is not counted.
 *
 * A failure is known only after the password check (~60 ms of argon2id), so attempts under way at
 * the same moment count against the budget until they end: a burst of parallel guesses on one node
 * gets no more than the limit's worth through. Across nodes such a burst, timed within one password
 * check, could pass once per node; the failures it leaves behind then stop every node (the window
 * lives in Redis with REDIS_URL).
 */
import type { Logger } from 'pino';
import { type WindowStore, wholeSeconds } from '../limits/sliding-window.ts';
import type { Clock } from '../shared/clock.ts';
import { InvalidCredentialsError, RateLimitExceededError } from '../shared/errors.ts';

/** When the only thing in the way is attempts under way: they end within about a second. */
const BUSY_RETRY_AFTER_SECONDS = 1;

export class LoginAttempts {
  readonly limit: number;
  readonly windowSeconds: number;
  private readonly store: WindowStore;
  private readonly clock: Clock;
  private readonly logger: Pick<Logger, 'warn'>;
  private readonly underway = new Map<string, number>();
  private lastWarning = 0;

  /** `store`'s window is the limit's period. */
  constructor(options: { limit: number; store: WindowStore; clock: Clock; logger: Pick<Logger, 'warn'> }) {
    this.limit = options.limit;
    this.store = options.store;
    this.clock = options.clock;
    this.logger = options.logger;
    this.windowSeconds = options.store.windowMs / 1000;
  }

  /**
   * Runs one sign-in from `ip` within the budget: throws 429 when the address has used it up,
   * counts a failure when `signIn` rejects the credentials, and passes its answer or error on.
   */
  async attempt<T>(ip: string, signIn: () => Promise<T>): Promise<T> {
    const key = `login-failures:${ip}`;
    // Counted as under way before the first await, so concurrent attempts see each other.
    this.underway.set(ip, (this.underway.get(ip) ?? 0) + 1);
    try {
      const counted = await this.admit(key, ip);
      try {
        return await signIn();
      } catch (error) {
        if (error instanceof InvalidCredentialsError && !counted)
          await this.store.consume(key, this.limit, this.clock.now().getTime());
        throw error;
      }
    } finally {
      const left = (this.underway.get(ip) ?? 1) - 1;
      if (left > 0) this.underway.set(ip, left);
      else this.underway.delete(ip);
    }
  }

  /**
   * Throws 429 unless the failures in the window plus the attempts under way (this one included)
   * fit the limit. Returns true in the rare case where the admission itself counted a failure.
   */
  private async admit(key: string, ip: string): Promise<boolean> {
    const now = this.clock.now().getTime();
    const failures = await this.failuresIn(key, now);
    if (failures + (this.underway.get(ip) ?? 1) <= this.limit) return false;
    if (failures < this.limit) throw this.refusal(BUSY_RETRY_AFTER_SECONDS);
    // Used up: a refused consume counts nothing and says exactly when a slot frees up.
    const decision = await this.store.consume(key, this.limit, now);
    if (!decision.allowed) throw this.refusal(wholeSeconds(decision.resetMs, this.store.windowMs));
    // A failure left the window between the two reads and this consume took its place: the attempt
    // goes ahead with its failure counted in advance.
    return true;
  }

  private async failuresIn(key: string, now: number): Promise<number> {
    try {
      const [count] = await this.store.peek([key], now);
      return count ?? 0;
    } catch (error) {
      // The stores answer from memory while Redis is away; should one throw all the same, an
      // attempt goes ahead rather than every sign-in stopping.
      if (Date.now() - this.lastWarning > 10_000) {
        this.lastWarning = Date.now();
        this.logger.warn({ err: error }, 'login limit store unreachable: attempts are allowed uncounted');
      }
      return 0;
    }
  }

  private refusal(retryAfterSeconds: number): RateLimitExceededError {
    return new RateLimitExceededError(
      `Too many failed sign-ins from this address; retry in ${retryAfterSeconds} s`,
      retryAfterSeconds,
      this.limit,
      this.windowSeconds,
    );
  }
}
