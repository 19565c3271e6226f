/**
 * One open GET /stream (ADR 016): the response body is a stream this object writes SSE text into.
 * Messages arriving in one turn of the event loop leave in one write. Every `keepaliveMs` a comment
 * line keeps proxies from closing an idle connection, and `check` is asked whether the caller's
 * credentials still hold (a revoked session or key ends the stream). A client that reads too slowly
 * to keep up (MAX_BUFFERED_BYTES waiting) is disconnected rather than buffered without bound: it
 * reconnects and reads the snapshot again.
 */
import type { ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { KEEPALIVE_TEXT } from './stream-messages.ts';

export const MAX_BUFFERED_BYTES = 1024 * 1024;

/** Why a stream ended: the client left, the server is shutting down, credentials revoked, too slow. */
export type CloseReason = 'client' | 'shutdown' | 'revoked' | 'slow';

export interface SseOptions {
  keepaliveMs: number;
  /** Asked at each keepalive; false ends the stream. */
  check?: () => Promise<boolean>;
  maxBufferedBytes?: number;
}

export class SseConnection {
  /** The response body. */
  readonly body = new PassThrough();
  readonly #res: ServerResponse;
  readonly #options: SseOptions;
  readonly #closeHandlers: Array<(reason: CloseReason) => void> = [];
  #pending: string[] = [];
  #pendingBytes = 0;
  #started = false;
  #scheduled = false;
  #closed = false;
  #checking = false;
  #keepalive: NodeJS.Timeout | undefined;

  constructor(res: ServerResponse, options: SseOptions) {
    this.#res = res;
    this.#options = options;
    // Fastify destroys the body when the client goes; an end() after that must not throw.
    this.body.on('error', () => {});
    // The client went away (or the response ended, after one of the closes below).
    res.once('close', () => this.close('client'));
  }

  get closed(): boolean {
    return this.#closed;
  }

  onClose(handler: (reason: CloseReason) => void): void {
    this.#closeHandlers.push(handler);
  }

  /** Queues SSE text; before `start` it waits behind the first message. */
  send(text: string): void {
    if (this.#closed) return;
    this.#pending.push(text);
    this.#pendingBytes += text.length;
    if (this.#started) this.#schedule();
  }

  /** Writes `first` (the `ready` message), then whatever was queued meanwhile, and starts the keepalive. */
  start(first: string): void {
    if (this.#closed || this.#started) return;
    this.#started = true;
    this.#pending.unshift(first);
    this.#pendingBytes += first.length;
    this.#flush();
    this.#keepalive = setInterval(() => this.#tick(), this.#options.keepaliveMs);
    this.#keepalive.unref();
  }

  /** Ends the response; idempotent (the first reason counts). */
  close(reason: CloseReason): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#keepalive);
    this.#pending = [];
    this.body.end();
    for (const handler of this.#closeHandlers) handler(reason);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#closed || this.#pending.length === 0) return;
    const waiting = this.#pendingBytes + this.body.writableLength + this.body.readableLength;
    if (waiting + this.#res.writableLength > (this.#options.maxBufferedBytes ?? MAX_BUFFERED_BYTES)) {
      this.close('slow');
      return;
    }
    const text = this.#pending.length === 1 ? (this.#pending[0] as string) : this.#pending.join('');
    this.#pending = [];
    this.#pendingBytes = 0;
    this.body.write(text);
  }

  #tick(): void {
    this.send(KEEPALIVE_TEXT);
    const check = this.#options.check;
    if (!check || this.#checking) return;
    this.#checking = true;
    check()
      .then(
        (ok) => {
          if (!ok) this.close('revoked');
        },
        // A check that could not be made (the database briefly away) keeps the stream.
        () => undefined,
      )
      .finally(() => {
        this.#checking = false;
      });
  }
}
