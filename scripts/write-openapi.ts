/**
 * Writes the OpenAPI 3.0 document to a file (default `openapi.json`, or the first argument) without
 * starting a server: the app is built on an in-memory SQLite database, the document read from
 * `@fastify/swagger`, and everything closed again. For client generators (its named components
 * become their types, ADR 013) and API reviews.
 */
import fs from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { createLogger } from '../src/logger.ts';

const target = process.argv[2] ?? 'openapi.json';
const config = loadConfig({
  ...process.env,
  DATABASE_URL: 'sqlite::memory:',
  // Fixed secrets: the document does not depend on them, and nothing is written to the data folder.
  JWT_SECRET: 'openapi-writer-jwt-secret-0123456789abcdef',
  ENCRYPTION_KEY: 'openapi-writer-encryption-key-0123456789ab',
  REDIS_URL: '',
});
const deps = await createDeps(config, { logger: createLogger('silent') });
const app = await buildApp(deps);
await app.ready();
const document = app.swagger() as { paths: Record<string, object>; components: { schemas: object } };
const text = `${JSON.stringify(document, null, 2)}\n`;
fs.writeFileSync(target, text);
await app.close();
await deps.close();
const operations = Object.values(document.paths).reduce((n, item) => n + Object.keys(item).length, 0);
const components = Object.keys(document.components.schemas).length;
const kib = Math.round(Buffer.byteLength(text) / 1024);
process.stdout.write(`wrote ${target}: ${operations} operations, ${components} components, ${kib} KiB\n`);
