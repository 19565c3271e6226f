/**
 * The stream hub's transport when REDIS_URL is set (ADR 016): frames are published on one channel
 * of this deployment (under REDIS_KEY_PREFIX) and received on a connection of its own, since a
 * subscribed Redis connection cannot run commands (the pattern of src/auth/cache-invalidation.ts).
 * ioredis re-subscribes after a reconnect; each time the subscription is back, the hub re-exchanges
 * interests. Publishing uses the shared connection.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { StreamTransport } from './stream-hub.ts';

/** Redis takes far larger messages; frames are kept to a size that never stalls the connection. */
export const REDIS_FRAME_BYTES = 256 * 1024;

export class RedisStreamTransport implements StreamTransport {
  readonly maxFrameBytes = REDIS_FRAME_BYTES;
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #channel: string;
  readonly #logger: Pick<Logger, 'warn'>;
  readonly #frameHandlers: Array<(raw: string) => void> = [];
  readonly #connectHandlers: Array<() => void> = [];
  readonly #subscribed: Promise<void>;

  constructor(options: { redis: Redis; keyPrefix: string; logger: Pick<Logger, 'warn'> }) {
    this.#redis = options.redis;
    this.#channel = `${options.keyPrefix}stream`;
    this.#logger = options.logger;
    this.#subscriber = options.redis.duplicate();
    this.#subscriber.on('error', (error) =>
      this.#logger.warn({ err: error.message }, 'stream: redis subscriber error'),
    );
    this.#subscriber.on('message', (channel: string, raw: string) => {
      if (channel !== this.#channel) return;
      for (const handler of this.#frameHandlers) handler(raw);
    });
    // ioredis subscribes again after a reconnect, then says `ready`.
    this.#subscriber.on('ready', () => this.#connected());
    this.#subscribed = this.#subscriber.subscribe(this.#channel).then(
      () => this.#connected(),
      (error: unknown) =>
        this.#logger.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'stream: could not subscribe on Redis',
        ),
    );
  }

  /** Resolves once subscribed (or once subscribing failed, which is logged). */
  start(): Promise<void> {
    return this.#subscribed;
  }

  onFrame(handler: (raw: string) => void): void {
    this.#frameHandlers.push(handler);
  }

  onConnect(handler: () => void): void {
    this.#connectHandlers.push(handler);
  }

  async send(frames: readonly string[]): Promise<void> {
    try {
      for (const frame of frames) await this.#redis.publish(this.#channel, frame);
    } catch (error) {
      this.#logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'stream: redis publish failed; frames dropped',
      );
    }
  }

  async close(): Promise<void> {
    await this.#subscribed;
    this.#subscriber.disconnect();
  }

  #connected(): void {
    for (const handler of this.#connectHandlers) handler();
  }
}
