import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

test('npm run openapi writes the same OpenAPI 3.0 document the server serves', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-'));
  const target = path.join(dir, 'openapi.json');
  try {
    const { stdout } = await run(process.execPath, ['scripts/write-openapi.ts', target], {
      cwd: path.resolve(import.meta.dirname, '../..'),
    });
    assert.match(stdout, /wrote /);
    type Operation = { responses: Record<string, { headers?: Record<string, unknown> }> };
    const document = JSON.parse(fs.readFileSync(target, 'utf8')) as {
      openapi: string;
      paths: Record<string, Record<string, Operation>>;
    };
    assert.match(document.openapi, /^3\.0\./);
    assert.ok(document.paths['/api/v1/geofences'], 'geofence routes are documented');
    assert.ok(document.paths['/api/v1/auth/login'], 'auth routes are documented');
    // Operations an API key may call document the X-RateLimit-* headers; JWT-only ones do not.
    const headersOf = (path: string, status: string) =>
      Object.keys(document.paths[path]?.get?.responses[status]?.headers ?? {}).sort();
    assert.deepEqual(headersOf('/api/v1/geofences', '200'), [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ]);
    assert.deepEqual(headersOf('/api/v1/auth/me', '200'), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
