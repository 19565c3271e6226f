/**
 * Property test of contract §1 over every write route (and every GET with a text query parameter),
 * from the OpenAPI document: arbitrary Unicode — NUL, lone surrogates, line terminators, astral
 * characters — as a string field, a metadata key or value, a path or query value, and arbitrary
 * timestamps, never produce a 5xx. On PostgreSQL (TEST_DATABASE_URL=postgres://…) every input also
 * goes to an in-memory SQLite app set up the same way, and the two must answer the same status and,
 * for errors, the same body (ids aside): the databases may not disagree about what is valid.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { TestApp } from '../helpers/app.ts';
import { IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';
import {
  type ApiOperation,
  apiOperations,
  exampleBody,
  expectStatus,
  fetchOpenApi,
  login,
  type OpenApiDocument,
  randomIp,
  registerUser,
  startIdentityApp,
} from '../helpers/identity.ts';
import { createDevice } from '../locations/helpers.ts';

const RUNS = 300;
const EMAIL = 'property@example.com';
const PASSWORD = 'property password 1';

/** What a client may put in a string: any code point, lone surrogates, NUL and line terminators. */
const unit = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
  { weight: 1, arbitrary: fc.constantFrom('\u0000', '\n', '\r', '\u2028', '\u2029', '\ufeff', '/', '%') },
);
const text = fc.string({ unit, minLength: 0, maxLength: 12 });

const pad = (n: number, width: number) => String(n).padStart(width, '0');
/** RFC 3339-shaped text across (and beyond) the range the databases store. */
const timestamp = fc
  .record({
    year: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 9999 }), fc.constant(1969)),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 24 }),
    second: fc.integer({ min: 0, max: 60 }),
    zone: fc.constantFrom('Z', 'z', '+00:00', '+14:00', '-12:00', '+00:01', '-00:01', ''),
  })
  .map(
    (t) =>
      `${pad(t.year, 4)}-${pad(t.month, 2)}-${pad(t.day, 2)}T${pad(t.hour, 2)}:00:${pad(t.second, 2)}${t.zone}`,
  );

type Mutation =
  | { kind: 'field'; pick: number; value: string }
  | { kind: 'metadata-key'; value: string }
  | { kind: 'metadata-value'; value: string }
  | { kind: 'timestamp'; value: string }
  | { kind: 'path'; pick: number; value: string }
  | { kind: 'query'; pick: number; value: string };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('field' as const), pick: fc.nat(), value: text }),
  fc.record({ kind: fc.constant('metadata-key' as const), value: text }),
  fc.record({ kind: fc.constant('metadata-value' as const), value: text }),
  fc.record({ kind: fc.constant('timestamp' as const), value: timestamp }),
  fc.record({ kind: fc.constant('path' as const), pick: fc.nat(), value: text }),
  fc.record({ kind: fc.constant('query' as const), pick: fc.nat(), value: text }),
);

/** Percent-encoding that also carries lone surrogates (as their WTF-8 bytes, as a client would). */
function encodeText(value: string): string {
  let out = '';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

/** Paths of the string leaves of a JSON value. */
function stringLeaves(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...path, i]));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
  }
  return [];
}

function setAt(root: unknown, path: Array<string | number>, value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1);
  if (last !== undefined) node[last] = value;
}

interface Target {
  op: ApiOperation;
  body: unknown;
  metadataAt: Array<string | number> | undefined;
  dateTimeFields: string[];
  queryNames: string[];
}

/** Where `metadata` and `date-time` fields sit in the operation's example body (top level or item 0). */
function describeTarget(doc: OpenApiDocument, op: ApiOperation): Target | undefined {
  let body: unknown;
  try {
    body = exampleBody(doc, op);
  } catch {
    return undefined;
  }
  const schema = op.operation.requestBody?.content['application/json']?.schema;
  const properties = schema?.properties ?? {};
  const itemProperties = properties.locations?.items?.properties;
  const metadataAt = properties.metadata
    ? ['metadata']
    : itemProperties?.metadata
      ? ['locations', 0, 'metadata']
      : undefined;
  const dateTimeFields = Object.entries(properties)
    .filter(([, s]) => s.format === 'date-time' || s.anyOf?.some((b) => b.format === 'date-time'))
    .map(([name]) => name);
  if (itemProperties?.timestamp) dateTimeFields.push('locations.0.timestamp');
  const queryNames = (op.operation.parameters ?? [])
    .filter((p) => p.in === 'query' && p.schema?.type === 'string')
    .map((p) => p.name);
  return { op, body, metadataAt, dateTimeFields, queryNames };
}

interface Node {
  app: TestApp;
  token: string;
  pathValues: Record<string, string>;
}

async function setUp(app: TestApp): Promise<Node> {
  const registered = await registerUser(app, { email: EMAIL, password: PASSWORD });
  const token = (await login(app, EMAIL, PASSWORD)).access_token;
  const device = await createDevice(app, { token });
  const call = (url: string, payload: unknown) =>
    app.app.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${token}` },
      payload: payload as object,
    });
  const geofence = expectStatus<{ id: string }>(
    await call('/geofences', { name: 'g', geometry: { type: 'Circle', coordinates: [0, 0], radius: 10 } }),
    201,
    'geofence',
  );
  // A port nothing listens on: the test delivery fails at once.
  const webhook = expectStatus<{ id: string }>(
    await call('/webhooks', { name: 'w', url: 'http://127.0.0.1:9/hook' }),
    201,
    'webhook',
  );
  const session = expectStatus<{ id: string }>(
    await call(`/devices/${device.id}/sessions`, {}),
    201,
    'session',
  );
  return {
    app,
    token,
    pathValues: {
      workspace_id: registered.workspace.id,
      user_id: registered.user.id,
      device_id: device.id,
      geofence_id: geofence.id,
      webhook_id: webhook.id,
      session_id: session.id,
    },
  };
}

/** The request for one node: its own ids in the path, the mutation applied. */
function requestFor(node: Node, target: Target, m: Mutation) {
  const body = target.body === undefined ? undefined : structuredClone(target.body);
  const pathParams = target.op.pathParams;
  const pathValue = (name: string, index: number): string => {
    if (m.kind === 'path' && pathParams.length > 0 && m.pick % pathParams.length === index) {
      return encodeText(m.value);
    }
    // DELETE never gets a real id: the fixtures must survive the run.
    const own = target.op.method === 'DELETE' ? undefined : node.pathValues[name];
    return encodeURIComponent(own ?? '01900000-0000-7000-8000-000000000000');
  };
  let index = 0;
  let url = target.op.path.replace(/\{([^}]+)\}/g, (_all, name: string) => pathValue(name, index++));
  if (m.kind === 'query' && target.queryNames.length > 0) {
    const name = target.queryNames[m.pick % target.queryNames.length] ?? 'q';
    url += `?${encodeURIComponent(name)}=${encodeText(m.value)}`;
  }
  if (body !== undefined && body !== null && typeof body === 'object') {
    if (m.kind === 'field') {
      const leaves = stringLeaves(body);
      const leaf = leaves[m.pick % Math.max(1, leaves.length)];
      if (leaf) setAt(body, leaf, m.value);
    } else if ((m.kind === 'metadata-key' || m.kind === 'metadata-value') && target.metadataAt) {
      setAt(body, target.metadataAt, m.kind === 'metadata-key' ? { [m.value]: 1 } : { k: [m.value] });
    } else if (m.kind === 'timestamp') {
      for (const field of target.dateTimeFields)
        setAt(
          body,
          field.split('.').map((s) => (/^\d+$/.test(s) ? Number(s) : s)),
          m.value,
        );
    }
  }
  return { url, body };
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const comparable = (status: number, body: string) =>
  status >= 400 ? `${status} ${body.replace(UUID, '<id>')}` : String(status);

describe(`text rules hold on every write route${IS_POSTGRES ? ', PostgreSQL and SQLite alike' : ''}`, () => {
  const nodes: Node[] = [];
  let targets: Target[] = [];

  before(async () => {
    const env = { DEFAULT_PLAN: 'business' };
    const primary = await startIdentityApp({ env });
    nodes.push(await setUp(primary));
    if (IS_POSTGRES) {
      const sqlite: TestDatabase = { url: 'sqlite::memory:', schema: undefined, drop: async () => {} };
      nodes.push(await setUp(await startIdentityApp({ env, database: sqlite })));
    }
    const doc = await fetchOpenApi(primary);
    targets = apiOperations(doc)
      // Logging out would end the session every later request uses.
      .filter((op) => op.path !== '/api/v1/auth/logout')
      // An event stream answers for as long as the client listens: its query rules are tested in
      // test/stream/, where the stream is read and closed.
      .filter((op) => !JSON.stringify(op.operation.responses ?? {}).includes('text/event-stream'))
      .map((op) => describeTarget(doc, op))
      .filter((t): t is Target => t !== undefined)
      .filter((t) => t.op.method !== 'GET' || t.queryNames.length > 0);
  });
  after(async () => {
    for (const node of nodes) await node.app.close();
  });

  test('no 5xx, and the same answer from each database', async () => {
    assert.ok(targets.length >= 30, `found ${targets.length} operations`);
    await fc.assert(
      fc.asyncProperty(fc.nat(), mutation, async (pick, m) => {
        const target = targets[pick % targets.length] as Target;
        const remoteAddress = randomIp();
        const answers: string[] = [];
        for (const node of nodes) {
          const { url, body } = requestFor(node, target, m);
          const res = await node.app.app.inject({
            method: target.op.method,
            url,
            remoteAddress,
            headers: { authorization: `Bearer ${node.token}` },
            ...(body !== undefined ? { payload: body as object } : {}),
          });
          assert.ok(res.statusCode < 500, `${target.op.label} ${url} → ${res.statusCode} ${res.body}`);
          answers.push(comparable(res.statusCode, res.body));
        }
        if (answers.length === 2)
          assert.equal(answers[0], answers[1], `${target.op.label}: PostgreSQL vs SQLite`);
      }),
      { numRuns: RUNS },
    );
  });
});
