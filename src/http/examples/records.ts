/**
 * Example records of the OpenAPI document, one per resource, shared by the operation examples so
 * a geofence looks the same wherever it appears. Each example is checked against its own schema
 * by test/http/openapi-examples.test.ts.
 */
import { DEFAULT_PLANS } from '../../billing/plans.ts';
import { EXAMPLE_POLYGON } from '../../geofences/geofences.schemas.ts';
import { USER_AGENT } from '../../webhooks/delivery-sender.ts';
import { signBody } from '../../webhooks/signature.ts';

export const ids = {
  user: '0197a0c2-3b10-7c41-8d2e-5f6a7b8c9d01',
  otherUser: '0197a0c2-3b10-7c41-8d2e-5f6a7b8c9d02',
  workspace: '0197a0c2-3b11-7a52-9e3f-6a7b8c9d0e11',
  apiKey: '0197a0c2-3b12-7b63-8f40-7b8c9d0e1f21',
  notification: '0197a0c2-3b13-7c74-9051-8c9d0e1f2031',
  invitation: '0197a0c2-3b14-7d85-8162-9d0e1f203141',
  geofence: '0197a0c2-3b15-7e96-9273-0e1f20314151',
  otherGeofence: '019cdad0-1a00-7e96-9273-0e1f20314152',
  device: '0197a0c2-3b16-7fa7-8384-1f2031415161',
  otherDevice: '0197a0c2-3b16-7fa7-8384-1f2031415162',
  location: '0197a0c2-3b17-70b8-9495-203141516171',
  event: '0197a0c2-3b18-71c9-85a6-314151617181',
  session: '0197a0c2-3b19-72da-96b7-415161718191',
  webhook: '0197a0c2-3b1a-73eb-87c8-5161718191a1',
  delivery: '0197a0c2-3b1b-74fc-98d9-61718191a1b1',
  deadLetter: '0197a0c2-3b1c-750d-89ea-718191a1b1c1',
  invoice: '0197a0c2-3b1d-761e-9afb-8191a1b1c1d1',
};

const CREATED = '2026-03-10T12:00:00.000Z';
const UPDATED = '2026-03-10T12:05:00.000Z';
/** The location's timestamp: 2026-03-10T12:10:00Z is epoch second 1773144600. */
const FIX_TIME = '2026-03-10T12:10:00.000Z';

export const tokenPair = {
  access_token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTk3YTBjMiJ9.c2lnbmF0dXJl',
  refresh_token: 'eyJhbGciOiJIUzI1NiJ9.eyJ0eXAiOiJyZWZyZXNoIn0.c2lnbmF0dXJl',
  expires_in: 3600,
  token_type: 'Bearer',
};

export const user = {
  id: ids.user,
  email: 'ada@example.com',
  name: 'Ada Lovelace',
  email_verified: true,
  created_at: CREATED,
};

export const workspace = {
  id: ids.workspace,
  name: 'Acme Logistics',
  settings: { access_token_ttl_seconds: 3600 },
  role: 'owner',
  created_at: CREATED,
  updated_at: UPDATED,
};

export const member = {
  user_id: ids.otherUser,
  email: 'grace@example.com',
  name: 'Grace Hopper',
  role: 'admin',
  joined_at: UPDATED,
};

export const invitation = {
  id: ids.invitation,
  email: 'linus@example.com',
  role: 'member',
  invited_by: { user_id: ids.user, email: 'ada@example.com', name: 'Ada Lovelace' },
  created_at: UPDATED,
  expires_at: '2026-03-17T12:05:00.000Z',
};

export const apiKey = {
  id: ids.apiKey,
  name: 'Fleet tracker',
  scopes: ['locations:write', 'devices:read'],
  prefix: 'gf_live_a1b2',
  created_at: CREATED,
  last_used_at: UPDATED,
  expires_at: null,
};

export const notification = {
  id: ids.notification,
  type: 'quota.threshold',
  title: 'Event usage at 80% of your monthly quota',
  body: '8,000 of 10,000 events used this month.',
  data: { threshold: 80, used: 8000, quota: 10000 },
  read: false,
  created_at: UPDATED,
};

export const accountSettings = {
  timezone: 'Europe/Berlin',
  email_notifications: true,
  notify_on: ['dlq', 'quota', 'api_key'],
};

export const polygon = EXAMPLE_POLYGON;

export const geofence = {
  id: ids.geofence,
  workspace_id: ids.workspace,
  name: 'Berlin depot',
  description: 'Loading yard and gate',
  external_id: 'depot-berlin',
  geometry: polygon,
  metadata: { region: 'north' },
  enabled: true,
  bbox: [13.3777, 52.5155, 13.3795, 52.5163],
  dwell_seconds: null,
  exit_buffer_m: null,
  max_accuracy_m: null,
  created_at: CREATED,
  updated_at: UPDATED,
};

export const point = { type: 'Point', coordinates: [13.3785, 52.5159] };

export const device = {
  id: ids.device,
  workspace_id: ids.workspace,
  name: 'Truck 7',
  external_id: 'truck-7',
  user_id: 'driver-42',
  metadata: { plate: 'B-GF 707' },
  last_location: { point, timestamp: FIX_TIME, accuracy: 5 },
  last_seen_at: FIX_TIME,
  inside_geofence_ids: [ids.geofence],
  created_at: CREATED,
  updated_at: UPDATED,
};

export const location = {
  id: ids.location,
  device_id: ids.device,
  session_id: ids.session,
  point,
  timestamp: FIX_TIME,
  accuracy: 5,
  speed: 8.3,
  heading: 90,
  altitude: null,
  metadata: { trip: 'T-1001' },
  out_of_order: false,
  received_at: '2026-03-10T12:10:01.000Z',
};

export const event = {
  id: ids.event,
  event_id: `${ids.geofence}_enter_1773144600`,
  event_type: 'enter',
  event: 'geofence.enter',
  device_id: ids.device,
  user_id: 'driver-42',
  geofence_id: ids.geofence,
  geofence_name: 'Berlin depot',
  point,
  location_id: ids.location,
  session_id: ids.session,
  occurred_at: FIX_TIME,
  created_at: '2026-03-10T12:10:01.000Z',
  metadata: { geofence_metadata: { region: 'north' }, event_metadata: { trip: 'T-1001' } },
};

/** The `dwell` of the same visit (contract §4.5), with a geofence `dwell_seconds` of 600. */
export const dwellEvent = {
  ...event,
  id: '0197a0c2-3b18-71c9-85a6-314151617182',
  event_id: `${ids.geofence}_dwell_1773145200`,
  event_type: 'dwell',
  event: 'geofence.dwell',
  occurred_at: '2026-03-10T12:20:00.000Z',
  created_at: '2026-03-10T12:20:00.150Z',
};

/** The devices inside the geofence: Truck 7 since its enter above, a van there for longer. */
export const devicesInside = [
  {
    device_id: ids.device,
    name: device.name,
    external_id: device.external_id,
    user_id: device.user_id,
    entered_at: FIX_TIME,
    dwelling: false,
    last_seen_at: FIX_TIME,
    last_location: device.last_location,
  },
  {
    device_id: ids.otherDevice,
    name: 'Van 3',
    external_id: 'van-3',
    user_id: null,
    entered_at: '2026-03-10T11:02:00.000Z',
    dwelling: true,
    last_seen_at: '2026-03-10T12:09:30.000Z',
    last_location: {
      point: { type: 'Point', coordinates: [13.3781, 52.5157] },
      timestamp: '2026-03-10T12:09:30.000Z',
      accuracy: 12,
    },
  },
];

export const trackingSession = {
  id: ids.session,
  device_id: ids.device,
  status: 'active',
  started_at: UPDATED,
  ended_at: null,
  metadata: { trip: 'T-1001' },
  summary: {
    location_count: 12,
    distance_m: 1843.6,
    duration_s: 300,
    event_count: 1,
    geofence_ids_visited: [ids.geofence],
  },
};

export const webhook = {
  id: ids.webhook,
  name: 'Dispatch system',
  url: 'https://hooks.example.com/geofence',
  method: 'POST',
  content_type: 'application/json',
  timeout_seconds: 30,
  headers: { 'X-Team': 'dispatch' },
  rate_limit_per_minute: 60,
  events: ['geofence.enter', 'geofence.exit'],
  geofence_ids: null,
  enabled: true,
  created_at: CREATED,
  updated_at: UPDATED,
};

export const webhookSecret = { secret: 'whsec_3q2+7wHkLmN0pQrStUvWxYz1' };

export const delivery = {
  id: ids.delivery,
  webhook_id: ids.webhook,
  geofence_id: ids.geofence,
  event_type: 'geofence.enter',
  event_id: event.event_id,
  url: webhook.url,
  method: 'POST',
  status: 'success',
  response_status_code: 200,
  response_status: 200,
  response_time_ms: 84.2,
  error_message: null,
  attempt_count: 2,
  retry_count: 1,
  idempotency_key: ids.delivery,
  created_at: '2026-03-10T12:10:01.000Z',
  delivered_at: '2026-03-10T12:11:02.000Z',
  next_retry_at: null,
};

/** The body the example delivery sends (seed §6.3), signed below with the example secret. */
export const deliveryBody = JSON.stringify({
  id: ids.delivery,
  event: 'geofence.enter',
  timestamp: FIX_TIME,
  data: {
    event_id: event.event_id,
    user_id: event.user_id,
    device_id: ids.device,
    geofence_id: ids.geofence,
    geofence_name: event.geofence_name,
    event_type: 'enter',
    point,
    metadata: event.metadata,
  },
});

function sentHeaders(attempt: number): Record<string, string> {
  const signature = signBody(deliveryBody, webhookSecret.secret);
  return {
    'X-Team': '•••',
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-svc-signature': signature,
    'x-svc-event-id': event.event_id,
    'x-idempotency-key': ids.delivery,
    'x-svc-attempt': String(attempt),
    'x-geofencing-service-signature': signature,
    'x-geofencing-service-event-id': event.event_id,
    'x-geofencing-service-attempt': String(attempt),
  };
}

export const attempts = [
  {
    n: 1,
    started_at: '2026-03-10T12:10:01.000Z',
    duration_ms: 30001.5,
    response_status_code: null,
    error_message: 'Timed out after 30 s',
    response_body_excerpt: null,
    request_headers: sentHeaders(1),
  },
  {
    n: 2,
    started_at: '2026-03-10T12:11:01.900Z',
    duration_ms: 84.2,
    response_status_code: 200,
    error_message: null,
    response_body_excerpt: '{"ok":true}',
    request_headers: sentHeaders(2),
  },
];

export const deadLetter = {
  dlq_id: ids.deadLetter,
  delivery_id: ids.delivery,
  webhook: { id: ids.webhook, name: webhook.name, url: webhook.url },
  event_type: 'geofence.exit',
  event_id: `${ids.geofence}_exit_1773148200`,
  error_message: 'HTTP 503 Service Unavailable',
  retry_count: 5,
  last_attempt_at: '2026-03-10T18:12:00.000Z',
  queued_at: '2026-03-10T18:12:00.000Z',
  requeued: false,
};

export const plans = DEFAULT_PLANS;
const freePlan = DEFAULT_PLANS[0];

export const subscription = {
  plan: 'pro',
  status: 'active',
  current_period_start: '2026-03-01T00:00:00.000Z',
  current_period_end: '2026-04-01T00:00:00.000Z',
  limits: DEFAULT_PLANS[1]?.limits ?? freePlan?.limits,
};

export const usage = {
  period_start: '2026-03-01T00:00:00.000Z',
  period_end: '2026-04-01T00:00:00.000Z',
  events: { used: 8000, quota: 10000, percent: 80 },
  api_requests: { used_this_hour: 42, limit: 100 },
  geofences: { count: 12, limit: 50 },
  webhooks: { count: 1, limit: 5 },
  devices: { count: 30, limit: 100 },
  daily: [{ date: '2026-03-10', events: 420, api_requests: 1380 }],
};

export const invoice = {
  id: ids.invoice,
  period_start: '2026-02-01T00:00:00.000Z',
  period_end: '2026-03-01T00:00:00.000Z',
  plan: 'pro',
  amount_cents: 5_000,
  line_items: [
    {
      kind: 'subscription',
      description: 'Pro plan, 2026-02',
      quantity: 1,
      unit_amount_cents: 4_900,
      amount_cents: 4_900,
    },
    {
      kind: 'event_overage',
      description: '1500 events over the 250000 included (2 × 1,000 events)',
      quantity: 2,
      unit_amount_cents: 50,
      amount_cents: 100,
    },
  ],
  status: 'open',
};

/** The list envelope of `items` (contract §1), as a first page holding everything. */
export function listOf(...items: unknown[]) {
  return {
    results: items,
    pagination: { total: items.length, limit: 50, offset: 0, has_more: false },
  };
}
