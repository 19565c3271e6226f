/** Schemas of the live stream (ADR 016): the stream token, the query, and the messages' payloads. */
import { Type } from 'typebox';
import { EventSchema } from '../events/events.schemas.ts';
import { component } from '../http/components.ts';
import { Id, Nullable, StringEnum } from '../http/schemas.ts';
import { STREAM_TOKEN_TTL_SECONDS } from './stream.service.ts';
import { TOPICS } from './stream-messages.ts';

export const StreamTokenSchema = component(
  'StreamToken',
  Type.Object(
    {
      token: Type.String({
        description: 'Pass as `GET /stream?token=…`; valid once its session or API key still is',
      }),
      expires_at: Type.String({ format: 'date-time', description: 'Connect before this moment' }),
      expires_in: Type.Integer({ description: `Seconds (${STREAM_TOKEN_TTL_SECONDS})` }),
    },
    { description: 'A short-lived token for EventSource, which cannot send headers' },
  ),
);

export const StreamReadyMessageSchema = component(
  'StreamReadyMessage',
  Type.Object(
    {
      workspace_id: Id,
      topics: Type.Array(StringEnum(TOPICS), { description: 'The topics this stream carries' }),
    },
    { description: '`data` of the first message, `event: ready`' },
  ),
);

export const StreamLocationMessageSchema = component(
  'StreamLocationMessage',
  Type.Object(
    {
      device_id: Id,
      external_id: Nullable(Type.String()),
      name: Type.String(),
      lng: Type.Number(),
      lat: Type.Number(),
      accuracy: Nullable(Type.Number({ description: 'Metres' })),
      recorded_at: Type.String({ format: 'date-time', description: "The location's timestamp" }),
      inside_geofence_ids: Type.Array(Id, { description: 'The enabled geofences containing it' }),
    },
    {
      description:
        "`data` of `event: location`: a device's newest position of one commit (a batch gives one per device)",
    },
  ),
);

const TOPICS_PATTERN = `^(${TOPICS.join('|')})(,(${TOPICS.join('|')}))*$`;

export const StreamQuery = Type.Object({
  topics: Type.Optional(
    Type.String({
      pattern: TOPICS_PATTERN,
      description:
        'Comma-separated: `locations` (needs `devices:read`), `events` (needs `events:read`). Default: those ' +
        'the credentials may read; naming one they may not is 403.',
    }),
  ),
  token: Type.Optional(
    Type.String({ description: 'A stream token (POST /stream/tokens), instead of the Authorization header' }),
  ),
});

const MESSAGES = `Server-sent events (\`text/event-stream\`), UTF-8, one JSON object per \`data\` line:

- \`event: ready\`, first: \`StreamReadyMessage\` \`{workspace_id, topics}\`.
- \`event: location\` (topic \`locations\`): \`StreamLocationMessage\`, after a location commits; a batch gives one
  message per device, its newest location of the batch.
- \`event: geofence_event\` with \`id: <event record id>\` (topic \`events\`): the \`Event\` exactly as \`GET /events/{id}\`
  answers it, for enter and exit and for dwell, whether ingestion or the dwell timer fired it.
- \`: keepalive\`, a comment line, every 15 s (STREAM_KEEPALIVE_INTERVAL).

Only committed work is sent, only of the caller's workspace. Delivery is at most once and without replay:
\`Last-Event-ID\` is ignored. After \`ready\`, read \`GET /devices/positions\` for the current positions and apply
messages newer than a device's \`recorded_at\`; do the same after every reconnect. The stream ends when the server
shuts down, when the login session or API key is revoked (checked at each keepalive) or when the client reads too
slowly; reconnect with a new stream token.`;

/** The 200 answer: an event stream; its messages' schemas are listed under `x-stream-messages`. */
export const StreamResponse = {
  description: 'The event stream',
  content: {
    'text/event-stream': {
      schema: Type.String({
        description: MESSAGES,
        'x-stream-messages': {
          ready: StreamReadyMessageSchema,
          location: StreamLocationMessageSchema,
          geofence_event: EventSchema,
        },
      }),
    },
  },
};
