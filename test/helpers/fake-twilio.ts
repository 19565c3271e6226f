/**
 * A loopback stand-in for Twilio's Messages REST API
 * (https://www.twilio.com/docs/messaging/api/message-resource#create-a-message-resource):
 * `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP basic auth with the account SID and
 * auth token, a form-encoded `To`, `From` and `Body`. It answers 201 with the message resource, or
 * Twilio's error object `{code, message, more_info, status}` for what it refuses, and records
 * every request. It can be told to answer the next requests otherwise, or never to answer.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TwilioRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  /** The form fields, when the body was form-encoded. */
  form: URLSearchParams | null;
  /** The error code Twilio answered with, or null for a created message. */
  errorCode: number | null;
}

export interface TwilioError {
  status: number;
  code: number;
  message: string;
}

export type TwilioScript = TwilioError | { hang: true } | { raw: { status: number; body: string } };

export class FakeTwilio {
  readonly requests: TwilioRequest[] = [];
  readonly accountSid: string;
  private readonly authToken: string;
  private readonly server: http.Server;
  private script: TwilioScript | null = null;

  private constructor(server: http.Server, accountSid: string, authToken: string) {
    this.server = server;
    this.accountSid = accountSid;
    this.authToken = authToken;
  }

  static async start(accountSid: string, authToken: string): Promise<FakeTwilio> {
    const server = http.createServer();
    const fake = new FakeTwilio(server, accountSid, authToken);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => fake.handle(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return fake;
  }

  /** What `api_base_url` is set to. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers every following request this way instead of Twilio's own answer, until `reset()`. */
  answer(script: TwilioScript): void {
    this.script = script;
  }

  reset(): void {
    this.script = null;
    this.requests.length = 0;
  }

  /** The messages Twilio accepted. */
  created(): TwilioRequest[] {
    return this.requests.filter((r) => r.errorCode === null);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      const form = contentType === 'application/x-www-form-urlencoded' ? new URLSearchParams(raw) : null;
      const request: TwilioRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        form,
        errorCode: null,
      };
      this.requests.push(request);
      const script = this.script;
      if (script && 'hang' in script) return; // the socket stays open until close()
      if (script && 'raw' in script) {
        request.errorCode = -1;
        res.writeHead(script.raw.status, { 'content-type': 'text/html' });
        res.end(script.raw.body);
        return;
      }
      const error = script ?? this.refusal(req, form);
      if (error) {
        request.errorCode = error.code;
        send(res, error.status, {
          code: error.code,
          message: error.message,
          more_info: `https://www.twilio.com/docs/errors/${error.code}`,
          status: error.status,
        });
        return;
      }
      send(res, 201, this.messageResource(form ?? new URLSearchParams()));
    });
  }

  private refusal(req: http.IncomingMessage, form: URLSearchParams | null): TwilioError | null {
    const credentials = basicCredentials(req.headers.authorization);
    if (credentials?.user !== this.accountSid || credentials.password !== this.authToken) {
      return { status: 401, code: 20003, message: 'Authenticate' };
    }
    if (req.url !== `/2010-04-01/Accounts/${this.accountSid}/Messages.json`) {
      return {
        status: 404,
        code: 20404,
        message: `The requested resource ${req.url} was not found`,
      };
    }
    if (req.method !== 'POST') return { status: 405, code: 20004, message: 'Method not allowed' };
    // A body in another encoding is not read at all: every field is then missing.
    const field = (name: string) => form?.get(name) ?? '';
    if (field('To') === '') return { status: 400, code: 21604, message: "A 'To' phone number is required." };
    if (!/^\+[1-9][0-9]{6,14}$/.test(field('To'))) {
      return { status: 400, code: 21211, message: `Invalid 'To' Phone Number: ${field('To')}` };
    }
    if (field('From') === '')
      return { status: 400, code: 21603, message: "A 'From' phone number is required." };
    if (field('Body') === '') return { status: 400, code: 21602, message: 'Message body is required.' };
    if (field('Body').length > 1600) {
      return {
        status: 400,
        code: 21617,
        message: 'The concatenated message body exceeds the 1600 character limit.',
      };
    }
    return null;
  }

  private messageResource(form: URLSearchParams): Record<string, unknown> {
    const sid = `SM${randomBytes(16).toString('hex')}`;
    const now = new Date().toUTCString().replace('GMT', '+0000');
    const base = `/2010-04-01/Accounts/${this.accountSid}/Messages/${sid}`;
    return {
      account_sid: this.accountSid,
      api_version: '2010-04-01',
      body: form.get('Body'),
      date_created: now,
      date_sent: null,
      date_updated: now,
      direction: 'outbound-api',
      error_code: null,
      error_message: null,
      from: form.get('From'),
      messaging_service_sid: null,
      num_media: '0',
      num_segments: String(Math.ceil((form.get('Body')?.length ?? 0) / 153) || 1),
      price: null,
      price_unit: 'USD',
      sid,
      status: 'queued',
      subresource_uris: { media: `${base}/Media.json` },
      to: form.get('To'),
      uri: `${base}.json`,
    };
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
