/**
 * The live stream (ADR 016): POST /stream/tokens for EventSource clients, GET /stream itself.
 * Open streams are ended when the server starts closing, so a graceful shutdown never waits on
 * them (their responses carry `Connection: close`: the socket goes with the stream).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.ts';
import type { JwtTokens } from '../auth/jwt-tokens.ts';
import { principalOf } from '../auth/route-auth.ts';
import { describedComponent } from '../http/components.ts';
import { ErrorSchema, errorResponses } from '../http/schemas.ts';
import { DomainError } from '../shared/errors.ts';
import { SseConnection } from './sse-connection.ts';
import { StreamQuery, StreamResponse, StreamTokenSchema } from './stream.schemas.ts';
import { issueStreamToken, mayRead, STREAM_SCOPES, streamTopics } from './stream.service.ts';
import type { StreamHub } from './stream-hub.ts';
import { readyText, sseText, topicOf } from './stream-messages.ts';

export interface StreamRoutesContext {
  hub: StreamHub;
  tokens: JwtTokens;
  authenticator: Authenticator;
  keepaliveMs: number;
  logger: Pick<Logger, 'warn'>;
}

const tags = ['stream'];

export async function streamRoutes(fastify: FastifyInstance, ctx: StreamRoutesContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const open = new Set<SseConnection>();
  app.addHook('preClose', async () => {
    for (const connection of open) connection.close('shutdown');
  });

  app.post(
    '/stream/tokens',
    {
      config: { auth: { scope: null, anyScope: STREAM_SCOPES } },
      schema: {
        operationId: 'createStreamToken',
        tags,
        summary: 'A 60-second token to open the event stream with EventSource',
        description:
          'EventSource cannot send headers: pass the token as `GET /stream?token=…`. It names the workspace, the ' +
          'login session or API key, and the stream scopes the caller holds (`devices:read`, `events:read`); the ' +
          'session or key must still be valid when the stream opens.',
        response: { 201: StreamTokenSchema, ...errorResponses(401, 403) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await issueStreamToken(ctx.tokens, principalOf(request))),
  );

  app.get(
    '/stream',
    {
      config: { auth: { scope: null, anyScope: STREAM_SCOPES, streamToken: true } },
      schema: {
        operationId: 'openStream',
        tags,
        summary: "The workspace's live positions and geofence events (server-sent events)",
        description:
          'Credentials: `?token=` (a stream token) or the usual `Authorization`/`X-API-Key` header (fetch ' +
          'streaming). Bad or expired credentials are a JSON 401 before any stream byte.',
        querystring: StreamQuery,
        response: {
          200: StreamResponse,
          ...errorResponses(403),
          401: describedComponent(ErrorSchema, 'Missing, invalid or expired credentials or stream token'),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const topics = streamTopics(principal, request.query.topics);
      const carried = new Set(topics);
      const workspaceId = principal.workspaceId;
      const connection = new SseConnection(reply.raw, {
        keepaliveMs: ctx.keepaliveMs,
        // The session or key as it stands now still reads every topic of this stream.
        check: async () => {
          try {
            const now = await ctx.authenticator.current(principal);
            return topics.every((t) => mayRead(now, t));
          } catch (error) {
            if (error instanceof DomainError) return false;
            ctx.logger.warn({ err: error }, 'stream: could not check the credentials of an open stream');
            return true;
          }
        },
      });
      const subscription = ctx.hub.subscribe(workspaceId, (message) => {
        if (carried.has(topicOf(message))) connection.send(sseText(message));
      });
      open.add(connection);
      const openedAt = performance.now();
      connection.onClose((reason) => {
        subscription.unsubscribe();
        open.delete(connection);
        // Most streams end with the client leaving, which Fastify's request log line never sees.
        request.log.info(
          { route: '/api/v1/stream', reason, durationMs: Math.round(performance.now() - openedAt) },
          'stream ended',
        );
      });
      // The other nodes know of this stream before it says `ready` (at most a second's wait).
      await subscription.announced;
      connection.start(readyText(workspaceId, topics));
      // The schema documents the text; the body is the stream that carries it.
      return reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache, no-transform')
        .header('x-accel-buffering', 'no')
        .header('connection', 'close')
        .send(connection.body as never);
    },
  );
}
