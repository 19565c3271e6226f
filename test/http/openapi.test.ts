import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('OpenAPI document', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t.close());

  test('GET /openapi/openapi.json is a valid OpenAPI 3.0 document', async () => {
    const res = await t.app.inject({ url: '/openapi/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.match(doc.openapi, /^3\.0\.\d+$/);
    // A real validator: structure against the OpenAPI 3.0 JSON schema, plus $ref resolution.
    await SwaggerParser.validate(structuredClone(doc));
  });

  test('every documented operation declares its error responses', async () => {
    const doc = (await t.app.inject({ url: '/openapi/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        assert.ok(operation.responses['422'], `${method.toUpperCase()} ${path} documents 422`);
        assert.ok(operation.responses['500'], `${method.toUpperCase()} ${path} documents 500`);
      }
    }
  });

  test('GET /docs serves the interactive reference from installed assets', async () => {
    const res = await t.app.inject({ url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /swagger-ui/i);
    assert.doesNotMatch(res.body, /https?:\/\/(unpkg|cdn)/i, 'no CDN assets');
    const bundle = await t.app.inject({ url: '/docs/static/swagger-ui-bundle.js' });
    assert.equal(bundle.statusCode, 200);
  });
});
