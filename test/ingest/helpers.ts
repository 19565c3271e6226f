/**
 * Shared pieces of the tracker-route tests (contract §4.6): the real app listening on a loopback
 * port, requests written exactly as each app writes them (method, headers, content type, raw body;
 * nothing added by a client library), a webhook receiver that answers 200 only to a request whose
 * `X-SVC-Signature` verifies with the webhook's secret, and shortcuts for device tokens, stored
 * locations and the 400 answer that names the client's field.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { verifySignature } from '../../src/webhooks/signature.ts';
import { circle, createGeofence, type GeofenceOut } from '../geofences/helpers.ts';
import type { TestAppOptions } from '../helpers/app.ts';
import { API, call, createApiKey, expectStatus, type Page } from '../helpers/identity.ts';
import type { DeviceOut, EventOut, LocationOut } from '../locations/helpers.ts';
import {
  createWebhook,
  type DeliveryHarness,
  deliverDue,
  type Received,
  Receiver,
  startDeliveryHarness,
} from '../webhooks/delivery-helpers.ts';

/** The test app's clock stands at 2026-03-10T12:00:00Z; fixes are an hour before, 10 s apart. */
export const FIX_START_MS = Date.parse('2026-03-10T11:00:00.000Z');
export function fixMs(step: number): number {
  return FIX_START_MS + step * 10_000;
}
export function fixSeconds(step: number): number {
  return fixMs(step) / 1000;
}
export function fixIso(step: number): string {
  return new Date(fixMs(step)).toISOString();
}
/** Overland's form: UTC, whole seconds, `Z`. */
export function fixIsoSeconds(step: number): string {
  return fixIso(step).replace('.000Z', 'Z');
}

/** A time in 2099: 2099-01-01T00:00:00Z as epoch seconds, and as ISO 8601. */
export const YEAR_2099_SECONDS = 4070908800;
export const YEAR_2099_ISO = '2099-01-01T00:00:00Z';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json<T = unknown>(): T;
}

export interface RawRequest {
  method: 'GET' | 'POST';
  /** Relative to /api/v1, with the query as the app writes it. */
  path: string;
  headers?: Record<string, string>;
  /** Sent as is; with no body, `Content-Length: 0` on a POST (as HttpURLConnection sends it). */
  body?: string | Buffer;
}

export interface TrackerHarness {
  h: DeliveryHarness;
  receiver: Receiver;
  port: number;
  /** The secrets of the webhooks made so far: a request verifying with one of them is answered 200. */
  secrets: string[];
  /** Requests the receiver refused because no known secret verified their signature. */
  unverified: Received[];
}

/**
 * A delivery harness listening on a loopback port and a signature-verifying receiver, for the
 * tests of one `describe`. Read `fixture.t` inside the tests.
 */
export function trackerFixture(options: TestAppOptions = {}): { t: TrackerHarness } {
  const fixture = {} as { t: TrackerHarness };
  before(async () => {
    const h = await startDeliveryHarness(options);
    const secrets: string[] = [];
    const unverified: Received[] = [];
    const receiver = await Receiver.start(
      () => h.t.clock.now().getTime(),
      (request) => {
        const signature = request.headers['x-svc-signature'];
        const header = Array.isArray(signature) ? signature[0] : signature;
        if (secrets.some((secret) => verifySignature(request.body, header, secret))) {
          return { status: 200, body: 'verified' };
        }
        unverified.push(request);
        return { status: 401, body: 'bad signature' };
      },
    );
    await h.t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (h.t.app.server.address() as AddressInfo).port;
    fixture.t = { h, receiver, port, secrets, unverified };
  });
  after(async () => {
    await fixture.t?.h.close();
    await fixture.t?.receiver.close();
  });
  return fixture;
}

/** One request over a real socket, with exactly the given headers (plus Host and framing). */
export function send(t: TrackerHarness, request: RawRequest): Promise<Answer> {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const headers: Record<string, string> = { ...request.headers };
  if (request.method === 'POST') headers['content-length'] = String(body?.length ?? 0);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: t.port,
        method: request.method,
        path: `${API}${request.path}`,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
}

/** The app answered 200 with exactly this JSON, as JSON. */
export function expectAnswer(res: Answer, expected: unknown, what: string): void {
  assert.equal(res.status, 200, `${what}: expected 200, got ${res.status} ${res.text}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: content type`);
  assert.deepEqual(res.json(), expected, `${what}: body`);
}

export interface TrackerError {
  detail: string;
  error_code: string;
  details: { errors: Array<{ type: string; loc: Array<string | number>; msg: string }> };
}

/** 400 VALIDATION_ERROR whose `details.errors` name every `loc` given (and the detail names them). */
export function expectTrackerError(
  res: Answer,
  locs: Array<Array<string | number>>,
  what: string,
): TrackerError {
  assert.equal(res.status, 400, `${what}: expected 400, got ${res.status} ${res.text}`);
  const body = res.json<TrackerError>();
  assert.equal(body.error_code, 'VALIDATION_ERROR', `${what}: ${res.text}`);
  assert.match(body.detail, /^Invalid tracker payload: /, `${what}: detail`);
  const errors = body.details?.errors;
  assert.ok(Array.isArray(errors) && errors.length > 0, `${what}: details.errors in ${res.text}`);
  for (const error of errors) {
    assert.equal(typeof error.type, 'string', `${what}: type`);
    assert.equal(typeof error.msg, 'string', `${what}: msg`);
    assert.ok(Array.isArray(error.loc), `${what}: loc`);
  }
  for (const loc of locs) {
    assert.ok(
      errors.some((e) => JSON.stringify(e.loc) === JSON.stringify(loc)),
      `${what}: no error at ${JSON.stringify(loc)} in ${res.text}`,
    );
    assert.ok(body.detail.includes(loc.join('.')), `${what}: detail names ${loc.join('.')}: ${body.detail}`);
  }
  return body;
}

export interface DeviceToken {
  id: string;
  token: string;
}

export async function newDevice(t: TrackerHarness, body: Record<string, unknown> = {}): Promise<DeviceOut> {
  const res = await call(t.h.t, '/devices', { token: t.h.token, body: { name: 'phone', ...body } });
  return expectStatus<DeviceOut>(res, 201, 'create device');
}

export async function newDeviceToken(t: TrackerHarness, deviceId: string): Promise<DeviceToken> {
  const res = await call(t.h.t, `/devices/${deviceId}/tokens`, { token: t.h.token, body: { name: 'app' } });
  return expectStatus<DeviceToken>(res, 201, 'create device token');
}

/** A device and a token of it. */
export async function trackedDevice(
  t: TrackerHarness,
  body: Record<string, unknown> = {},
): Promise<{ device: DeviceOut; token: string; tokenId: string }> {
  const device = await newDevice(t, body);
  const { id, token } = await newDeviceToken(t, device.id);
  return { device, token, tokenId: id };
}

export async function newApiKey(t: TrackerHarness, scopes: string[] = ['locations:write']): Promise<string> {
  return (await createApiKey(t.h.t, t.h.token, scopes)).key;
}

/** GET /devices/{id}/locations: the stored locations, newest first. */
export async function locationsOf(t: TrackerHarness, deviceId: string): Promise<LocationOut[]> {
  const res = await call(t.h.t, `/devices/${deviceId}/locations`, {
    token: t.h.token,
    query: { limit: '200' },
  });
  return expectStatus<Page<LocationOut>>(res, 200, 'device locations').results;
}

export async function locationCount(t: TrackerHarness, deviceId: string): Promise<number> {
  const res = await call(t.h.t, `/devices/${deviceId}/locations`, {
    token: t.h.token,
    query: { limit: '1' },
  });
  return expectStatus<Page<LocationOut>>(res, 200, 'device locations').pagination.total;
}

export async function eventsOf(t: TrackerHarness, deviceId: string): Promise<EventOut[]> {
  const res = await call(t.h.t, '/events', {
    token: t.h.token,
    query: { device_id: deviceId, limit: '200' },
  });
  return expectStatus<Page<EventOut>>(res, 200, 'events').results;
}

/** The workspace's device whose external id is this, if any. */
export async function deviceByExternalId(
  t: TrackerHarness,
  externalId: string,
): Promise<DeviceOut | undefined> {
  const res = await call(t.h.t, '/devices', { token: t.h.token, query: { limit: '200' } });
  return expectStatus<Page<DeviceOut>>(res, 200, 'devices').results.find((d) => d.external_id === externalId);
}

/** A circle geofence of radius 300 m around (lng, lat) and an enabled webhook for `geofence.enter`. */
export async function enterWatch(
  t: TrackerHarness,
  lng: number,
  lat: number,
  name: string,
): Promise<{ geofence: GeofenceOut; webhookId: string }> {
  const geofence = await createGeofence(
    t.h.t,
    { token: t.h.token },
    { name, geometry: circle(lng, lat, 300) },
  );
  const hook = await createWebhook(t.h, {
    url: t.receiver.url,
    name: `enter ${name}`,
    events: ['geofence.enter'],
    geofence_ids: [geofence.id],
  });
  t.secrets.push(hook.secret);
  return { geofence, webhookId: hook.id };
}

export interface DeliveredEvent {
  event: string;
  data: {
    event_id: string;
    device_id: string;
    geofence_id: string;
    event_type: string;
    point: { type: 'Point'; coordinates: [number, number] };
    metadata: { event_metadata: Record<string, unknown> };
  };
}

/**
 * Runs the dispatcher and the delivery worker until nothing is due, and returns the bodies the
 * receiver accepted (signature verified) for this device's events.
 */
export async function deliveredFor(t: TrackerHarness, deviceId: string): Promise<DeliveredEvent[]> {
  await deliverDue(t.h);
  assert.deepEqual(
    t.unverified.map((r) => r.headers['x-svc-signature']),
    [],
    'every delivery carried a valid signature',
  );
  return t.receiver.requests
    .map((r) => JSON.parse(r.body.toString('utf8')) as DeliveredEvent)
    .filter((body) => body.data?.device_id === deviceId);
}

/** Asserts approximately equal numbers (unit conversions). */
export function near(
  actual: number | null | undefined,
  expected: number,
  what: string,
  epsilon = 1e-6,
): void {
  assert.ok(
    typeof actual === 'number' && Math.abs(actual - expected) <= epsilon,
    `${what}: expected ≈ ${expected}, got ${actual}`,
  );
}
