/**
 * The reference for bench:http: a bare Fastify 5 hello-world with no plugins, no logging and
 * Fastify's defaults. `/echo` answers any body; `/register` takes the same request as the full
 * stack's POST case with the same body schema, so Fastify's own validation rejects it (400, its
 * default error handler and error body): the like-for-like reference for "validation → error".
 */
import Fastify from 'fastify';
import { RegisterBody } from '../../src/auth/auth.schemas.ts';

const app = Fastify({ logger: false });
app.get('/healthz', async () => ({ status: 'ok' }));
app.post('/echo', async (request) => ({ received: request.body }));
app.post('/register', { schema: { body: RegisterBody } }, async () => ({ created: true }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
process.stdout.write('ready\n');
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
