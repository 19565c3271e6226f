/**
 * What fault tests need around server processes: steady location traffic that records every
 * answer (status, time taken, body), and a webhook receiver that verifies each request's signature
 * and counts deliveries by their idempotency key (a key seen twice is a delivery sent twice).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/index.ts';

export interface Answer {
  device: string;
  node: string;
  status: number;
  /** Milliseconds from sending the request to reading the whole answer. */
  ms: number;
  startedAt: number;
  retryAfter: string | null;
  body: unknown;
  /** A network failure or timeout instead of an answer. */
  failure?: string;
}

export interface StoredAnswer {
  location: { id: string; device_id: string };
  events: Array<{ event_id: string; device_id: string; geofence_id: string; event_type: string }>;
}

export type TrafficNodes =
  | ReadonlyArray<{ name: string; base: string }>
  | (() => ReadonlyArray<{ name: string; base: string }>);

/** Inside and outside the circle every fault test draws: each location crosses its edge. */
export const INSIDE: [number, number] = [13.4, 52.5];
export const OUTSIDE: [number, number] = [13.45, 52.5];

/**
 * One loop per device posting locations one after another, alternately inside and outside the
 * geofence and alternately to each node, each a second after the last (so every event's seed id is
 * unique per device), until `stop()`.
 */
export class LocationTraffic {
  readonly answers: Answer[] = [];
  #running = true;
  readonly #loops: Promise<void>[];

  /**
   * `nodes` is asked before each request, so a test may replace a node that it restarted; a
   * request to a node that is gone is recorded as a failure (status 0), not an acknowledgement.
   */
  constructor(
    nodes: TrafficNodes,
    apiKey: string,
    devices: readonly string[],
    options: { pauseMs?: number } = {},
  ) {
    const firstFix = Date.now() - 3_600_000;
    const pauseMs = options.pauseMs ?? 20;
    const current = typeof nodes === 'function' ? nodes : () => nodes;
    this.#loops = devices.map(async (device, d) => {
      for (let i = 0; this.#running; i++) {
        const all = current();
        const node = all[(i + d) % all.length] as { name: string; base: string };
        const timestamp = new Date(firstFix + i * 1000).toISOString();
        const coordinates = i % 2 === 0 ? INSIDE : OUTSIDE;
        this.answers.push(await post(node, apiKey, device, { coordinates, timestamp }));
        // A breath between requests keeps the load steady rather than flat out.
        await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }

  /** The answers to requests sent within [from, to) (real time, ms). */
  between(from: number, to: number): Answer[] {
    return this.answers.filter((a) => a.startedAt >= from && a.startedAt < to);
  }
}

async function post(
  node: { name: string; base: string },
  apiKey: string,
  device: string,
  body: unknown,
): Promise<Answer> {
  const startedAt = Date.now();
  const started = performance.now();
  try {
    const res = await fetch(`${node.base}/api/v1/devices/${device}/locations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify(body),
      // Far beyond the contract's 2 s: a request still unanswered then is a hang, recorded as such.
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    return {
      device,
      node: node.name,
      status: res.status,
      ms: performance.now() - started,
      startedAt,
      retryAfter: res.headers.get('retry-after'),
      body: text ? JSON.parse(text) : undefined,
    };
  } catch (error) {
    return {
      device,
      node: node.name,
      status: 0,
      ms: performance.now() - started,
      startedAt,
      retryAfter: null,
      body: undefined,
      failure: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Fails unless every answer is a 2xx or the contract's 503, none hung, none failed. */
export function assertOnlyStoredOr503(answers: readonly Answer[], boundMs: number): void {
  const failures = answers.filter((a) => a.failure !== undefined);
  assert.deepEqual(failures.slice(0, 5), [], 'every request got an answer');
  const other = answers.filter((a) => a.status !== 201 && a.status !== 503);
  assert.deepEqual(
    other.slice(0, 5).map((a) => [a.status, a.body]),
    [],
    'every answer is 201 or 503 (never a 500)',
  );
  for (const a of answers.filter((x) => x.status === 503)) {
    assert.equal((a.body as { error_code?: unknown }).error_code, 'SERVICE_UNAVAILABLE');
    assert.ok(Number(a.retryAfter) >= 1, 'a 503 says when to retry');
  }
  const slowest = answers.reduce((max, a) => Math.max(max, a.ms), 0);
  assert.ok(slowest < boundMs, `every answer within ${boundMs} ms (slowest ${Math.round(slowest)} ms)`);
}

export interface Delivery {
  key: string;
  deviceId: string;
  eventId: string;
}

/** A webhook endpoint that accepts only correctly signed requests (401 otherwise). */
export class SigningReceiver {
  readonly deliveries: Delivery[] = [];
  unsigned = 0;
  /** The signing secrets of the webhooks that send here; a request must verify with one of them. */
  readonly secrets: string[] = [];
  /** How long each answer takes: deliveries are still in flight when a test stops a node. */
  delayMs = 0;
  readonly #server: http.Server;

  private constructor(server: http.Server) {
    this.#server = server;
  }

  static async start(): Promise<SigningReceiver> {
    const server = http.createServer();
    const receiver = new SigningReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const signature = req.headers['x-svc-signature'] as string | undefined;
        if (!receiver.secrets.some((secret) => verifySignature(raw, signature, secret))) {
          receiver.unsigned += 1;
          res.writeHead(401).end();
          return;
        }
        const payload = JSON.parse(raw.toString('utf8')) as {
          id: string;
          data: { device_id: string; event_id: string };
        };
        receiver.deliveries.push({
          key: payload.id,
          deviceId: payload.data.device_id,
          eventId: payload.data.event_id,
        });
        setTimeout(() => res.writeHead(200).end('ok'), receiver.delayMs);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /** Deliveries whose idempotency key arrived more than once. */
  duplicates(): string[] {
    const seen = new Set<string>();
    const twice = new Set<string>();
    for (const d of this.deliveries) (seen.has(d.key) ? twice : seen).add(d.key);
    return [...twice];
  }

  /** Resolves once every `device|event_id` of `wanted` has arrived; fails after `timeoutMs`. */
  async waitForAll(wanted: ReadonlySet<string>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const got = new Set(this.deliveries.map((d) => `${d.deviceId}|${d.eventId}`));
      const missing = [...wanted].filter((w) => !got.has(w));
      if (missing.length === 0) return;
      if (Date.now() > deadline) {
        assert.fail(
          `${missing.length} of ${wanted.size} events never delivered, e.g. ${missing.slice(0, 3).join(', ')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, 'close').catch(() => undefined);
  }
}

/** `device|event_id` of every event named in a 2xx answer. */
export function eventsAnswered(answers: readonly Answer[]): Set<string> {
  const out = new Set<string>();
  for (const a of answers) {
    if (a.status !== 201) continue;
    for (const e of (a.body as StoredAnswer).events) out.add(`${e.device_id}|${e.event_id}`);
  }
  return out;
}
