import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import {
  classifyAddress,
  createGuardedDispatcher,
  type HostLookup,
} from '../../../src/outbound/outbound-guard.ts';
import type { ActionConfigs } from '../../../src/workflows/action-configs.schemas.ts';
import type { ActionOutcome, ActionRuntime } from '../../../src/workflows/actions/action.ts';
import { lambdaAction } from '../../../src/workflows/actions/lambda.ts';
import { snsAction } from '../../../src/workflows/actions/sns.ts';
import type { TemplateContext } from '../../../src/workflows/templates.ts';
import {
  type FakeAws,
  type LambdaInvocation,
  type SnsPublication,
  startFakeLambda,
  startFakeSns,
  verifySignatureV4,
} from '../../helpers/fake-aws.ts';

const REGION = 'eu-west-1';
const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const WRONG_SECRET = 'je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY';
const FUNCTION = 'geofence-events';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:geofence-events';
const FIFO_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:geofence-events.fifo';

const GEOFENCE_ID = '6f1c2a4e-0d3b-4c55-9a8e-2b7f1e0c9d11';
const DEVICE_ID = '0b9e6c7d-5a43-4f21-8e10-3c2d1b0a9f88';
const WORKFLOW_ID = '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a';
const EVENT_ID = `${GEOFENCE_ID}_enter_1767225600`;
const GEOFENCE_NAME = 'Dépôt "Nord" <A&B>';

const payloadJson = JSON.stringify({
  id: 'c3d4e5f6-0718-4293-a4b5-c6d7e8f90a1b',
  event: 'geofence.enter',
  timestamp: '2026-01-01T00:00:00.000Z',
  data: {
    event_id: EVENT_ID,
    user_id: null,
    device_id: DEVICE_ID,
    geofence_id: GEOFENCE_ID,
    geofence_name: GEOFENCE_NAME,
    event_type: 'enter',
    point: { type: 'Point', coordinates: [13.405, 52.52] },
    metadata: { geofence_metadata: { zone: 'ü' }, event_metadata: {} },
  },
});

const context: TemplateContext = {
  event: 'geofence.enter',
  event_type: 'enter',
  event_id: EVENT_ID,
  occurred_at: '2026-01-01T00:00:00.000Z',
  geofence: { id: GEOFENCE_ID, name: GEOFENCE_NAME, metadata: { zone: 'ü' } },
  device: { id: DEVICE_ID, name: 'Truck 7', external_id: null, user_id: null, metadata: {} },
  point: { lat: 52.52, lng: 13.405 },
  metadata: {},
  workflow: { id: WORKFLOW_ID, name: 'Notify ops' },
  payload_json: payloadJson,
  test: false,
};

// Unused by AWS actions, required by the runtime; each refuses loudly if it is called.
const dispatcher = createGuardedDispatcher({ allowPrivate: true });
after(() => dispatcher.close());

function runtime(overrides: Partial<ActionRuntime> = {}): ActionRuntime {
  return {
    dispatcher,
    allowPrivateTargets: true,
    timeoutMs: 5000,
    mail: {
      sendNow: () => {
        throw new Error('AWS actions send no mail');
      },
    },
    databases: {
      insertEvent: () => {
        throw new Error('AWS actions use no database');
      },
      close: async () => {},
    },
    ...overrides,
  };
}

const fakeAccounts = { [KEY_ID]: SECRET };

async function withLambda(run: (fake: FakeAws<LambdaInvocation>) => Promise<void>): Promise<void> {
  const fake = await startFakeLambda({ region: REGION, credentials: fakeAccounts, functions: [FUNCTION] });
  try {
    await run(fake);
  } finally {
    await fake.close();
  }
}

async function withSns(run: (fake: FakeAws<SnsPublication>) => Promise<void>): Promise<void> {
  const fake = await startFakeSns({ region: REGION, credentials: fakeAccounts, topics: [TOPIC, FIFO_TOPIC] });
  try {
    await run(fake);
  } finally {
    await fake.close();
  }
}

function lambdaConfig(
  endpoint: string,
  overrides: Partial<ActionConfigs['lambda']> = {},
): ActionConfigs['lambda'] {
  return {
    function_name: FUNCTION,
    region: REGION,
    access_key_id: KEY_ID,
    secret_access_key: SECRET,
    endpoint,
    ...overrides,
  };
}

function snsConfig(endpoint: string, overrides: Partial<ActionConfigs['sns']> = {}): ActionConfigs['sns'] {
  return {
    topic_arn: TOPIC,
    region: REGION,
    access_key_id: KEY_ID,
    secret_access_key: SECRET,
    endpoint,
    ...overrides,
  };
}

function assertNoSecret(outcome: ActionOutcome): void {
  const text = JSON.stringify(outcome);
  assert.ok(!text.includes(SECRET), 'the configured secret appears in the outcome');
  assert.ok(!text.includes(WRONG_SECRET), 'the sent secret appears in the outcome');
}

describe('the fake AWS signature check', () => {
  // The worked example of the AWS documentation ("Create a signed AWS API request").
  const documented = {
    method: 'GET',
    rawPath: '/',
    rawQuery: 'Action=ListUsers&Version=2010-05-08',
    headers: {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
      host: 'iam.amazonaws.com',
      'x-amz-date': '20150830T123600Z',
      authorization:
        'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, ' +
        'SignedHeaders=content-type;host;x-amz-date, ' +
        'Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
    },
    body: Buffer.alloc(0),
  };
  const accounts = { AKIDEXAMPLE: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
  const at = new Date('2015-08-30T12:36:00Z');

  it('accepts the documented example and its signature', () => {
    assert.equal(verifySignatureV4(documented, 'iam', 'us-east-1', accounts, at).ok, true);
  });

  it('refuses it with another secret, another query, another header value or an unknown key', () => {
    const refused = [
      verifySignatureV4(documented, 'iam', 'us-east-1', { AKIDEXAMPLE: 'another secret' }, at),
      verifySignatureV4(
        { ...documented, rawQuery: 'Action=ListUsers&Version=2010-05-09' },
        'iam',
        'us-east-1',
        accounts,
        at,
      ),
      verifySignatureV4(
        { ...documented, headers: { ...documented.headers, host: 'iam.amazonaws.com.evil' } },
        'iam',
        'us-east-1',
        accounts,
        at,
      ),
      verifySignatureV4(documented, 'iam', 'us-east-1', { AKIDOTHER: 'x' }, at),
    ];
    assert.deepEqual(
      refused.map((verdict) => (verdict.ok ? 'accepted' : verdict.problem)),
      ['signature', 'signature', 'signature', 'unknown-key'],
    );
  });
});

describe('lambda action', () => {
  it('invokes the function asynchronously with the event payload', () =>
    withLambda(async (fake) => {
      const outcome = await lambdaAction.execute(lambdaConfig(fake.url), context, runtime());
      assert.deepEqual(outcome, {
        success: true,
        statusCode: 202,
        errorMessage: null,
        responseExcerpt: '{"StatusCode":202}',
      });
      assert.equal(fake.accepted.length, 1);
      const [invocation] = fake.accepted;
      assert.equal(invocation?.payload, payloadJson);
      assert.equal(invocation?.invocationType, 'Event');
      assert.equal(invocation?.functionName, FUNCTION);
      assert.equal(invocation?.accessKeyId, KEY_ID);
      assert.equal(invocation?.region, REGION);
    }));

  it('invokes a function named by its full ARN (encoded in the path, signed double-encoded)', () =>
    withLambda(async (fake) => {
      const arn = `arn:aws:lambda:${REGION}:123456789012:function:${FUNCTION}`;
      const outcome = await lambdaAction.execute(
        lambdaConfig(fake.url, { function_name: arn }),
        context,
        runtime(),
      );
      assert.equal(outcome.errorMessage, null);
      assert.equal(outcome.success, true);
      assert.equal(fake.accepted[0]?.functionName, arn);
      assert.match(fake.accepted[0]?.path ?? '', /^\/2015-03-31\/functions\/arn%3Aaws%3Alambda%3A/);
    }));

  it('fails with the AWS error and the status when the secret is wrong, never naming the secret', () =>
    withLambda(async (fake) => {
      const config = lambdaConfig(fake.url, { secret_access_key: WRONG_SECRET });
      const outcome = await lambdaAction.execute(config, context, runtime());
      assert.equal(outcome.success, false);
      assert.equal(outcome.statusCode, 403);
      assert.match(
        outcome.errorMessage ?? '',
        /^Lambda answered HTTP 403 InvalidSignatureException: The request signature we calculated does not match/,
      );
      assert.match(outcome.responseExcerpt ?? '', /"Error":"InvalidSignatureException"/);
      assertNoSecret(outcome);
      assert.equal(fake.requestCount(), 1);
      assert.equal(fake.accepted.length, 0);
    }));

  it('fails with the AWS error when the access key is unknown', () =>
    withLambda(async (fake) => {
      const config = lambdaConfig(fake.url, { access_key_id: 'AKIAUNKNOWNKEY000000' });
      const outcome = await lambdaAction.execute(config, context, runtime());
      assert.equal(outcome.statusCode, 403);
      assert.equal(
        outcome.errorMessage,
        'Lambda answered HTTP 403 UnrecognizedClientException: The security token included in the request is invalid.',
      );
      assertNoSecret(outcome);
    }));

  it('fails with ResourceNotFoundException for an unknown function', () =>
    withLambda(async (fake) => {
      const config = lambdaConfig(fake.url, { function_name: 'no-such-function' });
      const outcome = await lambdaAction.execute(config, context, runtime());
      assert.equal(outcome.success, false);
      assert.equal(outcome.statusCode, 404);
      assert.equal(
        outcome.errorMessage,
        'Lambda answered HTTP 404 ResourceNotFoundException: Function not found: ' +
          `arn:aws:lambda:${REGION}:123456789012:function:no-such-function`,
      );
      assert.equal(fake.accepted.length, 0);
    }));

  it('signs with the configured key, never with the credentials of the environment', () =>
    withLambda(async (fake) => {
      const names = [
        'AWS_ACCESS_KEY_ID',
        'AWS_SECRET_ACCESS_KEY',
        'AWS_SESSION_TOKEN',
        'AWS_PROFILE',
      ] as const;
      const saved = names.map((name) => process.env[name]);
      process.env.AWS_ACCESS_KEY_ID = 'AKIAENVIRONMENTKEY00';
      process.env.AWS_SECRET_ACCESS_KEY = 'environment/secret/key/of/the/service/0000';
      process.env.AWS_SESSION_TOKEN = 'environment-session-token';
      process.env.AWS_PROFILE = 'service-own-profile';
      try {
        const outcome = await lambdaAction.execute(lambdaConfig(fake.url), context, runtime());
        assert.equal(outcome.errorMessage, null);
        assert.equal(fake.accepted[0]?.accessKeyId, KEY_ID);
        assert.equal(fake.accepted[0]?.headers['x-amz-security-token'], undefined);
      } finally {
        names.forEach((name, i) => {
          const value = saved[i];
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
        });
      }
    }));

  it('refuses to run without a secret access key, sending nothing', () =>
    withLambda(async (fake) => {
      const outcome = await lambdaAction.execute(
        lambdaConfig(fake.url, { secret_access_key: undefined }),
        context,
        runtime(),
      );
      assert.equal(outcome.success, false);
      assert.match(outcome.errorMessage ?? '', /no secret access key/);
      assert.equal(fake.connectionCount(), 0);
    }));
});

describe('sns action', () => {
  it('publishes the event payload by default and answers the MessageId', () =>
    withSns(async (fake) => {
      const outcome = await snsAction.execute(snsConfig(fake.url), context, runtime());
      assert.equal(outcome.errorMessage, null);
      assert.equal(outcome.success, true);
      assert.equal(outcome.statusCode, 200);
      assert.equal(fake.accepted.length, 1);
      const [publication] = fake.accepted;
      assert.equal(publication?.topicArn, TOPIC);
      assert.equal(publication?.message, payloadJson);
      assert.equal(publication?.subject, undefined);
      assert.equal(publication?.accessKeyId, KEY_ID);
      assert.equal(outcome.responseExcerpt, JSON.stringify({ MessageId: publication?.messageId }));
    }));

  it('publishes the rendered message and subject as plain text', () =>
    withSns(async (fake) => {
      const config = snsConfig(fake.url, {
        message:
          '{{device.name}} entered {{geofence.name}} at {{point.lat}},{{point.lng}}\nzone {{{geofence.metadata.zone}}} & more',
        subject: '[{{event_type}}] {{device.name}} at {{geofence.name}}',
      });
      const outcome = await snsAction.execute(config, context, runtime());
      assert.equal(outcome.errorMessage, null);
      const [publication] = fake.accepted;
      assert.equal(publication?.message, 'Truck 7 entered Dépôt "Nord" <A&B> at 52.52,13.405\nzone ü & more');
      assert.equal(publication?.subject, '[enter] Truck 7 at Dépôt "Nord" <A&B>');
    }));

  it('keeps the subject to what SNS accepts: one line of at most 100 characters', () =>
    withSns(async (fake) => {
      const config = snsConfig(fake.url, { subject: '{{device.name}} {{geofence.name}}' });
      const named = {
        ...context,
        device: { ...context.device, name: 'Truck\r\n 7' },
        geofence: { ...context.geofence, name: 'x'.repeat(120) },
      };
      const outcome = await snsAction.execute(config, named, runtime());
      assert.equal(outcome.errorMessage, null);
      assert.equal(fake.accepted[0]?.subject, `Truck 7 ${'x'.repeat(92)}`);
    }));

  it('gives a FIFO topic a message group (the device) and a deduplication id stable across attempts', () =>
    withSns(async (fake) => {
      const config = snsConfig(fake.url, { topic_arn: FIFO_TOPIC });
      const first = await snsAction.execute(config, context, runtime());
      const second = await snsAction.execute(config, context, runtime());
      const other = await snsAction.execute(
        config,
        { ...context, event_id: `${GEOFENCE_ID}_exit_1767229200` },
        runtime(),
      );
      assert.deepEqual([first.success, second.success, other.success], [true, true, true]);
      const [a, b, c] = fake.accepted;
      assert.equal(a?.messageGroupId, DEVICE_ID);
      assert.match(a?.messageDeduplicationId ?? '', /^[0-9a-f]{64}$/);
      assert.equal(b?.messageDeduplicationId, a?.messageDeduplicationId);
      assert.notEqual(c?.messageDeduplicationId, a?.messageDeduplicationId);
    }));

  it('fails with the AWS error and the status when the secret is wrong, never naming the secret', () =>
    withSns(async (fake) => {
      const outcome = await snsAction.execute(
        snsConfig(fake.url, { secret_access_key: WRONG_SECRET }),
        context,
        runtime(),
      );
      assert.equal(outcome.success, false);
      assert.equal(outcome.statusCode, 403);
      assert.match(
        outcome.errorMessage ?? '',
        /^SNS answered HTTP 403 SignatureDoesNotMatch: The request signature we calculated does not match/,
      );
      assertNoSecret(outcome);
      assert.equal(fake.accepted.length, 0);
    }));

  it('fails with the AWS error for an unknown topic', () =>
    withSns(async (fake) => {
      const config = snsConfig(fake.url, { topic_arn: 'arn:aws:sns:eu-west-1:123456789012:missing' });
      const outcome = await snsAction.execute(config, context, runtime());
      assert.equal(outcome.statusCode, 404);
      // SNS answers the code `NotFound`; the SDK names its modelled error NotFoundException.
      assert.equal(outcome.errorMessage, 'SNS answered HTTP 404 NotFoundException: Topic does not exist');
    }));
});

describe('private targets', () => {
  const guarded = (overrides: Partial<ActionRuntime> = {}) =>
    runtime({ allowPrivateTargets: false, ...overrides });

  /** A resolver that answers `addresses` for every name and remembers what it was asked. */
  function fakeResolver(addresses: string[]): { lookup: HostLookup; asked: string[] } {
    const asked: string[] = [];
    const lookup: HostLookup = async (hostname) => {
      asked.push(hostname);
      return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    return { lookup, asked };
  }

  it('refuses a loopback endpoint, by literal or by name, before connecting', () =>
    withLambda(async (fake) =>
      withSns(async (sns) => {
        const cases: Array<[string, string]> = [
          [`http://127.0.0.1:${fake.port}`, 'Refused to connect to 127.0.0.1: it is a loopback address'],
          [`http://[::1]:${fake.port}`, 'Refused to connect to ::1: it is a loopback address'],
          [`http://localhost:${fake.port}`, 'Refused to connect to localhost: it resolves to '],
        ];
        for (const [endpoint, refusal] of cases) {
          const lambda = await lambdaAction.execute(lambdaConfig(endpoint), context, guarded());
          const published = await snsAction.execute(
            snsConfig(endpoint.replace(String(fake.port), String(sns.port))),
            context,
            guarded(),
          );
          for (const outcome of [lambda, published]) {
            assert.equal(outcome.success, false, endpoint);
            assert.equal(outcome.statusCode, null);
            assert.ok(outcome.errorMessage?.startsWith(refusal), `${endpoint}: ${outcome.errorMessage}`);
            assert.match(outcome.errorMessage ?? '', /WEBHOOK_ALLOW_PRIVATE_TARGETS=true.*nothing was sent$/);
          }
        }
        assert.equal(fake.connectionCount(), 0);
        assert.equal(sns.connectionCount(), 0);
      }),
    ));

  it('refuses a name resolving to a private address, alone or among public ones, over http and https', () =>
    withLambda(async (fake) => {
      for (const scheme of ['http', 'https']) {
        for (const addresses of [['127.0.0.1'], ['93.184.215.14', '10.0.0.7']]) {
          const resolver = fakeResolver(addresses);
          const endpoint = `${scheme}://lambda.aws-stand-in.test:${fake.port}`;
          const outcome = await lambdaAction.execute(
            lambdaConfig(endpoint),
            context,
            guarded({ lookup: resolver.lookup }),
          );
          assert.deepEqual(resolver.asked, ['lambda.aws-stand-in.test']);
          const refused = addresses.at(-1);
          assert.ok(
            outcome.errorMessage?.startsWith(
              `Refused to connect to lambda.aws-stand-in.test: it resolves to ${refused}, a `,
            ),
            `${endpoint}: ${outcome.errorMessage}`,
          );
        }
      }
      assert.equal(fake.connectionCount(), 0);
    }));

  it('connects to the address the guard checked', () =>
    withSns(async (fake) => {
      // A resolver and a policy under which this loopback receiver stands in for a public host:
      // the name exists for no one else, so reaching the fake proves the checked address was used.
      const resolver = fakeResolver(['127.0.0.1']);
      const classify = (ip: string) => (ip === '127.0.0.1' ? null : classifyAddress(ip));
      const endpoint = `http://sns.aws-stand-in.test:${fake.port}`;
      const outcome = await snsAction.execute(
        snsConfig(endpoint),
        context,
        guarded({ lookup: resolver.lookup, classify }),
      );
      assert.equal(outcome.errorMessage, null);
      assert.deepEqual(resolver.asked, ['sns.aws-stand-in.test']);
      assert.equal(fake.accepted[0]?.headers.host, `sns.aws-stand-in.test:${fake.port}`);
    }));
});

describe('network failures', () => {
  it('reports a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const outcome = await lambdaAction.execute(lambdaConfig(`http://127.0.0.1:${port}`), context, runtime());
    assert.deepEqual(outcome, {
      success: false,
      statusCode: null,
      errorMessage: 'Connection refused (ECONNREFUSED)',
      responseExcerpt: null,
    });
  });

  it('gives up after the runtime timeout when the endpoint never answers', async () => {
    let silent: Server | undefined;
    try {
      silent = createServer(() => {
        // Never answers.
      });
      const server = silent;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const outcome = await snsAction.execute(
        snsConfig(`http://127.0.0.1:${port}`),
        context,
        runtime({ timeoutMs: 200 }),
      );
      assert.deepEqual(outcome, {
        success: false,
        statusCode: null,
        errorMessage: 'Timed out after 200 ms without a response from SNS',
        responseExcerpt: null,
      });
    } finally {
      const server = silent;
      if (server !== undefined) {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      }
    }
  });

  it('tells an answer that is not the service’s apart from an AWS error', async () => {
    const proxy = createServer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html><body>Bad gateway</body></html>');
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = proxy.address() as AddressInfo;
      const outcome = await lambdaAction.execute(
        lambdaConfig(`http://127.0.0.1:${port}`),
        context,
        runtime(),
      );
      assert.equal(outcome.success, false);
      assert.equal(outcome.statusCode, 502);
      assert.match(outcome.errorMessage ?? '', /^Lambda answered HTTP 502 /);
    } finally {
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        proxy.closeAllConnections();
      });
    }
  });
});
