/**
 * Shared pieces of the delivery-engine tests: a real HTTP receiver on loopback that records every
 * request (raw body, headers, the manual clock's time at arrival) and answers as the test says, an
 * app with a signed-up user, webhooks created through the API, events produced through the real
 * location pipeline, and a worker driven round by round.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import type { Dispatcher } from 'undici';
import { createDeliveryDispatcher, createDeliveryWorker, drainOutbox } from '../../src/engine.ts';
import type { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import type { TestApp, TestAppOptions } from '../helpers/app.ts';
import {
  call,
  expectStatus,
  login,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The test app's clock (ms) when the request arrived. */
  clockMs: number;
  /** Real time (Date.now()) when the request arrived. */
  realMs: number;
}

export interface Reply {
  status?: number;
  body?: string;
  /** Real milliseconds to wait before answering. */
  delayMs?: number;
  /** Close the connection without answering. */
  destroy?: boolean;
  headers?: Record<string, string>;
}

export type Responder = (request: Received, index: number) => Reply;

export class Receiver {
  readonly requests: Received[] = [];
  respond: Responder;
  private readonly server: http.Server;
  private readonly clockMs: () => number;
  private waiters: Array<() => void> = [];

  private constructor(server: http.Server, clockMs: () => number, respond: Responder) {
    this.server = server;
    this.clockMs = clockMs;
    this.respond = respond;
  }

  static async start(clockMs: () => number = Date.now, respond: Responder = () => ({})): Promise<Receiver> {
    const server = http.createServer();
    const receiver = new Receiver(server, clockMs, respond);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => receiver.handle(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        clockMs: this.clockMs(),
        realMs: Date.now(),
      };
      const index = this.requests.length;
      this.requests.push(received);
      for (const wake of this.waiters.splice(0)) wake();
      const reply = this.respond(received, index);
      const answer = (): void => {
        if (reply.destroy) {
          req.socket.destroy();
          return;
        }
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? 'ok');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  }

  /** Resolves once at least `count` requests arrived (real time, bounded). */
  async waitFor(count: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      if (Date.now() > deadline) throw new Error(`receiver got ${this.requests.length} of ${count} requests`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}

export interface WebhookOut {
  id: string;
  name: string;
  url: string;
  method: string;
  rate_limit_per_minute: number;
  secret: string;
}

export interface DeliveryOut {
  id: string;
  webhook_id: string | null;
  geofence_id: string | null;
  event_type: string;
  event_id: string;
  url: string;
  method: string;
  status: 'pending' | 'success' | 'failed';
  response_status_code: number | null;
  response_status: number | null;
  response_time_ms: number | null;
  error_message: string | null;
  attempt_count: number;
  retry_count: number;
  idempotency_key: string;
  created_at: string;
  delivered_at: string | null;
  next_retry_at: string | null;
}

export interface AttemptOut {
  n: number;
  started_at: string;
  duration_ms: number;
  response_status_code: number | null;
  error_message: string | null;
  response_body_excerpt: string | null;
  request_headers: Record<string, string> | null;
}

export interface DeadLetterOut {
  dlq_id: string;
  delivery_id: string;
  webhook: { id: string | null; name: string; url: string };
  event_type: string;
  event_id: string;
  error_message: string;
  retry_count: number;
  last_attempt_at: string;
  queued_at: string;
  requeued: boolean;
}

export interface DeliveryHarness {
  t: TestApp;
  user: SignedUpUser;
  token: string;
  dispatcher: Dispatcher;
  worker: DeliveryWorker;
  /** A new access token after the clock moved past the old one's lifetime. */
  relogin(): Promise<void>;
  close(): Promise<void>;
}

export async function startDeliveryHarness(options: TestAppOptions = {}): Promise<DeliveryHarness> {
  const t = await startIdentityApp(options);
  const user = await signUp(t, 'hooks');
  const dispatcher = createDeliveryDispatcher(t.deps);
  const worker = createDeliveryWorker(t.deps, dispatcher);
  const harness: DeliveryHarness = {
    t,
    user,
    token: user.tokens.access_token,
    dispatcher,
    worker,
    relogin: async () => {
      harness.token = (await login(t, user.email, user.password)).access_token;
    },
    close: async () => {
      await worker.stop();
      await dispatcher.close();
      await t.close();
    },
  };
  return harness;
}

/**
 * A delivery harness and a loopback receiver for the tests of one `describe`: started before them,
 * closed after them. Read `fixture.h` and `fixture.receiver` inside the tests.
 */
export function deliveryFixture(): { h: DeliveryHarness; receiver: Receiver } {
  const fixture = {} as { h: DeliveryHarness; receiver: Receiver };
  before(async () => {
    fixture.h = await startDeliveryHarness();
    fixture.receiver = await Receiver.start(() => fixture.h.t.clock.now().getTime());
  });
  after(async () => {
    await fixture.h.close();
    await fixture.receiver.close();
  });
  return fixture;
}

export async function createWebhook(h: DeliveryHarness, body: Record<string, unknown>): Promise<WebhookOut> {
  const res = await call(h.t, '/webhooks', { token: h.token, body: { name: 'receiver', ...body } });
  return expectStatus<WebhookOut>(res, 201, 'create webhook');
}

export async function getDelivery(
  h: DeliveryHarness,
  id: string,
): Promise<DeliveryOut & { request_body: string | null; attempts: AttemptOut[] }> {
  return expectStatus(await call(h.t, `/webhooks/deliveries/${id}`, { token: h.token }), 200, 'get delivery');
}

export async function listDeliveries(
  h: DeliveryHarness,
  webhookId: string,
  query: Record<string, string> = {},
): Promise<{ results: DeliveryOut[]; pagination: { total: number; has_more: boolean } }> {
  return expectStatus(
    await call(h.t, `/webhooks/${webhookId}/deliveries`, {
      token: h.token,
      query: { limit: '200', ...query },
    }),
    200,
    'list deliveries',
  );
}

/** GET /webhooks/deliveries (every webhook of the workspace) with `query`. */
export async function listAllDeliveries(
  h: DeliveryHarness,
  query: Record<string, string> = {},
): Promise<{ results: DeliveryOut[]; pagination: { total: number; has_more: boolean } }> {
  return expectStatus(
    await call(h.t, '/webhooks/deliveries', { token: h.token, query: { limit: '200', ...query } }),
    200,
    'list all deliveries',
  );
}

/** POST /webhooks/{id}/test: the new delivery's id. */
export async function sendTest(h: DeliveryHarness, webhookId: string): Promise<string> {
  const res = await call(h.t, `/webhooks/${webhookId}/test`, { token: h.token, method: 'POST' });
  return expectStatus<{ delivery_id: string }>(res, 202, 'test delivery').delivery_id;
}

/** A circle geofence around (lng, lat) and a device; `step(inside)` posts a location in or out of it. */
export async function eventSource(h: DeliveryHarness, lng = 13.4, lat = 52.5) {
  const geofence = await createGeofence(
    h.t,
    { token: h.token },
    {
      name: 'Depot',
      geometry: circle(lng, lat, 200),
      metadata: { site: 'north' },
    },
  );
  const device = expectStatus<{ id: string }>(
    await call(h.t, '/devices', { token: h.token, body: { name: 'truck', user_id: 'driver-7' } }),
    201,
    'create device',
  );
  let seconds = 0;
  const step = async (inside: boolean): Promise<void> => {
    seconds += 1;
    const res = await call(h.t, `/devices/${device.id}/locations`, {
      token: h.token,
      body: {
        coordinates: inside ? [lng, lat] : [lng + 1, lat],
        timestamp: new Date(h.t.clock.now().getTime() - 3_600_000 + seconds * 1000).toISOString(),
        metadata: { step: seconds },
      },
    });
    expectStatus(res, 201, 'post location');
  };
  return { geofence, device, step };
}

/** Fans the outbox out to deliveries, then runs worker rounds until nothing is due. */
export async function deliverDue(h: DeliveryHarness): Promise<number> {
  await drainOutbox(h.t.deps);
  let total = 0;
  for (;;) {
    const n = await h.worker.runOnce();
    total += n;
    if (n === 0) return total;
  }
}

/** The largest number of requests inside any window [t, t + 60 s). */
export function maxPerWindow(times: number[], windowMs = 60_000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** `count` events of one device: alternately inside and outside a circle, one second apart. */
export async function produceEvents(h: DeliveryHarness, count: number): Promise<void> {
  const gates = await call(h.t, '/geofences', { token: h.token, query: { q: 'Gate' } });
  if (expectStatus<{ results: unknown[] }>(gates, 200).results.length === 0) {
    await createGeofence(h.t, { token: h.token }, { name: 'Gate', geometry: circle(5, 45, 100) });
  }
  const base = h.t.clock.now().getTime() - 3_600_000;
  const device = `device-${crypto.randomUUID()}`;
  const locations = Array.from({ length: count }, (_v, i) => ({
    device_external_id: device,
    coordinates: i % 2 === 0 ? [5, 45] : [5.5, 45],
    timestamp: new Date(base + i * 1000).toISOString(),
    metadata: { i },
  }));
  const res = await call(h.t, '/locations/batch', { token: h.token, body: { locations } });
  const body = expectStatus<{ accepted: number; events: unknown[] }>(res, 200, 'batch');
  assert.equal(body.events.length, count);
}

export function stepOf(r: Received): number {
  return (JSON.parse(r.body.toString('utf8')) as { data: { metadata: { event_metadata: { i: number } } } })
    .data.metadata.event_metadata.i;
}
