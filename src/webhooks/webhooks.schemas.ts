/**
 * Request and response schemas of /webhooks (contract §5, seed §2.3) and the record's JSON form.
 * Rules a JSON schema cannot say well (URL scheme, header names, reserved headers, private
 * targets, geofence ids of the workspace) are checked in webhooks.service.ts.
 */
import { type Static, Type } from 'typebox';
import { EVENT_NAMES, type EventName } from '../events/event-types.ts';
import { component } from '../http/components.ts';
import { Id, Nullable, PaginationQuery, StringEnum, Timestamp } from '../http/schemas.ts';
import type { Webhook } from './webhooks.repository.ts';

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH', 'GET'] as const;
/** Event types a webhook can subscribe to; `webhook.test` is sent only by the test endpoint. */
export const SUBSCRIBABLE_EVENTS = EVENT_NAMES;
export type SubscribableEvent = EventName;
/**
 * The subscription of a webhook created without `events` (contract §5): enter and exit. `dwell`
 * (§4.5) is asked for explicitly, so receivers written before it existed get nothing new.
 */
export const DEFAULT_EVENTS: SubscribableEvent[] = ['geofence.enter', 'geofence.exit'];

export const MAX_CUSTOM_HEADERS = 50;

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'http(s) address of the receiver, naming its host (`http:///x` is refused). Unless WEBHOOK_ALLOW_PRIVATE_TARGETS is true, a literal loopback, ' +
    'private, link-local, CGNAT, multicast or metadata IP address is refused (400), and a host name ' +
    'resolving to one fails the delivery attempt.',
});
const Method = (defaults: { default?: 'POST' } = {}) =>
  StringEnum(WEBHOOK_METHODS, { description: 'Delivery method (GET sends no body)', ...defaults });
/** A media type, `type/subtype` with optional parameters; no control characters (header injection). */
const ContentType = (defaults: { default?: string } = {}) =>
  Type.String({
    minLength: 3,
    maxLength: 255,
    pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+( *;[ -~]*)?$',
    description: 'Content-Type of delivery requests; the body is the JSON payload whatever this says',
    ...defaults,
  });
const TimeoutSeconds = (defaults: { default?: number } = {}) =>
  Type.Integer({ minimum: 1, maximum: 60, description: 'Per-attempt timeout, 1..60 s', ...defaults });
const RateLimit = (defaults: { default?: number } = {}) =>
  Type.Integer({
    minimum: 1,
    maximum: 10000,
    description: 'Deliveries per minute to this webhook; more wait for a later minute (not an attempt)',
    ...defaults,
  });
/**
 * `additionalProperties` with a schema rather than TypeBox's Record (patternProperties), which
 * OpenAPI 3.0 does not have.
 */
const HEADERS_DESCRIPTION =
  'Custom headers added to every delivery (name → value). Names must be valid HTTP header names; ' +
  'the headers the service sets itself (X-SVC-*, X-Geofencing-Service-*, X-Idempotency-Key, ' +
  'Content-Type, Content-Length, Host, User-Agent, and connection-level headers) cannot be set here.';
const Headers = (description = HEADERS_DESCRIPTION) =>
  Type.Unsafe<Record<string, string>>({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: 4096 },
    maxProperties: MAX_CUSTOM_HEADERS,
    description,
  });
const Events = (defaults: { default?: string[] } = {}) =>
  Type.Array(StringEnum(SUBSCRIBABLE_EVENTS), {
    minItems: 1,
    uniqueItems: true,
    description:
      'Subscribed event types (default `geofence.enter` and `geofence.exit`; `geofence.dwell` only when ' +
      "listed: one per visit that lasts the geofence's `dwell_seconds`). `webhook.test` cannot be listed: the " +
      'test endpoint sends it whatever this says.',
    ...defaults,
  });
const GeofenceIds = Nullable(
  Type.Array(Type.String({ format: 'uuid' }), {
    minItems: 1,
    maxItems: 1000,
    uniqueItems: true,
    description: 'Deliver only events of these geofences of the workspace; null = every geofence',
  }),
);

export const WebhookSchema = Type.Object({
  id: Id,
  name: Type.String(),
  url: Type.String(),
  method: Method(),
  content_type: Type.String(),
  timeout_seconds: Type.Integer(),
  headers: Type.Unsafe<Record<string, string>>({ type: 'object', additionalProperties: { type: 'string' } }),
  rate_limit_per_minute: Type.Integer(),
  events: Type.Array(StringEnum(SUBSCRIBABLE_EVENTS)),
  geofence_ids: Nullable(Type.Array(Id)),
  enabled: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
component('Webhook', WebhookSchema);

export const CreatedWebhookSchema = Type.Object(
  {
    ...WebhookSchema.properties,
    secret: Type.String({
      description: 'Signing secret (`whsec_…`); shown again only by GET /webhooks/{id}/secret',
    }),
  },
  { description: 'The new webhook with its signing secret' },
);
component('CreatedWebhook', CreatedWebhookSchema);

export const SecretSchema = Type.Object(
  { secret: Type.String({ description: 'Signing secret, `whsec_…`' }) },
  { description: 'The webhook signing secret' },
);
component('WebhookSecret', SecretSchema);

/** A `secret` field is refused like any unknown one (extra_forbidden): the service generates it. */
export const CreateWebhookBody = Type.Object(
  {
    name: Name,
    url: Url,
    method: Type.Optional(Method({ default: 'POST' })),
    content_type: Type.Optional(ContentType({ default: 'application/json' })),
    timeout_seconds: Type.Optional(TimeoutSeconds({ default: 30 })),
    headers: Type.Optional(Headers()),
    rate_limit_per_minute: Type.Optional(RateLimit({ default: 60 })),
    events: Type.Optional(Events({ default: [...DEFAULT_EVENTS] })),
    geofence_ids: Type.Optional(GeofenceIds),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

/** No defaults here: ajv fills defaults, and an absent field in a PATCH keeps its value. */
export const UpdateWebhookBody = Type.Object(
  {
    name: Type.Optional(Name),
    url: Type.Optional(Url),
    method: Type.Optional(Method()),
    content_type: Type.Optional(ContentType()),
    timeout_seconds: Type.Optional(TimeoutSeconds()),
    headers: Type.Optional(Headers(`${HEADERS_DESCRIPTION} Replaces the headers whole.`)),
    rate_limit_per_minute: Type.Optional(RateLimit()),
    events: Type.Optional(Events()),
    geofence_ids: Type.Optional(GeofenceIds),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'Partial update: absent fields keep their value' },
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const WebhookParams = Type.Object({ webhook_id: Type.String() });

export const ListWebhooksQuery = Type.Object({
  ...PaginationQuery.properties,
  enabled: Type.Optional(Type.Boolean({ description: 'Only enabled (true) or disabled (false) webhooks' })),
});

export function webhookOut(w: Webhook) {
  return {
    id: w.id,
    name: w.name,
    url: w.url,
    method: w.method,
    content_type: w.contentType,
    timeout_seconds: w.timeoutSeconds,
    headers: w.headers,
    rate_limit_per_minute: w.rateLimitPerMinute,
    events: w.events,
    geofence_ids: w.geofenceIds,
    enabled: w.enabled,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}
