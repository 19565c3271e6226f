/**
 * API-key scopes (contract §2.3), table-driven from the OpenAPI document: every operation that an
 * API key may call and that names a scope (`x-required-scope`) refuses a key holding every other
 * scope (403 INSUFFICIENT_PERMISSIONS) and admits a key holding only that scope, so the scope the
 * document states is the one the server enforces (contract §1). Every route the app serves under
 * /api/v1 is in the document, so routes added later are covered by the same loops.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { SCOPES } from '../../src/auth/scopes.ts';
import type { TestApp } from '../helpers/app.ts';
import {
  API,
  type ApiOperation,
  apiOperations,
  call,
  callOperation,
  createApiKey,
  expectError,
  expectStatus,
  fetchOpenApi,
  login,
  type OpenApiDocument,
  PASSWORD,
  registerUser,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';

const DELETE_LAST = (a: ApiOperation, b: ApiOperation) =>
  Number(a.method === 'DELETE') - Number(b.method === 'DELETE') || a.label.localeCompare(b.label);

/** The scopes a key must lack so that `required` is not held: itself and, for `x:read`, `x:write`. */
function impliedBy(required: string): string[] {
  return required.endsWith(':read') ? [required, required.replace(/:read$/, ':write')] : [required];
}

/**
 * `METHOD /path/{param}` of every route the app serves, read from Fastify's own route tree
 * (`printRoutes`, one node a line, indented four characters a level under `├── ` or `└── `).
 */
function servedRoutes(app: FastifyInstance): string[] {
  const out: string[] = [];
  const segments: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const at = line.search(/[├└]── /);
    if (at < 0) continue;
    const node = /^(.*?)(?: \(([^)]*)\))?$/.exec(line.slice(at + 4));
    segments.length = at / 4;
    segments.push(node?.[1] ?? '');
    const path = segments.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of (node?.[2] ?? '').split(', ')) {
      if (method && method !== 'HEAD' && method !== 'OPTIONS') out.push(`${method} ${path}`);
    }
  }
  return out;
}

describe('scope matrix derived from the OpenAPI document', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  let owner: SignedUpUser;
  const keys = new Map<string, string>();

  before(async () => {
    t = await startIdentityApp();
    doc = await fetchOpenApi(t);
    owner = await signUp(t, 'scopes');
  });
  after(async () => t?.close());

  async function keyWith(scopes: string[]): Promise<string> {
    const id = [...scopes].sort().join(' ');
    let key = keys.get(id);
    if (!key) {
      key = (await createApiKey(t, owner.tokens.access_token, scopes)).key;
      keys.set(id, key);
    }
    return key;
  }

  /** Path values inside the caller's own workspace; other ids are fresh (so: not found). */
  const ownPathValues = (op: ApiOperation): Record<string, string> =>
    Object.fromEntries(
      op.pathParams.map((name) => [name, name === 'workspace_id' ? owner.workspace.id : randomUUID()]),
    );

  test('every /api/v1 operation declares x-required-scope (possibly null) or is public', () => {
    const operations = apiOperations(doc);
    assert.ok(operations.length >= 20, `found ${operations.length} operations`);
    const known = new Set<string>(SCOPES);
    for (const op of operations) {
      const security = op.operation.security;
      const isPublic = Array.isArray(security) && security.length === 0;
      const declared = 'x-required-scope' in op.operation;
      assert.ok(isPublic || declared, `${op.label}: declares x-required-scope or an empty security`);
      if (isPublic) continue;
      const scope = op.operation['x-required-scope'];
      assert.ok(
        scope === null || (typeof scope === 'string' && known.has(scope)),
        `${op.label}: scope ${scope}`,
      );
      assert.ok(
        ['any', 'user', 'api_key'].includes(op.operation['x-auth-via'] ?? ''),
        `${op.label}: x-auth-via ${op.operation['x-auth-via']}`,
      );
    }
  });

  test('every route the app serves under /api/v1 is an operation of the document (none escapes the matrix)', () => {
    const documented = new Set(apiOperations(doc).map((op) => op.label));
    const served = servedRoutes(t.app).filter((label) => label.split(' ')[1]?.startsWith(`${API}/`));
    assert.ok(served.length >= documented.size, `${served.length} routes served`);
    assert.deepEqual(
      served.filter((label) => !documented.has(label)),
      [],
      'served but not documented',
    );
  });

  test('each operation names one scope, the enforced one: no second scope for keys', () => {
    for (const op of apiOperations(doc)) {
      assert.ok(!('x-api-key-scope' in op.operation), `${op.label} states a separate key scope`);
    }
  });

  test('a user-only operation refuses an API key, even one with every scope; a key-only one refuses a JWT', async (ctx) => {
    const everything = await keyWith(['*']);
    const userOnly = apiOperations(doc).filter((op) => op.operation['x-auth-via'] === 'user');
    const keyOnly = apiOperations(doc).filter((op) => op.operation['x-auth-via'] === 'api_key');
    assert.ok(userOnly.length > 0 && keyOnly.length > 0);
    for (const op of userOnly) {
      await ctx.test(op.label, async () => {
        const res = await callOperation(t, doc, op, ownPathValues(op), { apiKey: everything });
        const body = expectError(res, 401, undefined, `${op.label} with an API key`);
        assert.equal(body.detail, 'This endpoint needs a user access token (JWT)');
      });
    }
    for (const op of keyOnly) {
      await ctx.test(op.label, async () => {
        const res = await callOperation(t, doc, op, ownPathValues(op), { token: owner.tokens.access_token });
        const body = expectError(res, 401, undefined, `${op.label} with a JWT`);
        assert.equal(body.detail, 'This endpoint needs an API key');
      });
    }
  });

  test('the grantable scopes in the document are the contract’s list plus *', () => {
    const schema =
      doc.paths['/api/v1/account/api-keys']?.post?.requestBody?.content['application/json']?.schema;
    assert.deepEqual(schema?.properties?.scopes?.items?.enum, [...SCOPES, '*']);
  });

  test('every protected operation answers 401 Not authenticated without credentials', async (ctx) => {
    for (const op of apiOperations(doc).filter((o) => (o.operation.security ?? []).length > 0)) {
      await ctx.test(op.label, async () => {
        const res = await callOperation(t, doc, op, ownPathValues(op), {});
        assert.deepEqual(expectError(res, 401, undefined, op.label), { detail: 'Not authenticated' });
      });
    }
  });

  test('a key lacking the required scope → 403; a key with only that scope gets past authorisation', async (ctx) => {
    const operations = apiOperations(doc)
      .filter(
        (op) => typeof op.operation['x-required-scope'] === 'string' && op.operation['x-auth-via'] !== 'user',
      )
      .sort(DELETE_LAST);
    assert.ok(
      operations.some((op) => op.label === 'POST /api/v1/account/api-keys'),
      'API-key management is among the scoped operations',
    );
    for (const label of [
      'POST /api/v1/geofences/batch',
      'GET /api/v1/geofences/export',
      'GET /api/v1/webhooks/deliveries',
      'POST /api/v1/webhooks/deliveries/{delivery_id}/retry',
      'POST /api/v1/webhooks/dlq/retry',
    ]) {
      assert.ok(
        operations.some((op) => op.label === label),
        `${label} is among the scoped operations`,
      );
    }
    for (const op of operations) {
      await ctx.test(op.label, async () => {
        // The documented scope is the one enforced: /workspaces/{id} routes too (their owner/admin
        // rule for users, from the role in that workspace, is the member test's below).
        const required = op.operation['x-required-scope'] as string;
        const lacking = new Set(impliedBy(required));
        const allOthers = await keyWith(SCOPES.filter((s) => !lacking.has(s)));
        // Placeholder bodies ask for as little as possible, so that a business rule with its own
        // 403 does not stand in for the scope check: a key-creation body asks for the scope under
        // test (asking for more is tested in api-keys.test.ts), a role is `member` (only an owner
        // grants `owner`, tested there too).
        const pickEnum = (values: unknown[]) =>
          values.includes(required) ? required : values.includes('member') ? 'member' : values[0];
        for (const [form, credentials] of [
          ['Bearer', { token: allOthers }],
          ['X-API-Key', { apiKey: allOthers }],
        ] as const) {
          const refused = await callOperation(t, doc, op, ownPathValues(op), credentials, { pickEnum });
          const body = expectError(
            refused,
            403,
            'INSUFFICIENT_PERMISSIONS',
            `${op.label} without ${required} (${form})`,
          );
          assert.match(String(body.detail), new RegExp(`requires scope ${required}`));
        }

        // An operation needing more than its scope (`x-required-scope-also`) is tried with those too.
        const also = op.operation['x-required-scope-also'] ?? [];
        if (also.length > 0) {
          const withoutAlso = await keyWith([required]);
          const body = expectError(
            await callOperation(t, doc, op, ownPathValues(op), { apiKey: withoutAlso }, { pickEnum }),
            403,
            'INSUFFICIENT_PERMISSIONS',
            `${op.label} with ${required} but not ${also.join(', ')}`,
          );
          assert.match(String(body.detail), new RegExp(`requires scope ${also[0]}`));
        }
        const onlyIt = await keyWith([required, ...also]);
        const admitted = await callOperation(t, doc, op, ownPathValues(op), { apiKey: onlyIt }, { pickEnum });
        assert.ok(
          admitted.statusCode !== 401 && admitted.statusCode !== 403,
          `${op.label} with only ${required}: ${admitted.statusCode} ${admitted.body}`,
        );
        assert.ok(admitted.statusCode < 500, `${op.label}: ${admitted.statusCode} ${admitted.body}`);
      });
    }
  });

  test('an operation admitting any of several scopes: a key with none → 403; a key with any one gets past', async (ctx) => {
    const operations = apiOperations(doc).filter(
      (op) => op.operation['x-required-scope-any-of'] !== undefined,
    );
    assert.ok(
      operations.some((op) => op.label === 'POST /api/v1/stream/tokens'),
      'the stream token is among them',
    );
    for (const op of operations) {
      await ctx.test(op.label, async () => {
        const anyOf = op.operation['x-required-scope-any-of'] ?? [];
        assert.ok(
          anyOf.length > 1 && anyOf.every((s) => (SCOPES as readonly string[]).includes(s)),
          `${anyOf}`,
        );
        assert.equal(op.operation['x-required-scope'], null, `${op.label}: no single scope as well`);
        const lacking = new Set(anyOf.flatMap(impliedBy));
        const none = await keyWith(SCOPES.filter((s) => !lacking.has(s)));
        for (const credentials of [{ token: none }, { apiKey: none }]) {
          const body = expectError(
            await callOperation(t, doc, op, ownPathValues(op), credentials),
            403,
            'INSUFFICIENT_PERMISSIONS',
            `${op.label} without ${anyOf.join(', ')}`,
          );
          assert.equal(body.detail, `This action requires scope ${anyOf.join(' or ')}`);
        }
        // An admitted event stream does not end by itself, so `inject` cannot wait for it: streams
        // are opened over a socket, with each scope alone, in test/stream/stream.test.ts.
        const responses = op.operation.responses as Record<string, { content?: Record<string, unknown> }>;
        if (responses['200']?.content?.['text/event-stream'] !== undefined) return;
        for (const scope of anyOf) {
          const admitted = await callOperation(t, doc, op, ownPathValues(op), {
            apiKey: await keyWith([scope]),
          });
          assert.ok(
            admitted.statusCode !== 401 && admitted.statusCode !== 403 && admitted.statusCode < 500,
            `${op.label} with only ${scope}: ${admitted.statusCode} ${admitted.body}`,
          );
        }
      });
    }
  });

  test('a member-role user gets 403 INSUFFICIENT_PERMISSIONS on every owner/admin operation', async (ctx) => {
    const member = await registerUser(t);
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: member.email, role: 'member' },
      }),
      201,
      'add member',
    );
    const tokens = await login(t, member.email, PASSWORD, { workspaceId: owner.workspace.id });
    const operations = apiOperations(doc)
      .filter((op) => op.operation['x-required-role'] !== undefined)
      .sort(DELETE_LAST);
    assert.ok(operations.length > 0, 'some operations are owner/admin only');
    for (const op of operations) {
      await ctx.test(op.label, async () => {
        const res = await callOperation(t, doc, op, ownPathValues(op), { token: tokens.access_token });
        expectError(res, 403, 'INSUFFICIENT_PERMISSIONS', `${op.label} as a member`);
      });
    }
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}`, { token: owner.tokens.access_token }),
      200,
    );
  });
});
