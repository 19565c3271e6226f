/**
 * Helpers for the identity tests: an app with cheap argon2id, HTTP shortcuts for sign-up, login and
 * API keys, and OpenAPI walking (operations, placeholder bodies) for the table-driven suites.
 * Everything goes through `app.inject`, i.e. real routing, hooks, validation and error handling.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';

export const API = '/api/v1';
export const PASSWORD = 'correct horse battery staple';
export const CHEAP_PASSWORD_HASH = { memoryKiB: 1024, passes: 1, parallelism: 1 };

/** startTestApp with argon2id cheap enough for tests (unless the caller overrides it). */
export function startIdentityApp(options: TestAppOptions = {}): Promise<TestApp> {
  return startTestApp({
    ...options,
    overrides: { passwordHash: CHEAP_PASSWORD_HASH, ...options.overrides },
  });
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomUUID().slice(0, 8)}@example.com`;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: 'Bearer';
}

export interface UserOut {
  id: string;
  email: string;
  name: string | null;
  email_verified: boolean;
  created_at: string;
}

export interface WorkspaceOut {
  id: string;
  name: string;
  settings: { access_token_ttl_seconds: number };
  role?: 'owner' | 'admin' | 'member';
  created_at: string;
  updated_at: string;
}

export interface Me extends UserOut {
  workspace_id: string;
  role: 'owner' | 'admin' | 'member';
  workspaces: Array<{ id: string; name: string; role: 'owner' | 'admin' | 'member' }>;
}

export interface ApiKeyOut {
  id: string;
  name: string;
  scopes: string[];
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
}

export interface CreatedApiKey extends ApiKeyOut {
  key: string;
}

export interface Page<T> {
  results: T[];
  pagination: { total: number; limit: number; offset: number; has_more: boolean };
}

export interface ErrorBody {
  detail: unknown;
  error_code?: string;
  details?: Record<string, unknown>;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** A JWT or an API key, sent as `Authorization: Bearer …`. */
  token?: string;
  /** An API key sent as `X-API-Key`. */
  apiKey?: string;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

/** One HTTP request to the app; `path` is relative to /api/v1 unless it starts with it. */
export function call(t: TestApp, path: string, options: CallOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  return t.app.inject({
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    url: path.startsWith(API) ? path : `${API}${path}`,
    headers,
    ...(options.query ? { query: options.query } : {}),
    ...(options.body !== undefined ? { payload: options.body as Record<string, unknown> } : {}),
    ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
  });
}

/** Asserts the status and returns the parsed body, with the response in the failure message. */
export function expectStatus<T>(res: LightMyRequestResponse, status: number, what = ''): T {
  assert.equal(
    res.statusCode,
    status,
    `${what ? `${what}: ` : ''}expected ${status}, got ${res.statusCode} ${res.body}`,
  );
  return (res.body === '' ? undefined : res.json()) as T;
}

/** Asserts a contract error: status, error_code (or its absence) and optionally the exact detail. */
export function expectError(
  res: LightMyRequestResponse,
  status: number,
  errorCode: string | undefined,
  what = '',
): ErrorBody {
  const body = expectStatus<ErrorBody>(res, status, what);
  assert.equal(body.error_code, errorCode, `${what}: error_code in ${res.body}`);
  assert.ok(
    typeof body.detail === 'string' || Array.isArray(body.detail),
    `${what}: detail present in ${res.body}`,
  );
  if (status === 401) assert.equal(res.headers['www-authenticate'], 'Bearer', `${what}: WWW-Authenticate`);
  return body;
}

export interface RegisteredUser {
  email: string;
  password: string;
  user: UserOut;
  workspace: WorkspaceOut;
}

export async function registerUser(
  t: TestApp,
  input: { email?: string; password?: string; name?: string; workspace_name?: string } = {},
): Promise<RegisteredUser> {
  const email = input.email ?? uniqueEmail();
  const password = input.password ?? PASSWORD;
  const res = await call(t, '/auth/register', {
    body: {
      email,
      password,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.workspace_name !== undefined ? { workspace_name: input.workspace_name } : {}),
    },
    // A fresh address per sign-up: the per-IP registration limit must not bite set-up.
    remoteAddress: randomIp(),
  });
  const body = expectStatus<{ user: UserOut; workspace: WorkspaceOut }>(res, 201, `register ${email}`);
  return { email, password, user: body.user, workspace: body.workspace };
}

export async function login(
  t: TestApp,
  email: string,
  password: string,
  options: { workspaceId?: string; remoteAddress?: string } = {},
): Promise<TokenPair> {
  const res = await call(t, '/auth/login', {
    body: { email, password, ...(options.workspaceId ? { workspace_id: options.workspaceId } : {}) },
    // A fresh address per login unless told otherwise: the per-IP login limit must not bite set-up.
    remoteAddress: options.remoteAddress ?? randomIp(),
  });
  return expectStatus<TokenPair>(res, 200, `login ${email}`);
}

export interface SignedUpUser extends RegisteredUser {
  tokens: TokenPair;
}

/** Registers a user (with its own workspace) and logs in. */
export async function signUp(
  t: TestApp,
  label = 'user',
  input: { name?: string; workspace_name?: string } = {},
): Promise<SignedUpUser> {
  const registered = await registerUser(t, { email: uniqueEmail(label), ...input });
  const tokens = await login(t, registered.email, registered.password);
  return { ...registered, tokens };
}

/** A random documentation-range IPv6 address (RFC 3849), distinct per call. */
export function randomIp(): string {
  const hex = () => Math.floor(Math.random() * 0x10000).toString(16);
  return `2001:db8::${hex()}:${hex()}:${hex()}`;
}

export async function createApiKey(
  t: TestApp,
  accessToken: string,
  scopes: string[],
  options: { name?: string; expires_at?: string } = {},
): Promise<CreatedApiKey> {
  const res = await call(t, '/account/api-keys', {
    token: accessToken,
    body: { name: options.name ?? `key ${scopes.join(' ')}`, scopes, ...options },
  });
  return expectStatus<CreatedApiKey>(res, 201, `create API key ${scopes.join(',')}`);
}

export async function me(t: TestApp, accessToken: string): Promise<Me> {
  return expectStatus<Me>(await call(t, '/auth/me', { token: accessToken }), 200, 'GET /auth/me');
}

export function decodeJwt(token: string): {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
} {
  const [header = '', payload = ''] = token.split('.');
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>,
  };
}

// ---------------------------------------------------------------------------------------------
// OpenAPI walking
// ---------------------------------------------------------------------------------------------

export interface OpenApiSchema {
  type?: string;
  format?: string;
  enum?: unknown[];
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  items?: OpenApiSchema;
  minItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number | boolean;
  pattern?: string;
  nullable?: boolean;
  anyOf?: OpenApiSchema[];
  oneOf?: OpenApiSchema[];
  allOf?: OpenApiSchema[];
  $ref?: string;
  default?: unknown;
  example?: unknown;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: OpenApiSchema;
}

export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema: OpenApiSchema }> };
  security?: Array<Record<string, string[]>>;
  'x-required-scope'?: string | null;
  'x-required-scope-also'?: string[];
  /** The scope an API key needs when the service checks more than the route-level scope. */
  'x-api-key-scope'?: string;
  /** Any one of these scopes admits the caller (`x-required-scope` is then null). */
  'x-required-scope-any-of'?: string[];
  'x-auth-via'?: 'any' | 'user' | 'api_key';
  'x-required-role'?: string;
  responses: Record<string, unknown>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, OpenApiSchema> };
}

export interface ApiOperation {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  operation: OpenApiOperation;
  /** Names of the `{…}` parameters in the path, in order. */
  pathParams: string[];
  label: string;
}

const METHODS = new Set(['get', 'post', 'patch', 'put', 'delete']);

export async function fetchOpenApi(t: TestApp): Promise<OpenApiDocument> {
  return expectStatus<OpenApiDocument>(await t.app.inject({ url: '/openapi/openapi.json' }), 200, 'openapi');
}

/** Every operation of the document under /api/v1. */
export function apiOperations(doc: OpenApiDocument): ApiOperation[] {
  const out: ApiOperation[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    if (!path.startsWith(`${API}/`)) continue;
    for (const [method, operation] of Object.entries(operations)) {
      if (!METHODS.has(method)) continue;
      const upper = method.toUpperCase() as ApiOperation['method'];
      out.push({
        method: upper,
        path,
        operation,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? ''),
        label: `${upper} ${path}`,
      });
    }
  }
  return out;
}

export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_all, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for path parameter {${name}} of ${path}`);
    return encodeURIComponent(value);
  });
}

export interface PlaceholderOptions {
  /** Chooses among enum values (default: the first). */
  pickEnum?: (values: unknown[]) => unknown;
}

function resolveRef(doc: OpenApiDocument, schema: OpenApiSchema): OpenApiSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace(/^#\/components\/schemas\//, '');
  const target = doc.components?.schemas?.[name];
  if (!target) throw new Error(`unresolvable $ref ${schema.$ref}`);
  return resolveRef(doc, target);
}

/**
 * A minimal valid value for a schema: only required properties, the smallest allowed array, the
 * first enum value, a plausible string for the format. Throws (naming the schema) where it cannot
 * guess, so a new route with e.g. a `pattern` gets a deliberate case instead of a silent 422.
 */
export function placeholderFor(
  doc: OpenApiDocument,
  input: OpenApiSchema,
  where: string,
  options: PlaceholderOptions = {},
): unknown {
  const schema = resolveRef(doc, input);
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum && schema.enum.length > 0) return (options.pickEnum ?? ((v) => v[0]))(schema.enum);
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (branch) return placeholderFor(doc, branch, where, options);
  if (schema.allOf) {
    return Object.assign(
      {},
      ...schema.allOf.map((s) => placeholderFor(doc, s, where, options) as Record<string, unknown>),
    );
  }
  const type = schema.type ?? (schema.properties ? 'object' : undefined);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) {
        const property = schema.properties?.[name];
        if (!property) throw new Error(`${where}: required property ${name} has no schema`);
        out[name] = placeholderFor(doc, property, `${where}.${name}`, options);
      }
      return out;
    }
    case 'array': {
      const count = schema.minItems ?? 0;
      if (count > 0 && !schema.items) throw new Error(`${where}: array without items schema`);
      return Array.from({ length: count }, (_v, i) =>
        placeholderFor(doc, schema.items ?? {}, `${where}[${i}]`, options),
      );
    }
    case 'integer':
    case 'number': {
      let value =
        schema.minimum ?? (typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : 1);
      if (schema.maximum !== undefined && value > schema.maximum) value = schema.maximum;
      return type === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return false;
    case 'string': {
      if (schema.pattern)
        throw new Error(`${where}: cannot derive a placeholder for pattern ${schema.pattern}`);
      switch (schema.format) {
        case 'email':
          return `placeholder-${randomUUID().slice(0, 8)}@example.com`;
        case 'date-time':
          return '2099-01-01T00:00:00.000Z';
        case 'date':
          return '2099-01-01';
        case 'uuid':
          return randomUUID();
        case 'uri':
        case 'url':
          return 'https://example.com/placeholder';
        case undefined:
          break;
        default:
          throw new Error(`${where}: no placeholder for string format ${schema.format}`);
      }
      const min = schema.minLength ?? 1;
      const max = schema.maxLength ?? Math.max(min, 11);
      return 'placeholder'.padEnd(min, 'x').slice(0, Math.max(min, Math.min(max, 11)));
    }
    default:
      throw new Error(`${where}: no placeholder for schema ${JSON.stringify(schema)}`);
  }
}

/** A minimal valid JSON body for an operation (undefined when it takes none). */
export function exampleBody(
  doc: OpenApiDocument,
  op: ApiOperation,
  options: PlaceholderOptions = {},
): unknown {
  const schema = op.operation.requestBody?.content['application/json']?.schema;
  if (!schema) return undefined;
  return placeholderFor(doc, schema, `${op.label} body`, options);
}

/** Values for the operation's required query parameters. */
export function exampleQuery(
  doc: OpenApiDocument,
  op: ApiOperation,
  options: PlaceholderOptions = {},
): Record<string, string> {
  const query: Record<string, string> = {};
  for (const parameter of op.operation.parameters ?? []) {
    if (parameter.in !== 'query' || !parameter.required) continue;
    query[parameter.name] = String(
      placeholderFor(doc, parameter.schema ?? { type: 'string' }, `${op.label} ?${parameter.name}`, options),
    );
  }
  return query;
}

/** Sends one operation with path values, a token or API key, and a derived body. */
export function callOperation(
  t: TestApp,
  doc: OpenApiDocument,
  op: ApiOperation,
  pathValues: Record<string, string>,
  credentials: { token?: string; apiKey?: string },
  options: PlaceholderOptions = {},
): Promise<LightMyRequestResponse> {
  const body = exampleBody(doc, op, options);
  return call(t, fillPath(op.path, pathValues), {
    method: op.method,
    ...credentials,
    ...(body !== undefined ? { body } : {}),
    query: exampleQuery(doc, op, options),
  });
}
