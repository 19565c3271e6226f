/**
 * Graceful shutdown for keep-alive clients: once closing starts, every response (including those
 * of requests already in flight) carries `Connection: close`, so the socket ends right after it
 * instead of holding `server.close()` open until the keep-alive timeout.
 */
import type { FastifyInstance } from 'fastify';

export function registerGracefulClose(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
}
