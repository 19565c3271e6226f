/**
 * The stream hub (ADR 016): `publish(workspace, message)` after a commit, `subscribe(workspace,
 * listener)` for each open stream. Subscribers on this node get a message at once, in process.
 * Other nodes get it over a transport (PostgreSQL LISTEN/NOTIFY or Redis pub/sub), and only those
 * that said they have subscribers of that workspace:
 *
 * - A node with subscribers of a workspace announces its interest when the first one arrives, again
 *   every INTEREST_REFRESH_MS, and drops it when the last one leaves. The others remember it for
 *   INTEREST_TTL_MS, so a node that died stops receiving within that time.
 * - A node that (re)connects asks the others for their interests.
 * - Messages for interested nodes are queued and sent at most every FLUSH_MS, many to a frame,
 *   after the commit and off the request path. Publishing into a workspace nobody watches costs one
 *   map lookup and is otherwise dropped.
 * - Every frame carries its node's id: a node ignores its own frames when they come back (NOTIFY
 *   and Redis both deliver to the sender too), so its subscribers get each message exactly once.
 *
 * Delivery is at most once: what is published while a transport is down is lost, like a message
 * to a stream that is reconnecting. Clients re-read the snapshot (GET /devices/positions) after
 * `ready`, as they do on every (re)connect.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { FrameDecoder, FrameEncoder } from './frames.ts';
import type { StreamMessage } from './stream-messages.ts';

export type StreamListener = (message: StreamMessage) => void;

/** Frames between the nodes; see postgres-transport.ts and redis-transport.ts. */
export interface StreamTransport {
  /** The largest frame the transport carries, in UTF-8 bytes. */
  readonly maxFrameBytes: number;
  /** Sends frames, in order; a failure is the transport's to log. */
  send(frames: readonly string[]): Promise<void>;
  /** Frames of every node, this one's included. */
  onFrame(handler: (raw: string) => void): void;
  /** Called each time the transport is (again) able to receive: interests are exchanged anew. */
  onConnect(handler: () => void): void;
  close(): Promise<void>;
}

export interface Subscription {
  unsubscribe(): void;
  /**
   * Resolves once this node's interest in the workspace went round the transport (every node
   * listening then has it queued), or at once without a transport; at most ANNOUNCE_WAIT_MS.
   */
  announced: Promise<void>;
}

export interface StreamHub {
  publish(workspaceId: string, message: StreamMessage): void;
  subscribe(workspaceId: string, listener: StreamListener): Subscription;
  /** Whether a message of the workspace would reach anyone, on this node or another. */
  wanted(workspaceId: string): boolean;
  close(): Promise<void>;
}

export const FLUSH_MS = 50;
export const INTEREST_REFRESH_MS = 5_000;
export const INTEREST_TTL_MS = 15_000;
const ANNOUNCE_WAIT_MS = 1_000;

export interface HubOptions {
  transport?: StreamTransport | undefined;
  logger: Pick<Logger, 'warn'>;
  /** Monotonic milliseconds for interest expiry (tests move it by hand). */
  now?: () => number;
  flushMs?: number;
  refreshMs?: number;
  ttlMs?: number;
}

export class LiveStreamHub implements StreamHub {
  readonly origin = randomBytes(6).toString('hex');
  readonly #transport: StreamTransport | undefined;
  readonly #logger: Pick<Logger, 'warn'>;
  readonly #now: () => number;
  readonly #flushMs: number;
  readonly #ttlMs: number;
  readonly #encoder: FrameEncoder | undefined;
  readonly #decoder = new FrameDecoder();
  readonly #local = new Map<string, Set<StreamListener>>();
  /** workspace → node → when its interest expires. */
  readonly #remote = new Map<string, Map<string, number>>();
  /** Waiting for their own interest frame to come back, by workspace. */
  readonly #announcing = new Map<string, Array<() => void>>();
  /** Workspaces whose interest came back at least once since their first subscriber. */
  readonly #confirmed = new Set<string>();
  #messages: Array<[string, StreamMessage]> = [];
  #interest = new Set<string>();
  #dropped = new Set<string>();
  #query = false;
  #flushTimer: NodeJS.Timeout | undefined;
  #refreshTimer: NodeJS.Timeout | undefined;
  #sending: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(options: HubOptions) {
    this.#transport = options.transport;
    this.#logger = options.logger;
    this.#now = options.now ?? (() => performance.now());
    this.#flushMs = options.flushMs ?? FLUSH_MS;
    this.#ttlMs = options.ttlMs ?? INTEREST_TTL_MS;
    const transport = this.#transport;
    if (!transport) return;
    this.#encoder = new FrameEncoder(this.origin, transport.maxFrameBytes);
    transport.onFrame((raw) => this.#receive(raw));
    transport.onConnect(() => {
      this.#query = true;
      this.#confirmed.clear();
      for (const w of this.#local.keys()) this.#interest.add(w);
      this.#schedule();
    });
    this.#refreshTimer = setInterval(() => {
      for (const w of this.#local.keys()) this.#interest.add(w);
      this.#schedule();
    }, options.refreshMs ?? INTEREST_REFRESH_MS);
    this.#refreshTimer.unref();
  }

  publish(workspaceId: string, message: StreamMessage): void {
    if (this.#closed) return;
    this.#deliver(workspaceId, message);
    if (this.#transport && this.#remoteInterest(workspaceId)) {
      this.#messages.push([workspaceId, message]);
      this.#schedule();
    }
  }

  subscribe(workspaceId: string, listener: StreamListener): Subscription {
    let listeners = this.#local.get(workspaceId);
    const first = listeners === undefined;
    if (!listeners) {
      listeners = new Set();
      this.#local.set(workspaceId, listeners);
    }
    listeners.add(listener);
    let announced = Promise.resolve();
    if (this.#transport && !this.#closed) {
      if (first) {
        this.#dropped.delete(workspaceId);
        this.#interest.add(workspaceId);
        this.#schedule();
      }
      if (!this.#confirmed.has(workspaceId)) announced = this.#announcement(workspaceId);
    }
    let subscribed = true;
    return {
      announced,
      unsubscribe: () => {
        if (!subscribed) return;
        subscribed = false;
        const set = this.#local.get(workspaceId);
        set?.delete(listener);
        if (set && set.size === 0) {
          this.#local.delete(workspaceId);
          this.#confirmed.delete(workspaceId);
          if (this.#transport && !this.#closed) {
            this.#interest.delete(workspaceId);
            this.#dropped.add(workspaceId);
            this.#schedule();
          }
        }
      },
    };
  }

  wanted(workspaceId: string): boolean {
    return (
      this.#local.has(workspaceId) || (this.#transport !== undefined && this.#remoteInterest(workspaceId))
    );
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    clearInterval(this.#refreshTimer);
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    // What is queued still goes out (a dwell fired during shutdown, say), and the others learn that
    // this node's subscribers are gone.
    for (const w of this.#local.keys()) this.#dropped.add(w);
    this.#interest.clear();
    this.#flush();
    this.#closed = true;
    for (const waiters of this.#announcing.values()) for (const done of waiters) done();
    this.#announcing.clear();
    await this.#sending;
    await this.#transport?.close();
  }

  #deliver(workspaceId: string, message: StreamMessage): void {
    const listeners = this.#local.get(workspaceId);
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        listener(message);
      } catch (error) {
        this.#logger.warn({ err: error }, 'a stream listener failed');
      }
    }
  }

  #remoteInterest(workspaceId: string): boolean {
    const nodes = this.#remote.get(workspaceId);
    if (!nodes) return false;
    const now = this.#now();
    for (const [node, expires] of nodes) {
      if (expires > now) return true;
      nodes.delete(node);
    }
    this.#remote.delete(workspaceId);
    return false;
  }

  #announcement(workspaceId: string): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ANNOUNCE_WAIT_MS);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      const waiters = this.#announcing.get(workspaceId) ?? [];
      waiters.push(done);
      this.#announcing.set(workspaceId, waiters);
    });
  }

  #schedule(): void {
    if (this.#flushTimer !== undefined || this.#closed) return;
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flush();
    }, this.#flushMs);
    this.#flushTimer.unref();
  }

  /** Encodes what is queued and hands it to the transport after the frames sent before it. */
  #flush(): void {
    const encoder = this.#encoder;
    const transport = this.#transport;
    if (!encoder || !transport) return;
    const frames: string[] = [];
    if (this.#query) frames.push(...encoder.query());
    if (this.#dropped.size > 0) frames.push(...encoder.workspaces('dropped', [...this.#dropped]));
    if (this.#interest.size > 0) frames.push(...encoder.workspaces('interest', [...this.#interest]));
    if (this.#messages.length > 0) frames.push(...encoder.messages(this.#messages));
    this.#query = false;
    this.#dropped = new Set();
    this.#interest = new Set();
    this.#messages = [];
    if (frames.length === 0) return;
    this.#sending = this.#sending.then(() => transport.send(frames));
  }

  #receive(raw: string): void {
    const frame = this.#decoder.decode(raw);
    if (!frame || this.#closed) return;
    if (frame.origin === this.origin) {
      // Our own interest came back: every node listening has it queued now.
      if (frame.kind === 'interest') {
        for (const w of frame.workspaces) {
          if (this.#local.has(w)) this.#confirmed.add(w);
          const waiters = this.#announcing.get(w);
          this.#announcing.delete(w);
          for (const done of waiters ?? []) done();
        }
      }
      return;
    }
    switch (frame.kind) {
      case 'messages':
        for (const [workspaceId, message] of frame.messages) this.#deliver(workspaceId, message);
        break;
      case 'interest': {
        const expires = this.#now() + this.#ttlMs;
        for (const w of frame.workspaces) {
          const nodes = this.#remote.get(w) ?? new Map<string, number>();
          nodes.set(frame.origin, expires);
          this.#remote.set(w, nodes);
        }
        break;
      }
      case 'dropped':
        for (const w of frame.workspaces) {
          const nodes = this.#remote.get(w);
          nodes?.delete(frame.origin);
          if (nodes?.size === 0) this.#remote.delete(w);
        }
        break;
      case 'query':
        // A node (re)joined: it learns our interests with the next flush.
        if (this.#local.size > 0) {
          for (const w of this.#local.keys()) this.#interest.add(w);
          this.#schedule();
        }
        break;
    }
  }
}
