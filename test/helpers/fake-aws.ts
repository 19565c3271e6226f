/**
 * A local stand-in for AWS Lambda (Invoke) and SNS (Publish) that checks every request the way
 * AWS does: it recomputes the Signature Version 4 itself, from the request as received and the
 * secret it was configured with, following the AWS documentation ("Create a signed AWS API
 * request", IAM User Guide) rather than any SDK code, so a test learns what the SDK really sent.
 *
 * Answers are in each service's wire format: Lambda's REST-JSON (errors named by the
 * `x-amzn-ErrorType` header), SNS's query protocol (a form-encoded `Action=Publish&…` body
 * answered with XML). Accepted requests are recorded; every connection and request is counted,
 * so a test can tell that nothing at all arrived.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeAwsService = 'lambda' | 'sns';

export interface FakeAwsOptions {
  region: string;
  /** Access key id → secret access key of the accounts the fake knows. */
  credentials: Record<string, string>;
  /** Lambda: the names of the functions that exist. */
  functions?: string[];
  /** SNS: the ARNs of the topics that exist. */
  topics?: string[];
}

export interface SignedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  accessKeyId: string;
  region: string;
  signedHeaders: string[];
}

export interface LambdaInvocation extends SignedRequest {
  functionName: string;
  invocationType: string;
  payload: string;
}

export interface SnsPublication extends SignedRequest {
  topicArn: string;
  message: string;
  subject: string | undefined;
  messageGroupId: string | undefined;
  messageDeduplicationId: string | undefined;
  messageId: string;
}

export interface FakeAws<Accepted> {
  /** `http://127.0.0.1:<port>`, to be the action's `endpoint`. */
  url: string;
  port: number;
  /** The requests the fake accepted (signature valid, target known). */
  accepted: Accepted[];
  /** Every request that arrived, accepted or not. */
  requestCount(): number;
  /** Every TCP connection that was opened. */
  connectionCount(): number;
  close(): Promise<void>;
}

const ACCOUNT = '123456789012';
/** AWS refuses a request signed more than 15 minutes away from its own clock. */
const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;

// ---------------------------------------------------------------------------------------------
// Signature Version 4, from the documentation.

/** RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ as %XX (upper case). */
function uriEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string): Buffer =>
  createHmac('sha256', key).update(data, 'utf8').digest();

/**
 * The canonical URI of services other than S3: the path normalised (empty, `.` and `..`
 * segments resolved) and each segment URI-encoded once more, on top of the encoding the path
 * already has on the wire ("each path segment must be URI-encoded twice").
 */
function canonicalUri(rawPath: string): string {
  const segments: string[] = [];
  for (const segment of rawPath.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(uriEncode(segment));
  }
  const trailing = rawPath.endsWith('/') && segments.length > 0 ? '/' : '';
  return `/${segments.join('/')}${trailing}`;
}

/** Parameters decoded, re-encoded strictly, sorted by name then value, joined with `&`. */
function canonicalQuery(rawQuery: string): string {
  if (rawQuery === '') return '';
  const decode = (s: string) => decodeURIComponent(s.replaceAll('+', ' '));
  return rawQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const at = pair.indexOf('=');
      const name = at === -1 ? pair : pair.slice(0, at);
      const value = at === -1 ? '' : pair.slice(at + 1);
      return [uriEncode(decode(name)), uriEncode(decode(value))] as const;
    })
    .sort(([an, av], [bn, bv]) => (an === bn ? (av < bv ? -1 : av > bv ? 1 : 0) : an < bn ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(',') : value;
}

interface Authorization {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;

function parseAuthorization(value: string | undefined): Authorization | null {
  const match = value === undefined ? null : AUTHORIZATION.exec(value);
  if (match === null) return null;
  const [, accessKeyId = '', date = '', region = '', service = '', signed = '', signature = ''] = match;
  return { accessKeyId, date, region, service, signedHeaders: signed.split(';'), signature };
}

type Verdict =
  | { ok: true; authorization: Authorization }
  | { ok: false; problem: 'unknown-key' | 'signature'; message: string };

export interface ReceivedRequest {
  method: string;
  rawPath: string;
  rawQuery: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Checks the request's signature as AWS would, for `service` in `region`. */
export function verifySignatureV4(
  request: ReceivedRequest,
  service: string,
  region: string,
  credentials: Record<string, string>,
  now: Date = new Date(),
): Verdict {
  const refuse = (message: string): Verdict => ({ ok: false, problem: 'signature', message });
  const authorization = parseAuthorization(headerValue(request.headers, 'authorization'));
  if (authorization === null)
    return refuse('Authorization header requires a valid AWS4-HMAC-SHA256 signature.');
  const secret = credentials[authorization.accessKeyId];
  if (secret === undefined) {
    return {
      ok: false,
      problem: 'unknown-key',
      message: 'The security token included in the request is invalid.',
    };
  }
  const amzDate = headerValue(request.headers, 'x-amz-date') ?? '';
  const signedAt = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (signedAt === null) return refuse('X-Amz-Date is missing or malformed.');
  const [, y, mo, d, h, mi, s] = signedAt;
  const signedTime = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  if (Math.abs(now.getTime() - signedTime) > MAX_CLOCK_SKEW_MS) return refuse('Signature expired.');
  if (authorization.date !== amzDate.slice(0, 8))
    return refuse('Credential should be scoped to the date of X-Amz-Date.');
  if (authorization.region !== region) {
    return refuse(`Credential should be scoped to a valid region, not '${authorization.region}'.`);
  }
  if (authorization.service !== service) {
    return refuse(`Credential should be scoped to correct service: '${service}'.`);
  }
  const signed = authorization.signedHeaders;
  const sorted = [...signed].sort();
  if (signed.join(';') !== sorted.join(';')) return refuse('SignedHeaders must be sorted.');
  if (!signed.includes('host')) return refuse("'Host' must be a signed header.");
  const bodyHash = sha256Hex(request.body);
  const claimedHash = headerValue(request.headers, 'x-amz-content-sha256');
  if (claimedHash !== undefined && claimedHash !== bodyHash) {
    return refuse('The provided x-amz-content-sha256 header does not match what was computed.');
  }
  const canonicalHeaders: string[] = [];
  for (const name of signed) {
    const value = headerValue(request.headers, name);
    if (value === undefined) return refuse(`Signed header ${name} is missing.`);
    canonicalHeaders.push(`${name}:${value.trim().replace(/\s+/g, ' ')}\n`);
  }
  const canonicalRequest = [
    request.method,
    canonicalUri(request.rawPath),
    canonicalQuery(request.rawQuery),
    canonicalHeaders.join(''),
    signed.join(';'),
    bodyHash,
  ].join('\n');
  const scope = `${authorization.date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${secret}`, authorization.date), region), service),
    'aws4_request',
  );
  const expected = Buffer.from(hmac(signingKey, stringToSign).toString('hex'));
  const received = Buffer.from(authorization.signature);
  if (expected.length !== received.length || !timingSafeEqual(expected, received)) {
    // AWS's own message, with the canonical request and string to sign it computed.
    return refuse(
      'The request signature we calculated does not match the signature you provided. Check your AWS ' +
        'Secret Access Key and signing method. Consult the service documentation for details.\n\n' +
        `The Canonical String for this request should have been\n'${canonicalRequest}'\n\n` +
        `The String-to-Sign should have been\n'${stringToSign}'\n`,
    );
  }
  return { ok: true, authorization };
}

// ---------------------------------------------------------------------------------------------
// The server.

interface Exchange {
  received: ReceivedRequest;
  response: ServerResponse;
}

async function startServer<Accepted>(
  handle: (exchange: Exchange, accepted: Accepted[]) => void,
): Promise<FakeAws<Accepted>> {
  const accepted: Accepted[] = [];
  let requests = 0;
  let connections = 0;
  const server = createServer((request: IncomingMessage, response) => {
    requests += 1;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = request.url ?? '/';
      const at = target.indexOf('?');
      handle(
        {
          received: {
            method: request.method ?? 'GET',
            rawPath: at === -1 ? target : target.slice(0, at),
            rawQuery: at === -1 ? '' : target.slice(at + 1),
            headers: request.headers,
            body: Buffer.concat(chunks),
          },
          response,
        },
        accepted,
      );
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    accepted,
    requestCount: () => requests,
    connectionCount: () => connections,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function signedRequest(received: ReceivedRequest, authorization: Authorization): SignedRequest {
  return {
    method: received.method,
    path: received.rawPath,
    headers: received.headers,
    body: received.body.toString('utf8'),
    accessKeyId: authorization.accessKeyId,
    region: authorization.region,
    signedHeaders: authorization.signedHeaders,
  };
}

// ---------------------------------------------------------------------------------------------
// Lambda: POST /2015-03-31/functions/{FunctionName}/invocations (REST-JSON).

function lambdaError(response: ServerResponse, status: number, type: string, message: string): void {
  const body = JSON.stringify({ Type: status < 500 ? 'User' : 'Service', message });
  response.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': type,
    'x-amzn-requestid': randomUUID(),
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

/** `name`, `123456789012:function:name` or the full ARN, with an optional `:qualifier`. */
const FUNCTION_NAME =
  /^(?:arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:|\d{12}:function:)?([A-Za-z0-9_-]+)(?::[A-Za-z0-9$_-]+)?$/;

export function startFakeLambda(options: FakeAwsOptions): Promise<FakeAws<LambdaInvocation>> {
  const functions = new Set(options.functions ?? []);
  return startServer<LambdaInvocation>(({ received, response }, accepted) => {
    const verdict = verifySignatureV4(received, 'lambda', options.region, options.credentials);
    if (!verdict.ok) {
      const type =
        verdict.problem === 'unknown-key' ? 'UnrecognizedClientException' : 'InvalidSignatureException';
      lambdaError(response, 403, type, verdict.message);
      return;
    }
    const route = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(received.rawPath);
    if (received.method !== 'POST' || route === null) {
      lambdaError(response, 404, 'UnknownOperationException', 'Unknown operation');
      return;
    }
    const functionName = decodeURIComponent(route[1] ?? '');
    const name = FUNCTION_NAME.exec(functionName)?.[1];
    if (name === undefined || !functions.has(name)) {
      lambdaError(
        response,
        404,
        'ResourceNotFoundException',
        `Function not found: arn:aws:lambda:${options.region}:${ACCOUNT}:function:${name ?? functionName}`,
      );
      return;
    }
    const invocationType = headerValue(received.headers, 'x-amz-invocation-type') ?? 'RequestResponse';
    if (invocationType !== 'Event') {
      // A stand-in for asynchronous invocations only: anything else is a mistake of the caller.
      lambdaError(
        response,
        400,
        'InvalidParameterValueException',
        `This fake accepts InvocationType Event only, not ${invocationType}`,
      );
      return;
    }
    accepted.push({
      ...signedRequest(received, verdict.authorization),
      functionName,
      invocationType,
      payload: received.body.toString('utf8'),
    });
    response.writeHead(202, { 'x-amzn-requestid': randomUUID(), 'content-length': 0 });
    response.end();
  });
}

// ---------------------------------------------------------------------------------------------
// SNS: the query protocol, `POST /` with `Action=Publish&Version=2010-03-31&…`, answered in XML.

const SNS_NAMESPACE = 'http://sns.amazonaws.com/doc/2010-03-31/';

function escapeXml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}

function snsXml(response: ServerResponse, status: number, xml: string): void {
  response.writeHead(status, {
    'content-type': 'text/xml',
    'x-amzn-requestid': randomUUID(),
    'content-length': Buffer.byteLength(xml),
  });
  response.end(xml);
}

function snsError(response: ServerResponse, status: number, code: string, message: string): void {
  const type = status < 500 ? 'Sender' : 'Receiver';
  snsXml(
    response,
    status,
    `<ErrorResponse xmlns="${SNS_NAMESPACE}">\n  <Error>\n    <Type>${type}</Type>\n    <Code>${code}</Code>\n` +
      `    <Message>${escapeXml(message)}</Message>\n  </Error>\n  <RequestId>${randomUUID()}</RequestId>\n</ErrorResponse>\n`,
  );
}

export function startFakeSns(options: FakeAwsOptions): Promise<FakeAws<SnsPublication>> {
  const topics = new Set(options.topics ?? []);
  return startServer<SnsPublication>(({ received, response }, accepted) => {
    const verdict = verifySignatureV4(received, 'sns', options.region, options.credentials);
    if (!verdict.ok) {
      const code = verdict.problem === 'unknown-key' ? 'InvalidClientTokenId' : 'SignatureDoesNotMatch';
      snsError(response, 403, code, verdict.message);
      return;
    }
    const contentType = headerValue(received.headers, 'content-type') ?? '';
    if (received.method !== 'POST' || !contentType.startsWith('application/x-www-form-urlencoded')) {
      snsError(response, 400, 'MalformedQueryString', 'Expected a form-encoded POST');
      return;
    }
    const form = new URLSearchParams(received.body.toString('utf8'));
    if (form.get('Version') !== '2010-03-31') {
      snsError(response, 400, 'InvalidParameterValue', `Unsupported Version ${form.get('Version')}`);
      return;
    }
    if (form.get('Action') !== 'Publish') {
      snsError(
        response,
        400,
        'InvalidAction',
        `Could not find operation ${form.get('Action')} for version 2010-03-31`,
      );
      return;
    }
    const topicArn = form.get('TopicArn') ?? '';
    if (!topics.has(topicArn)) {
      snsError(response, 404, 'NotFound', 'Topic does not exist');
      return;
    }
    const message = form.get('Message');
    if (message === null || message === '') {
      snsError(response, 400, 'InvalidParameter', 'Invalid parameter: Empty message');
      return;
    }
    const messageGroupId = form.get('MessageGroupId') ?? undefined;
    if (topicArn.endsWith('.fifo') && messageGroupId === undefined) {
      snsError(
        response,
        400,
        'InvalidParameter',
        'Invalid parameter: The MessageGroupId parameter is required for FIFO topics',
      );
      return;
    }
    const messageId = randomUUID();
    accepted.push({
      ...signedRequest(received, verdict.authorization),
      topicArn,
      message,
      subject: form.get('Subject') ?? undefined,
      messageGroupId,
      messageDeduplicationId: form.get('MessageDeduplicationId') ?? undefined,
      messageId,
    });
    snsXml(
      response,
      200,
      `<PublishResponse xmlns="${SNS_NAMESPACE}">\n  <PublishResult>\n    <MessageId>${messageId}</MessageId>\n` +
        `  </PublishResult>\n  <ResponseMetadata>\n    <RequestId>${randomUUID()}</RequestId>\n  </ResponseMetadata>\n</PublishResponse>\n`,
    );
  });
}
