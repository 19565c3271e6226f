/**
 * The dashboard's API types (web/src/api/schema.ts) are generated from the OpenAPI document the
 * server serves; committed, so the dashboard type-checks without a running server. When an API
 * change is not followed by a regeneration, this fails and says how to fix it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { generateWebApiTypes } from '../../scripts/write-web-api-types.ts';

const SCHEMA = path.resolve(import.meta.dirname, '../../web/src/api/schema.ts');

test('the committed web API types equal a fresh generation from the OpenAPI document', () => {
  const committed = fs.readFileSync(SCHEMA, 'utf8');
  const fresh = generateWebApiTypes();
  if (committed === fresh) return;
  const a = committed.split('\n');
  const b = fresh.split('\n');
  const line = a.findIndex((text, i) => text !== b[i]);
  assert.fail(
    `web/src/api/schema.ts is stale: run \`npm run web:types\` and commit the result.\n` +
      `First difference at line ${line + 1}:\n  committed: ${a[line] ?? '(end of file)'}\n  generated: ${b[line] ?? '(end of file)'}`,
  );
});
