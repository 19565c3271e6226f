/**
 * Sends JSON text that a route's own serializer produced earlier (a cached body): Fastify passes a
 * string payload through untouched, so it is not serialised again. The plain `FastifyReply` view
 * drops the route's typed body, which a string would not satisfy.
 */
import type { FastifyReply } from 'fastify';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'; // what Fastify sends for serialised bodies

export function sendJsonText(reply: FastifyReply, json: string): FastifyReply {
  return reply.type(JSON_CONTENT_TYPE).send(json);
}

/** The JSON text of `body` as the route's response schema serialises it for the reply's status. */
export function serializeBody(reply: FastifyReply, body: unknown): string {
  return String(reply.serialize(body));
}
