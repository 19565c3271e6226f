/**
 * Secrets of action configs (contract §6, ADR 014), property-based over random action lists that
 * the request schema accepts: sealed and opened they come back exactly (also through the JSON of
 * the `actions` column); a mask shows "…" and at most the last 4 characters of a secret, never half
 * of it, and nothing of a connection URL's password; an update that leaves a secret out or sends
 * its mask back keeps it, a new value replaces it, and an action of another type inherits nothing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { Type } from 'typebox';
import { createAjv } from '../../src/http/validation.ts';
import { SecretBox } from '../../src/shared/encryption.ts';
import {
  ACTION_TYPES,
  type ActionType,
  WorkflowAction,
  type WorkflowActionInput,
} from '../../src/workflows/action-configs.schemas.ts';
import {
  maskSecret,
  openConfig,
  publicAction,
  SECRET_FIELDS,
  type StoredAction,
  sealAction,
} from '../../src/workflows/action-secrets.ts';
import { MAX_ACTIONS } from '../../src/workflows/workflows.schemas.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/app.ts';

const box = new SecretBox(TEST_ENCRYPTION_KEY);
const otherBox = new SecretBox('another-encryption-key-0123456789abcdef');
const validActions = createAjv(false).compile(
  Type.Array(WorkflowAction, { minItems: 1, maxItems: MAX_ACTIONS }),
);

// ---------------------------------------------------------------------------------------------
// Generators of configs the schema accepts (checked against the schema in every run)
// ---------------------------------------------------------------------------------------------

/** Any text: printable ASCII (URL delimiters included), or any code points, astral ones too. */
const secretText = (maxLength: number) =>
  fc.oneof(fc.string({ minLength: 1, maxLength }), fc.string({ minLength: 1, maxLength, unit: 'binary' }));
const text = (maxLength: number) => fc.string({ minLength: 1, maxLength, unit: 'grapheme' });
const httpUrl = fc.webUrl({
  validSchemes: ['http', 'https'],
  withQueryParameters: true,
  withFragments: true,
});
const lowerWord = fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/);
const region = fc.stringMatching(/^[a-z]{2}(-[a-z]{1,8}){1,2}-[0-9]{1,2}$/);
const accessKeyId = fc.stringMatching(/^[A-Z0-9]{16,40}$/);
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** The config without its undefined fields (as JSON would carry it). */
const defined = (config: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));

/**
 * A connection URL whose password holds a `Q` (upper case appears nowhere else in the URL), so
 * that a mask showing any of it would be seen.
 */
const connectionUrl = fc
  .record({
    scheme: fc.constantFrom('postgres', 'postgresql'),
    user: lowerWord,
    password: secretText(40).map((p) => `Q${p}`),
    host: fc.domain().map((d) => d.toLowerCase()),
    port: fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
    database: lowerWord,
  })
  .map((u) => ({
    password: u.password,
    url: `${u.scheme}://${u.user}:${encodeURIComponent(u.password)}@${u.host}${u.port ? `:${u.port}` : ''}/${u.database}`,
  }));

const CONFIGS: Record<ActionType, fc.Arbitrary<Record<string, unknown>>> = {
  webhook: fc.record({ webhook_id: fc.uuid() }),
  slack: fc.record({ webhook_url: httpUrl, message: optional(text(200)) }),
  discord: fc.record({ webhook_url: httpUrl, message: optional(text(200)) }),
  teams: fc.record({ webhook_url: httpUrl, message: optional(text(200)) }),
  email: fc.record({
    to: fc.uniqueArray(fc.emailAddress(), { minLength: 1, maxLength: 5 }),
    subject: optional(text(100)),
    body: optional(text(200)),
  }),
  sms: fc.record({
    to: fc.stringMatching(/^\+[1-9][0-9]{6,14}$/),
    from: text(64),
    account_sid: fc.stringMatching(/^AC[0-9a-fA-F]{32}$/),
    auth_token: secretText(256),
    body: optional(text(200)),
    api_base_url: optional(httpUrl),
  }),
  lambda: fc.record({
    function_name: fc.stringMatching(/^[A-Za-z0-9_:.-]{1,170}$/),
    region,
    access_key_id: accessKeyId,
    secret_access_key: secretText(256),
    endpoint: optional(httpUrl),
  }),
  sns: fc.record({
    topic_arn: fc.stringMatching(
      /^arn:aws[a-z-]{0,8}:sns:[a-z0-9-]{1,20}:[0-9]{12}:[A-Za-z0-9_-]{1,64}(\.fifo)?$/,
    ),
    region,
    access_key_id: accessKeyId,
    secret_access_key: secretText(256),
    endpoint: optional(httpUrl),
    subject: optional(text(100)),
    message: optional(text(200)),
  }),
  database: fc.record({
    connection_url: connectionUrl.map((c) => c.url),
    table: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}(\.[A-Za-z_][A-Za-z0-9_]{0,20})?$/),
  }),
};

const action: fc.Arbitrary<WorkflowActionInput> = fc
  .constantFrom(...ACTION_TYPES)
  .chain((type) => CONFIGS[type].map((config) => ({ type, config: defined(config) }) as WorkflowActionInput));
const actionList = fc.array(action, { minLength: 1, maxLength: MAX_ACTIONS });

function assertSchemaValid(actions: readonly WorkflowActionInput[]): void {
  assert.ok(
    validActions(actions),
    `generated actions pass the schema: ${JSON.stringify(validActions.errors)}`,
  );
}

function sealed(input: WorkflowActionInput, previous?: StoredAction): StoredAction {
  const result = sealAction(input, previous, box);
  assert.ok(!('field' in result), `sealed ${input.type} (missing ${'field' in result ? result.field : ''})`);
  return result;
}

/** As stored in and read back from the `actions` column. */
const throughColumn = (actions: StoredAction[]): StoredAction[] => JSON.parse(JSON.stringify(actions));

const secretFieldsOf = (type: ActionType) => Object.entries(SECRET_FIELDS[type]);
const configOf = (a: WorkflowActionInput) => a.config as Record<string, unknown>;
const pick = (config: Record<string, unknown>, fields: Array<[string, unknown]>) =>
  Object.fromEntries(fields.map(([f]) => [f, config[f]]));

// ---------------------------------------------------------------------------------------------
// Mask rules, checked independently of the masking code
// ---------------------------------------------------------------------------------------------

const ELLIPSIS = '…';

/** `mask` is "…" and a suffix of `secret` of at most 4 characters and at most half of it. */
function assertPlainMask(mask: string, secret: string, what: string): void {
  assert.ok(mask.startsWith(ELLIPSIS), `${what}: starts with …`);
  const shown = mask.slice(ELLIPSIS.length);
  assert.ok(secret.endsWith(shown), `${what}: shows the end of the secret`);
  assert.ok(shown.length <= 4, `${what}: at most 4 characters shown`);
  assert.ok(shown.length * 4 <= secret.length, `${what}: at most a quarter of the secret`);
}

function assertUrlPathMask(mask: string, value: string, what: string): void {
  const url = new URL(value);
  const prefix = `${url.origin}/`;
  assert.ok(mask.startsWith(prefix), `${what}: keeps the origin`);
  assertPlainMask(mask.slice(prefix.length), `${url.pathname}${url.search}`.slice(1), what);
}

function assertUrlPasswordMask(mask: string, value: string, what: string): void {
  const password = decodeURIComponent(new URL(value).password);
  assert.ok(!mask.includes('Q'), `${what}: nothing of the password`);
  assert.ok(!mask.includes(password) && !mask.includes(encodeURIComponent(password)), what);
  assert.ok(mask.includes(`:${ELLIPSIS}@`), `${what}: the password replaced by …`);
  // Everything but the password is as sent.
  const original = new URL(value);
  const masked = new URL(mask.replace(`:${ELLIPSIS}@`, ':x@'));
  for (const part of ['protocol', 'username', 'hostname', 'port', 'pathname'] as const) {
    assert.equal(masked[part], original[part], `${what}: ${part}`);
  }
}

const MASK_RULES = {
  plain: assertPlainMask,
  'url-path': assertUrlPathMask,
  'url-password': assertUrlPasswordMask,
} as const;

describe('action secrets', () => {
  test('sealed and opened, every secret comes back exactly (also through the column JSON)', () => {
    fc.assert(
      fc.property(actionList, (actions) => {
        assertSchemaValid(actions);
        const stored = throughColumn(actions.map((a) => sealed(a)));
        stored.forEach((s, i) => {
          const input = actions[i] as WorkflowActionInput;
          assert.equal(s.type, input.type);
          assert.deepEqual(openConfig(s, box), configOf(input));
          assert.deepEqual(
            Object.keys(s.sealed).sort(),
            secretFieldsOf(input.type)
              .map(([f]) => f)
              .sort(),
          );
          for (const [field, value] of Object.entries(s.sealed)) {
            assert.match(value, /^v1\./);
            // Sealed under the service key: another key cannot open it.
            assert.throws(() => otherBox.open(value), `${input.type}.${field} sealed`);
          }
        });
      }),
    );
  });

  test('masks show "…" and at most the last 4 characters of a secret, nothing of a password', () => {
    fc.assert(
      fc.property(actionList, (actions) => {
        for (const [i, input] of actions.entries()) {
          const answered = publicAction(sealed(input)).config;
          for (const [field, kind] of secretFieldsOf(input.type)) {
            const what = `actions[${i}] ${input.type}.${field}`;
            MASK_RULES[kind](String(answered[field]), String(configOf(input)[field]), what);
          }
          // Fields that are not secrets are answered as sent.
          for (const [field, value] of Object.entries(configOf(input))) {
            if (!(field in SECRET_FIELDS[input.type])) assert.deepEqual(answered[field], value);
          }
        }
      }),
    );
  });

  test('maskSecret over any text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 64, unit: 'binary' }), (secret) => {
        const mask = maskSecret(secret);
        if (secret.length === 0) assert.equal(mask, ELLIPSIS);
        else assertPlainMask(mask, secret, JSON.stringify(secret));
      }),
    );
  });

  test('an update: a secret left out or sent back masked is kept, a new one replaces it', () => {
    fc.assert(
      fc.property(actionList, actionList, (first, second) => {
        const previous = throughColumn(first.map((a) => sealed(a)));
        // The answer sent back as is: every secret kept.
        const echoed = previous.map((s, i) => sealed(publicAction(s) as WorkflowActionInput, previous[i]));
        echoed.forEach((s, i) => {
          assert.deepEqual(openConfig(s, box), configOf(first[i] as WorkflowActionInput));
          assert.deepEqual(s.config, previous[i]?.config);
        });
        // Secrets left out: kept where the position has an action of the same type, else missing.
        second.forEach((input, i) => {
          const config = { ...configOf(input) };
          for (const [field] of secretFieldsOf(input.type)) delete config[field];
          const before = previous[i];
          const result = sealAction({ type: input.type, config } as WorkflowActionInput, before, box);
          const fields = secretFieldsOf(input.type);
          if (fields.length === 0) {
            assert.deepEqual(result, { type: input.type, config, sealed: {} });
          } else if (before?.type === input.type) {
            assert.ok(!('field' in result));
            const kept = Object.fromEntries(fields.map(([f]) => [f, openConfig(before, box)[f]]));
            assert.deepEqual(openConfig(result, box), { ...config, ...kept });
            assert.deepEqual(result.config, { ...config, ...pick(before.config, fields) });
          } else {
            assert.deepEqual(result, { field: fields[0]?.[0] });
          }
          // A new value replaces what was there (unless it is the very mask answered for it).
          const replaced = sealed(input, before);
          const expected = { ...configOf(input) };
          for (const [field] of fields) {
            if (before?.type === input.type && expected[field] === before.config[field]) {
              expected[field] = openConfig(before, box)[field];
            }
          }
          assert.deepEqual(openConfig(replaced, box), expected);
        });
      }),
    );
  });
});
