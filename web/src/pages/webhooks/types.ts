/** The records of the webhooks area and the values their filters take. */
import type { Schemas } from '../../api/client.ts';

export type Webhook = Schemas['Webhook'];
export type WebhookMethod = Webhook['method'];
export type SubscribableEvent = Webhook['events'][number];
export type Delivery = Schemas['Delivery'];
export type DeliveryStatus = Delivery['status'];
export type DeliveryEventType = Delivery['event_type'];
export type DeadLetter = Schemas['DeadLetterEntry'];
export type DeadLetterStats = Schemas['DeadLetterStats'];

export interface Attempt {
  n: number;
  started_at: string;
  duration_ms: number;
  response_status_code: number | null;
  error_message: string | null;
  response_body_excerpt: string | null;
  request_headers: Record<string, string> | null;
}

export type DeliveryDetail = Delivery & { request_body: string | null; attempts: Attempt[] };

export interface BulkRetryAnswer {
  retried: Array<{ dlq_id: string; delivery_id: string }>;
  failed: Array<{ dlq_id: string; error_code: string; detail: string }>;
}

export const METHODS: readonly WebhookMethod[] = ['POST', 'PUT', 'PATCH', 'GET'];
export const SUBSCRIBABLE: readonly SubscribableEvent[] = [
  'geofence.enter',
  'geofence.exit',
  'geofence.dwell',
];
export const EVENT_TYPES: readonly DeliveryEventType[] = [...SUBSCRIBABLE, 'webhook.test'];
export const STATUSES: readonly DeliveryStatus[] = ['pending', 'success', 'failed'];
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'none'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** What each event type means, for the subscription checkboxes. */
export const EVENT_HINTS: Record<SubscribableEvent, string> = {
  'geofence.enter': 'a device enters a geofence',
  'geofence.exit': 'a device leaves a geofence',
  'geofence.dwell': "a device stays inside for the geofence's dwell time",
};
