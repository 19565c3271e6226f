/**
 * Every operation of the document is sent a malformed JSON body, a request without credentials and
 * a body over its limit; each answer's status must be documented for that operation and its body
 * must match the documented schema (contract §1: 400 malformed JSON, 401, 413 over 1 MiB / 5 MiB).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { BODY_LIMIT_BYTES } from '../../src/app.ts';
import { GEOFENCE_BATCH_BODY_LIMIT_BYTES } from '../../src/geofences/geofences.routes.ts';
import { BATCH_BODY_LIMIT_BYTES } from '../../src/locations/locations.routes.ts';
import type { TestApp } from '../helpers/app.ts';
import { createApiKey, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  type DocumentedOperation,
  documentedOperations,
  SchemaValidator,
  servedDocument,
} from '../helpers/openapi.ts';

describe('OpenAPI: every answer of every operation is documented', () => {
  let t: TestApp;
  let operations: DocumentedOperation[];
  let userToken: string;
  let apiKey: string;
  const validator = new SchemaValidator();

  before(async () => {
    t = await startIdentityApp();
    operations = await documentedOperations(await servedDocument(t));
    const owner = await signUp(t, 'openapi-errors');
    userToken = owner.tokens.access_token;
    apiKey = (await createApiKey(t, userToken, ['*'])).key;
  });
  after(async () => t.close());

  /** Path parameters filled with ids that exist nowhere: the answers tested come before lookups. */
  function urlOf(op: DocumentedOperation): string {
    return op.path.replace(/\{[^}]+\}/g, () => randomUUID());
  }

  /** Credentials the operation accepts: an API key where only a key will do, else a user token. */
  function credentialsFor(op: DocumentedOperation): Record<string, string> {
    const via = op.operation['x-auth-via'];
    if (via === undefined) return {};
    return { authorization: `Bearer ${via === 'api_key' ? apiKey : userToken}` };
  }

  function takesBody(op: DocumentedOperation): boolean {
    return op.operation.requestBody !== undefined;
  }

  /** The answer's status is documented and its body matches that response's schema. */
  function assertDocumented(op: DocumentedOperation, res: LightMyRequestResponse, what: string): void {
    assert.ok(res.statusCode < 500, `${op.label} ${what}: ${res.statusCode} ${res.body}`);
    const response = op.operation.responses[String(res.statusCode)];
    assert.ok(response, `${op.label} ${what}: ${res.statusCode} is not documented (${res.body})`);
    const [mediaType, media] = Object.entries(response.content ?? {})[0] ?? [];
    if (media?.schema === undefined) {
      assert.equal(res.body, '', `${op.label} ${what}: ${res.statusCode} documents no body`);
      return;
    }
    const body = mediaType === 'application/json' ? res.json() : res.body;
    const errors = validator.errors(media.schema, body);
    assert.equal(errors, '', `${op.label} ${what}: ${res.statusCode} body ${res.body} does not match`);
  }

  test('the document has operations with and without bodies', () => {
    assert.ok(operations.length > 60, `${operations.length} operations`);
    assert.ok(operations.some(takesBody));
    assert.ok(operations.some((op) => !takesBody(op)));
  });

  test('without credentials: 401 for every protected operation, documented', async () => {
    for (const op of operations) {
      const res = await t.app.inject({ method: op.method as 'GET', url: urlOf(op) });
      if (op.operation['x-auth-via'] !== undefined) {
        assert.equal(res.statusCode, 401, `${op.label} without credentials: ${res.body}`);
      }
      assertDocumented(op, res, 'without credentials');
    }
  });

  test('a malformed JSON body: 400 VALIDATION_ERROR for every operation taking a body, documented', async () => {
    for (const op of operations.filter(takesBody)) {
      const res = await t.app.inject({
        method: op.method as 'POST',
        url: urlOf(op),
        headers: { ...credentialsFor(op), 'content-type': 'application/json' },
        payload: '{"name": "unterminated',
      });
      assert.equal(res.statusCode, 400, `${op.label} malformed: ${res.body}`);
      const body = res.json() as { detail: string; error_code: string };
      assert.equal(body.error_code, 'VALIDATION_ERROR', op.label);
      assert.match(body.detail, /^Malformed JSON body/, op.label);
      assertDocumented(op, res, 'malformed body');
    }
  });

  test('a body over the limit: 413 for every operation taking a body, documented with its limit', async () => {
    for (const op of operations.filter(takesBody)) {
      const limit =
        op.path === '/api/v1/locations/batch' || op.path === '/api/v1/ingest/overland'
          ? BATCH_BODY_LIMIT_BYTES
          : op.path === '/api/v1/geofences/batch'
            ? GEOFENCE_BATCH_BODY_LIMIT_BYTES
            : BODY_LIMIT_BYTES;
      const res = await t.app.inject({
        method: op.method as 'POST',
        url: urlOf(op),
        headers: { ...credentialsFor(op), 'content-type': 'application/json' },
        payload: `{"name": "${'x'.repeat(limit)}"}`,
      });
      assert.equal(res.statusCode, 413, `${op.label} oversized: ${res.body}`);
      assertDocumented(op, res, 'oversized body');
      const described = op.operation.responses['413']?.description ?? '';
      assert.match(described, new RegExp(`${limit / (1024 * 1024)} MiB`), `${op.label} 413 states its limit`);
    }
  });

  test('every operation taking a body documents 415 for another content type', () => {
    for (const op of operations.filter(takesBody)) {
      assert.ok(op.operation.responses['415'], `${op.label} documents 415`);
    }
  });

  test('POST /auth/login documents the 400 a malformed body gets', () => {
    const login = operations.find((op) => op.label === 'POST /api/v1/auth/login');
    assert.ok(login?.operation.responses['400'], 'POST /auth/login documents 400');
  });

  test('operations an API key may call document 429; those it may not, do not', () => {
    for (const op of operations) {
      const via = op.operation['x-auth-via'];
      if (via === 'any' || via === 'api_key') {
        assert.ok(op.operation.responses['429'], `${op.label} documents 429`);
      }
    }
    const userOnly = operations.find((op) => op.label === 'GET /api/v1/auth/me');
    assert.equal(userOnly?.operation.responses['429'], undefined, 'GET /auth/me: no API-key budget');
  });
});
