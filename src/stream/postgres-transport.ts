/**
 * The stream hub's transport on PostgreSQL without Redis (ADR 016): one dedicated connection per
 * node, outside the pool, LISTENs on a channel of this deployment and sends the hub's frames with
 * `pg_notify` (bound parameters). Payloads stay under PostgreSQL's 8,000-byte limit; the hub cuts
 * larger frames. NOTIFY from one session arrives in the order sent, at every listening session,
 * the sender's own included.
 *
 * A lost connection is re-made with a growing pause (250 ms up to 1 s, so that the node listens
 * again within 2 s of the database's return, contract §0); frames sent meanwhile are dropped (the
 * stream is at most once) and, once listening again, the hub re-exchanges interests.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import type { StreamTransport } from './stream-hub.ts';

/** NOTIFY payloads must be shorter than 8,000 bytes; a little room is left. */
export const NOTIFY_MAX_BYTES = 7_900;
const RETRY_MIN_MS = 250;
/** An attempt a second costs a refused connection a second: nothing, while the database is down. */
const RETRY_MAX_MS = 1_000;

/**
 * The channel of a deployment: nodes of one database schema share it, and another schema's nodes
 * (another deployment, a parallel test) have their own, since NOTIFY channels span the database.
 */
export function channelFor(schema: string | undefined): string {
  const name = schema === undefined || schema === 'public' ? 'geofence_stream' : `geofence_stream_${schema}`;
  // LISTEN takes an identifier, not a parameter: only a plain lowercase one is ever written there.
  const channel = name.toLowerCase().slice(0, 63);
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Unusable stream channel for schema ${schema}`);
  return channel;
}

export class PostgresStreamTransport implements StreamTransport {
  readonly maxFrameBytes = NOTIFY_MAX_BYTES;
  readonly #url: string;
  readonly #channel: string;
  readonly #logger: Pick<Logger, 'warn' | 'info'>;
  readonly #frameHandlers: Array<(raw: string) => void> = [];
  readonly #connectHandlers: Array<() => void> = [];
  #client: pg.Client | undefined;
  #listening = false;
  #closing = false;
  #retryMs = RETRY_MIN_MS;
  #retryTimer: NodeJS.Timeout | undefined;
  #connecting: Promise<void> | undefined;

  constructor(options: { url: string; schema: string | undefined; logger: Pick<Logger, 'warn' | 'info'> }) {
    this.#url = options.url;
    this.#channel = channelFor(options.schema);
    this.#logger = options.logger;
  }

  /** Connects and listens; resolves either way (a failure is logged and retried). */
  start(): Promise<void> {
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  onFrame(handler: (raw: string) => void): void {
    this.#frameHandlers.push(handler);
  }

  onConnect(handler: () => void): void {
    this.#connectHandlers.push(handler);
  }

  async send(frames: readonly string[]): Promise<void> {
    const client = this.#client;
    if (!client || !this.#listening) return;
    try {
      // One after the other on this one connection: they arrive in this order everywhere.
      for (const frame of frames) await client.query('select pg_notify($1, $2)', [this.#channel, frame]);
    } catch (error) {
      this.#logger.warn({ err: errorText(error) }, 'stream: NOTIFY failed; frames dropped');
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearTimeout(this.#retryTimer);
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    this.#listening = false;
    await client?.end().catch(() => undefined);
  }

  async #connect(): Promise<void> {
    if (this.#closing) return;
    // Connecting is bounded, like the pool's (database.ts): a silent host must not stall the retries.
    const client = new pg.Client({
      connectionString: this.#url,
      connectionTimeoutMillis: 1_500,
      keepAlive: true,
    });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, undefined));
    client.on('notification', (message) => {
      if (message.channel !== this.#channel || message.payload === undefined) return;
      for (const handler of this.#frameHandlers) handler(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen "${this.#channel}"`);
    } catch (error) {
      this.#logger.warn({ err: errorText(error) }, 'stream: could not listen on PostgreSQL; retrying');
      await client.end().catch(() => undefined);
      this.#retry();
      return;
    }
    if (this.#closing) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#listening = true;
    this.#retryMs = RETRY_MIN_MS;
    for (const handler of this.#connectHandlers) handler();
  }

  #lost(client: pg.Client, error: Error | undefined): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#listening = false;
    if (this.#closing) return;
    this.#logger.warn({ err: error ? errorText(error) : 'ended' }, 'stream: LISTEN connection lost');
    client.end().catch(() => undefined);
    this.#retry();
  }

  #retry(): void {
    if (this.#closing || this.#retryTimer !== undefined) return;
    const wait = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.start();
    }, wait);
    this.#retryTimer.unref();
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
