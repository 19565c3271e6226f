/**
 * The tracker routes (contract §4.6): `POST /ingest/owntracks`, `GET|POST /ingest/osmand` and
 * `POST /ingest/overland`. HTTP only: each reads the request with its adapter and hands the fixes
 * to ingest.service.ts, the same ingestion path as the JSON routes.
 *
 * These routes take what the apps send, which is not always our JSON: OsmAnd clients post forms
 * (Traccar Client 10) or nothing but a query (Traccar Client 8, GPSLogger), OwnTracks may post an
 * empty body with `Content-Type: application/json` (a cleared friend). So this plugin, and only
 * it, reads forms and takes an empty JSON body as no body. The credential may also come as HTTP
 * Basic or `?token=` here (auth/tracker-credentials.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import { presentedSecret } from '../auth/tracker-credentials.ts';
import type { EventQuota } from '../billing/event-quota.ts';
import { errorResponses } from '../http/schemas.ts';
import { BATCH_BODY_LIMIT_BYTES } from '../locations/locations.routes.ts';
import { MAX_BATCH_ITEMS } from '../locations/locations.schemas.ts';
import {
  OsmAndParams,
  OverlandBatch,
  OwnTracksAnswer,
  OwnTracksMessage,
  TraccarClientLocation,
  TrackerAnswer,
} from './ingest.schemas.ts';
import { recordTrackerPayload, type TrackerContext } from './ingest.service.ts';
import { readOsmAndParams, readTraccarJson } from './osmand.ts';
import { readOverland } from './overland.ts';
import { readOwnTracks } from './owntracks.ts';
import type { TrackerPayload } from './tracker-fix.ts';

const tags = ['trackers'];
const auth = { scope: 'locations:write' as const, deviceToken: true, urlCredential: true };
/** The adapters read and check the payload themselves (naming the client's field in a 400). */
const readByAdapter = { validatorCompiler: () => () => true };
const FORM = 'application/x-www-form-urlencoded';

const CREDENTIALS =
  'Credentials: a device token (the location is its device’s) or an API key with `locations:write` (the ' +
  'device is the one whose `external_id` the payload names, created if absent), as `Authorization: Bearer`, ' +
  '`X-API-Key`, the HTTP Basic password, or the `token` query parameter for apps that cannot set headers ' +
  '(never logged unredacted). Limits as for any ingestion (429/403).';

export async function trackerRoutes(
  fastify: FastifyInstance,
  ctx: TrackerContext & { quota?: EventQuota | undefined },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Fastify's own JSON parser (prototype-poisoning refused as everywhere), but an empty body is none.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') return done(null, undefined);
    void json(request, body as string, done);
  });
  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  /** Stores the payload for the caller; the quota gate as on the JSON routes. */
  async function store(request: FastifyRequest, payload: TrackerPayload) {
    const principal = principalOf(request);
    const workspaceId = principal.workspaceId;
    // What stores nothing (a heartbeat, a transition) is not throttled: OwnTracks would hold every
    // later message behind a refused one.
    if (payload.fixes.length > 0 || payload.issues.length > 0) await ctx.quota?.admit(workspaceId);
    const result = await recordTrackerPayload(
      ctx,
      {
        workspaceId,
        deviceId: principal.kind === 'device' ? principal.deviceId : undefined,
        secret: presentedSecret(request),
      },
      payload,
    );
    await ctx.quota?.record(workspaceId, result.events.length);
    return result;
  }

  app.post(
    '/ingest/owntracks',
    {
      config: { auth, logQueryValues: false },
      ...readByAdapter,
      schema: {
        operationId: 'ingestOwnTracks',
        tags,
        summary: 'OwnTracks (HTTP mode): one message',
        description:
          'Point OwnTracks’ HTTP mode here (Preferences → Connection → Mode HTTP, URL this address; user name ' +
          'anything, password a device token). `_type: "location"` is stored: `vel` km/h becomes m/s, `cog` the ' +
          'heading, `acc` and `alt` metres; every other field (batt, bs, conn, tid, topic, …) is kept in the ' +
          'location’s `metadata`. Other message types and an empty body store nothing. The answer is always `[]` ' +
          '(the app reads it as messages for it). With an API key, the device is the one whose `external_id` is ' +
          `\`X-Limit-D\`, else the last segment of \`topic\`, else \`tid\`. ${CREDENTIALS}`,
        body: OwnTracksMessage,
        response: { 200: OwnTracksAnswer, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const headers = request.headers;
      await store(
        request,
        readOwnTracks(request.body, {
          device: headerText(headers['x-limit-d']),
          user: headerText(headers['x-limit-u']),
        }),
      );
      return [];
    },
  );

  const osmandDescription =
    'The OsmAnd protocol, as Traccar Client and GPSLogger send it: query parameters (GET or POST), a form ' +
    'body, or Traccar Client’s JSON (version 9). `speed` in the query or form is in KNOTS (stored as m/s; the ' +
    'JSON’s `coords.speed` is m/s already); `timestamp` is epoch seconds or milliseconds or ISO 8601. Every ' +
    'other parameter (batt, charge, hdop, …) is kept in the location’s `metadata`. A request with no position ' +
    '(a heartbeat, a push-token registration) stores nothing and is answered 200. With an API key, the device ' +
    `is the one whose \`external_id\` is \`id\` (or \`deviceid\`, or the JSON's \`device_id\`). ${CREDENTIALS}`;

  app.get(
    '/ingest/osmand',
    {
      // A HEAD request must not store a location.
      exposeHeadRoute: false,
      config: { auth, logQueryValues: false },
      ...readByAdapter,
      schema: {
        operationId: 'ingestOsmAndQuery',
        tags,
        summary: 'OsmAnd protocol (Traccar Client, GPSLogger): a location as query parameters',
        description: osmandDescription,
        querystring: OsmAndParams,
        response: { 200: TrackerAnswer, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      await store(request, readOsmAndParams(queryOf(request), {}));
      return { result: 'ok' as const };
    },
  );

  app.post(
    '/ingest/osmand',
    {
      config: { auth, logQueryValues: false },
      ...readByAdapter,
      schema: {
        operationId: 'ingestOsmAnd',
        tags,
        summary: 'OsmAnd protocol (Traccar Client, GPSLogger): query, form or Traccar Client JSON',
        description: osmandDescription,
        querystring: OsmAndParams,
        body: {
          content: {
            [FORM]: { schema: OsmAndParams },
            'application/json': { schema: TraccarClientLocation },
          },
        },
        response: { 200: TrackerAnswer, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const body = request.body;
      // JSON is Traccar Client's location object (anything else there is a bad payload, 400);
      // otherwise the query, with a form body's fields over it.
      const json =
        body !== undefined && request.headers['content-type']?.startsWith('application/json') === true;
      const payload = json
        ? readTraccarJson(isJsonObject(body) ? body : {})
        : readOsmAndParams(queryOf(request), isJsonObject(body) ? body : {});
      await store(request, payload);
      return { result: 'ok' as const };
    },
  );

  app.post(
    '/ingest/overland',
    {
      config: { auth, logQueryValues: false },
      ...readByAdapter,
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      schema: {
        operationId: 'ingestOverland',
        tags,
        summary: 'Overland: a batch of GeoJSON points',
        description:
          'Point Overland’s Receiver Endpoint here and put a device token in its Access Token field (sent as ' +
          '`Authorization: Bearer`). Up to 1000 points per request (set the batch size to 1000 or fewer), stored ' +
          'all or none: `{"result": "ok"}`, which makes the app delete the batch, means every point is stored. ' +
          '`speed` is m/s and `course` degrees (−1: unknown); every other property (battery_level, motion, ' +
          'wifi, …) is kept in the location’s `metadata`; app events, visits and trips in the same array are ' +
          `skipped. With an API key, each point’s device is the one whose \`external_id\` is \`properties.device_id\`. ${CREDENTIALS}`,
        body: OverlandBatch,
        response: { 200: TrackerAnswer, ...errorResponses(400, 401, 403, 404, 413, 429) },
      },
    },
    async (request) => {
      await store(request, readOverland(request.body, MAX_BATCH_ITEMS));
      return { result: 'ok' as const };
    },
  );
}

function headerText(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}

function queryOf(request: FastifyRequest): Record<string, unknown> {
  return (request.query ?? {}) as Record<string, unknown>;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
