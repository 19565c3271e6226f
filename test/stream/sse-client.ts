/**
 * A server-sent-events client for tests: opens GET /stream over a real socket (fetch), parses the
 * text as the HTML standard says (fields `event`, `data`, `id`; `:` comments; a blank line ends a
 * message) and lets a test wait for the message it expects. Waiting is driven by arriving bytes;
 * the deadline only turns a missing message into a failure instead of a hang.
 */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

export interface SseMessage {
  /** `message` when the server named none; `comment` for a `:` line. */
  event: string;
  id?: string;
  /** The `data` lines, joined. */
  raw: string;
  /** `raw` as JSON (undefined for comments). */
  data: unknown;
}

export interface StreamCredentials {
  token?: string;
  apiKey?: string;
  /** A stream token, sent as `?token=`. */
  streamToken?: string;
}

const WAIT_MS = 5_000;

/** The base URL of an app listening on a free port of 127.0.0.1. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  assert.ok(address && typeof address === 'object');
  return `http://127.0.0.1:${address.port}`;
}

export function streamUrl(base: string, query: Record<string, string> = {}): string {
  const search = new URLSearchParams(query).toString();
  return `${base}/api/v1/stream${search ? `?${search}` : ''}`;
}

export function headersOf(credentials: StreamCredentials): Record<string, string> {
  const headers: Record<string, string> = {};
  if (credentials.token) headers.authorization = `Bearer ${credentials.token}`;
  if (credentials.apiKey) headers['x-api-key'] = credentials.apiKey;
  return headers;
}

/** A refused stream: its status and JSON body. */
export interface Refusal {
  status: number;
  contentType: string | null;
  body: { detail: unknown; error_code?: string };
}

export class SseStream {
  readonly messages: SseMessage[] = [];
  readonly headers: Headers;
  /** Resolves when the server ends the stream (or it is closed here). */
  readonly ended: Promise<void>;
  #waiters: Array<() => void> = [];
  #abort: AbortController;
  #done = false;

  private constructor(response: Response, abort: AbortController) {
    this.headers = response.headers;
    this.#abort = abort;
    this.ended = this.#read(response).finally(() => {
      this.#done = true;
      this.#wake();
    });
  }

  /** Opens a stream; a non-200 answer is returned as a Refusal with its JSON body. */
  static async open(
    base: string,
    credentials: StreamCredentials,
    query: Record<string, string> = {},
  ): Promise<SseStream | Refusal> {
    const abort = new AbortController();
    const q = credentials.streamToken ? { ...query, token: credentials.streamToken } : query;
    const response = await fetch(streamUrl(base, q), {
      headers: headersOf(credentials),
      signal: abort.signal,
    });
    if (response.status !== 200) {
      const text = await response.text();
      return {
        status: response.status,
        contentType: response.headers.get('content-type'),
        body: JSON.parse(text) as Refusal['body'],
      };
    }
    return new SseStream(response, abort);
  }

  /** Opens a stream that must succeed, and waits for its `ready` message. */
  static async connect(
    base: string,
    credentials: StreamCredentials,
    query: Record<string, string> = {},
  ): Promise<SseStream> {
    const opened = await SseStream.open(base, credentials, query);
    if (!(opened instanceof SseStream)) {
      assert.fail(`stream refused: ${opened.status} ${JSON.stringify(opened.body)}`);
    }
    await opened.next((m) => m.event === 'ready', 'ready');
    return opened;
  }

  /** The `ready` message's data (the stream was opened with `connect`). */
  get ready(): { workspace_id: string; topics: string[] } {
    const first = this.messages[0];
    assert.equal(first?.event, 'ready', 'the first message is ready');
    return first.data as { workspace_id: string; topics: string[] };
  }

  /** The messages of one event type, in order. */
  of(event: string): SseMessage[] {
    return this.messages.filter((m) => m.event === event);
  }

  /** The first message (counting from `from`) that matches; fails after WAIT_MS without one. */
  async next(match: (m: SseMessage) => boolean, what: string, from = 0): Promise<SseMessage> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const found = this.messages.slice(from).find(match);
      if (found) return found;
      if (this.#done) assert.fail(`the stream ended before ${what}; got ${this.#summary()}`);
      const left = deadline - Date.now();
      if (left <= 0) assert.fail(`no ${what} within ${WAIT_MS} ms; got ${this.#summary()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits until the server ends the stream; fails after WAIT_MS. */
  async end(what = 'the end of the stream'): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no ${what} within ${WAIT_MS} ms`)), WAIT_MS);
    });
    try {
      await Promise.race([this.ended, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    this.#abort.abort();
    return this.ended;
  }

  #summary(): string {
    return JSON.stringify(this.messages.map((m) => (m.id ? `${m.event}#${m.id}` : m.event)));
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  async #read(response: Response): Promise<void> {
    const body = response.body;
    if (!body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    let fields: { event?: string; id?: string; data: string[] } = { data: [] };
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let newline = buffer.search(/\r\n|\r|\n/);
        while (newline >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
          if (line === '') {
            if (fields.data.length > 0 || fields.event !== undefined) {
              const raw = fields.data.join('\n');
              this.messages.push({
                event: fields.event ?? 'message',
                ...(fields.id !== undefined ? { id: fields.id } : {}),
                raw,
                data: raw === '' ? undefined : JSON.parse(raw),
              });
              this.#wake();
            }
            fields = { data: [] };
          } else if (line.startsWith(':')) {
            this.messages.push({ event: 'comment', raw: line.slice(1).trimStart(), data: undefined });
            this.#wake();
          } else {
            const colon = line.indexOf(':');
            const name = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (name === 'event') fields.event = value;
            else if (name === 'data') fields.data.push(value);
            else if (name === 'id') fields.id = value;
          }
          newline = buffer.search(/\r\n|\r|\n/);
        }
      }
    } catch {
      // Aborted here, or the connection reset: the stream is over either way.
    }
  }
}
