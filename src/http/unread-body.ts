/**
 * An answer given before the request body has all arrived (413 over the body limit, 415, a 401
 * from the route's auth hook) must reach a client that is still sending (contract §1).
 *
 * Why Node alone does not: Fastify marks a body-parser failure `Connection: close` (so does a
 * client's own `Connection: close`), and Node then destroys the socket as soon as the answer is
 * written. The kernel answers the body bytes still arriving with a TCP reset, and a client that
 * reads only once it has sent its whole body (most do) gets ECONNRESET or EPIPE, not the 413.
 *
 * So, while a request's body is still arriving when its answer is sent:
 * - the answer keeps the connection open (Node is not told to close it), and the rest of the body
 *   is read and discarded, up to DISCARD_FACTOR × the route's body limit. The HTTP parser keeps
 *   the framing (Content-Length or chunks), so once the body has ended the connection is as
 *   reusable as after any answer; if the client had asked to close, it is closed then (FIN, with
 *   nothing unread, so no reset);
 * - past that budget, the server closes in stages as RFC 9112 §9.6 describes (Apache's and nginx's
 *   "lingering close"): its side is shut (FIN) after the answer, so the client can still read it,
 *   and what still arrives is discarded for LINGER_MS or until the client closes; only then is the
 *   socket destroyed. A client still sending after that may meet a reset, but by then the answer
 *   has been in its hands for seconds.
 * The graceful-close hook runs after this one: while shutting down, its `Connection: close` wins.
 * `app.inject` has no socket and always a complete body: nothing happens there.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** How much body, in multiples of its route's limit, is read and thrown away after an early answer. */
export const DISCARD_FACTOR = 4;

/** How long a connection closed past the budget still reads before it is destroyed. */
export const LINGER_MS = 5_000;

export function registerUnreadBodyDrain(app: FastifyInstance): void {
  const defaultLimit = app.initialConfig.bodyLimit ?? 1024 * 1024;
  app.addHook('onSend', (request, reply, payload, done) => {
    // `complete` is false on a real request whose body is still arriving (undefined under inject).
    if (request.raw.complete === false) {
      const response = reply.raw;
      // The client asked to close (or spoke HTTP/1.0): honoured once its body has ended.
      const closeAfterBody = !response.shouldKeepAlive;
      // Fastify's body parser sets this on its errors; the parser below keeps the framing instead.
      if (/^\s*close\s*$/i.test(String(reply.getHeader('connection') ?? ''))) {
        reply.removeHeader('connection');
      }
      response.shouldKeepAlive = true;
      const limit = request.routeOptions.bodyLimit ?? defaultLimit;
      discardRest(request.raw, response, limit * DISCARD_FACTOR, closeAfterBody);
    }
    done(null, payload);
  });
}

/**
 * Reads what still arrives into the void, counting; past `budget` bytes, closes in stages. It must
 * start before the answer is written: once an answer is finished Node "dumps" a body nobody reads,
 * and a dumped body is dropped inside the HTTP parser, where it can no longer be counted.
 */
function discardRest(
  request: IncomingMessage,
  response: ServerResponse,
  budget: number,
  closeAfterBody: boolean,
): void {
  let discarded = 0;
  const afterAnswer = (close: () => void) => {
    if (response.writableFinished) close();
    else response.once('finish', close);
  };
  const onData = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded <= budget) return;
    stop();
    afterAnswer(() => lingeringClose(request));
  };
  const onEnd = () => {
    stop();
    if (closeAfterBody) afterAnswer(() => request.socket.end());
  };
  const stop = () => {
    request.off('data', onData);
    request.off('end', onEnd);
    request.off('close', stop);
  };
  request.on('data', onData);
  request.once('end', onEnd);
  request.once('close', stop);
}

function lingeringClose(request: IncomingMessage): void {
  const socket = request.socket;
  if (socket.destroyed) return;
  // The answer is in the socket's buffer ('finish'); end() sends the FIN after it.
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(timer));
  // Nothing more is answered on this connection: what arrives keeps flowing into the void.
  request.resume();
}
