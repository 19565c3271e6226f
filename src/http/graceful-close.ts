/**
 * Graceful shutdown (contract §0) on the HTTP side. Once closing starts:
 * - every response (including those of requests already in flight) carries `Connection: close`, so
 *   the socket ends right after it instead of holding `server.close()` open until the keep-alive
 *   timeout;
 * - a request that arrives on a connection still open is not started: it is answered 503
 *   `SERVICE_UNAVAILABLE` with `Retry-After`, in the contract's error shape (Fastify's own
 *   `return503OnClosing` answer has another shape), so a client or load balancer retries it on
 *   another node. Requests already started run to their end.
 */
import type { FastifyInstance } from 'fastify';

/** A restarting node is back, or another node answers, within a second or two. */
const RETRY_AFTER_SECONDS = 1;

export function registerGracefulClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs on every request, and a promise each costs more.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) {
      done();
      return;
    }
    reply
      .status(503)
      .header('Retry-After', String(RETRY_AFTER_SECONDS))
      .send({ detail: 'The server is shutting down; retry the request', error_code: 'SERVICE_UNAVAILABLE' });
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
}
