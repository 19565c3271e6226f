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

export type Attempt = Schemas['WebhookAttempt'];
export type DeliveryDetail = Schemas['DeliveryDetail'];
export type BulkRetryAnswer = Schemas['DeadLetterBulkRetryResult'];
export type RetryJob = Schemas['DeadLetterRetryJob'];
export type WebhookHealth = Schemas['WebhookHealth'];
export type DeliveryOrigin = Delivery['origin'];

/** How the portal names each origin of a delivery. */
export const ORIGIN_LABELS: Record<DeliveryOrigin, string> = {
  subscription: 'Webhook',
  workflow: 'Workflow action',
  test: 'Test',
  dlq_retry: 'Dead-letter retry',
  resend: 'Resend',
};

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
