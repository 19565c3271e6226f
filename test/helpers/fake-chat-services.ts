/**
 * One loopback HTTP server standing in for the incoming webhooks of Slack, Discord and Microsoft
 * Teams, routed by path the way their URLs look. Each request is checked against what the real
 * service accepts and answered the way it answers: Slack 200 `ok` (400 `invalid_payload`,
 * `no_text`, `invalid_blocks`), Discord 204 (400/404 JSON errors), Teams 200 `1` (400 text).
 * Every request is recorded, with the reason a malformed one was refused, so a test can assert
 * both the wire format and that nothing malformed was sent. A path can be told to answer
 * otherwise (a status and body, a redirect), to never answer, or to stall after the headers.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ChatService = 'slack' | 'discord' | 'teams';

export const SLACK_PATH = '/services/T0001SLACK/B0002HOOK/XyZsecretSlackToken123456';
export const DISCORD_PATH = '/api/webhooks/112233445566778899/DiscordSecretToken-abcdefghijklmnop';
export const TEAMS_PATH =
  '/webhookb2/0f8fad5b-d9cb-469f-a165-70867728950e@1b4e28ba-2fa1-11d2-883f-0016d3cca427/IncomingWebhook/7c9e6679742540de944be07fc1f90ae7/a3bb189e-8bf9-3888-9912-ace4e6543002';

const ROUTES: ReadonlyArray<readonly [RegExp, ChatService]> = [
  [/^\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]+$/, 'slack'],
  [/^\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+$/, 'discord'],
  [/^\/webhookb2\/[^/]+\/IncomingWebhook\/[0-9a-f]+\/[0-9a-f-]+$/, 'teams'],
];

export interface ChatRequest {
  service: ChatService | null;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  /** The parsed JSON body, or undefined when it was not JSON. */
  json: unknown;
  /** Why the service refused the request's shape; null when it was well formed. */
  problem: string | null;
}

export type ScriptedReply =
  | { status: number; body?: string; headers?: Record<string, string> }
  | { hang: true }
  | { stallAfterHeaders: true };

interface Answer {
  status: number;
  body: string;
  contentType: string;
}

export class FakeChatServices {
  readonly received: ChatRequest[] = [];
  private readonly server: http.Server;
  private readonly scripted = new Map<string, ScriptedReply>();

  private constructor(server: http.Server) {
    this.server = server;
  }

  static async start(): Promise<FakeChatServices> {
    const server = http.createServer();
    const fake = new FakeChatServices(server);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => fake.handle(req, res));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return fake;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  /** Requests to `path` get `reply` instead of the service's own answer, until `reset()`. */
  answer(path: string, reply: ScriptedReply): void {
    this.scripted.set(path, reply);
  }

  reset(): void {
    this.scripted.clear();
    this.received.length = 0;
  }

  /** The well-formed requests that reached `service`. */
  accepted(service: ChatService): ChatRequest[] {
    return this.received.filter((r) => r.service === service && r.problem === null);
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
      const path = req.url ?? '';
      const raw = Buffer.concat(chunks).toString('utf8');
      const service = ROUTES.find(([pattern]) => pattern.test(path))?.[1] ?? null;
      const json = parseJson(raw);
      const { answer, problem } = judge(service, req, json);
      this.received.push({
        service,
        method: req.method ?? '',
        path,
        headers: req.headers,
        raw,
        json,
        problem,
      });
      const scripted = this.scripted.get(path);
      if (scripted && 'hang' in scripted) return; // the socket stays open until close()
      if (scripted && 'stallAfterHeaders' in scripted) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('o'); // …and the rest never comes
        return;
      }
      if (scripted) {
        res.writeHead(scripted.status, { 'content-type': 'text/plain; charset=utf-8', ...scripted.headers });
        res.end(scripted.body ?? '');
        return;
      }
      res.writeHead(answer.status, answer.body === '' ? {} : { 'content-type': answer.contentType });
      res.end(answer.body);
    });
  }
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

function judge(
  service: ChatService | null,
  req: http.IncomingMessage,
  json: unknown,
): { answer: Answer; problem: string | null } {
  switch (service) {
    case 'slack':
      return slack(req, json);
    case 'discord':
      return discord(req, json);
    case 'teams':
      return teams(req, json);
    default:
      return { answer: text(404, 'Not Found'), problem: 'no such webhook path' };
  }
}

const text = (status: number, body: string): Answer => ({
  status,
  body,
  contentType: 'text/plain; charset=utf-8',
});
const jsonAnswer = (status: number, body: unknown): Answer => ({
  status,
  body: JSON.stringify(body),
  contentType: 'application/json',
});

const isJsonRequest = (req: http.IncomingMessage): boolean =>
  (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const ok = (answer: Answer) => ({ answer, problem: null });
const refused = (answer: Answer, problem: string) => ({ answer, problem });

/** https://api.slack.com/messaging/webhooks and the block kit limits of a section block. */
function slack(req: http.IncomingMessage, json: unknown) {
  if (req.method !== 'POST') return refused(text(405, 'invalid_method'), `method ${req.method}`);
  if (!isJsonRequest(req)) return refused(text(400, 'invalid_payload'), 'content-type is not JSON');
  if (!isObject(json)) return refused(text(400, 'invalid_payload'), 'body is not a JSON object');
  const { text: message, blocks } = json;
  if (message !== undefined && typeof message !== 'string') {
    return refused(text(400, 'invalid_payload'), 'text is not a string');
  }
  if (blocks === undefined && (typeof message !== 'string' || message.trim() === '')) {
    return refused(text(400, 'no_text'), 'neither text nor blocks');
  }
  if (blocks !== undefined) {
    if (!Array.isArray(blocks) || blocks.length === 0 || blocks.length > 50) {
      return refused(text(400, 'invalid_blocks'), 'blocks is not an array of 1..50');
    }
    for (const block of blocks) {
      const problem = sectionProblem(block);
      if (problem) return refused(text(400, 'invalid_blocks'), problem);
    }
  }
  return ok(text(200, 'ok'));
}

function sectionProblem(block: unknown): string | null {
  if (!isObject(block) || block.type !== 'section') return 'a block is not a section';
  const inner = block.text;
  if (!isObject(inner) || (inner.type !== 'mrkdwn' && inner.type !== 'plain_text')) {
    return 'a section text is not a mrkdwn or plain_text object';
  }
  if (typeof inner.text !== 'string' || inner.text.length < 1 || inner.text.length > 3000) {
    return 'a section text is not a string of 1..3000 characters';
  }
  return null;
}

/** https://discord.com/developers/docs/resources/webhook#execute-webhook */
function discord(req: http.IncomingMessage, json: unknown) {
  const invalidJson = jsonAnswer(400, { code: 50109, message: 'The request body contains invalid JSON.' });
  if (req.method !== 'POST') {
    return refused(jsonAnswer(405, { message: '405: Method Not Allowed', code: 0 }), `method ${req.method}`);
  }
  if (!isJsonRequest(req) || !isObject(json)) return refused(invalidJson, 'body is not a JSON object');
  const { content, allowed_mentions: mentions } = json;
  if (content !== undefined && typeof content !== 'string') {
    return refused(invalidForm('content', 'Could not interpret "content" as string.'), 'content type');
  }
  if (typeof content !== 'string' || content.trim() === '') {
    return refused(jsonAnswer(400, { message: 'Cannot send an empty message', code: 50006 }), 'empty');
  }
  if (content.length > 2000) {
    return refused(invalidForm('content', 'Must be 2000 or fewer in length.'), 'content over 2000');
  }
  if (mentions !== undefined) {
    const parse = isObject(mentions) ? mentions.parse : undefined;
    const known = ['roles', 'users', 'everyone'];
    if (!Array.isArray(parse) || !parse.every((p) => known.includes(p as string))) {
      return refused(invalidForm('allowed_mentions', 'Invalid allowed mentions.'), 'allowed_mentions');
    }
  }
  return ok({ status: 204, body: '', contentType: '' });
}

function invalidForm(field: string, message: string): Answer {
  return jsonAnswer(400, {
    message: 'Invalid Form Body',
    code: 50035,
    errors: { [field]: { _errors: [{ code: 'BASE_TYPE_INVALID', message }] } },
  });
}

/** Office 365 connector MessageCard, as the legacy Teams incoming webhook validates it. */
function teams(req: http.IncomingMessage, json: unknown) {
  const bad = text(400, 'Bad payload received by generic incoming webhook.');
  if (req.method !== 'POST') return refused(text(405, 'Method Not Allowed'), `method ${req.method}`);
  if (!isJsonRequest(req) || !isObject(json)) return refused(bad, 'body is not a JSON object');
  if (json['@type'] !== 'MessageCard' || json['@context'] !== 'https://schema.org/extensions') {
    return refused(bad, 'not a MessageCard');
  }
  const hasText = (v: unknown) => typeof v === 'string' && v.trim() !== '';
  if (!hasText(json.summary) && !hasText(json.text)) {
    return refused(text(400, 'Summary or Text is required.'), 'neither summary nor text');
  }
  for (const field of ['summary', 'title', 'text', 'themeColor']) {
    if (json[field] !== undefined && typeof json[field] !== 'string') return refused(bad, `${field} type`);
  }
  if (json.sections !== undefined) {
    if (!Array.isArray(json.sections)) return refused(bad, 'sections is not an array');
    for (const section of json.sections) {
      const facts = isObject(section) ? section.facts : undefined;
      if (facts === undefined) continue;
      const valid =
        Array.isArray(facts) &&
        facts.every((f) => isObject(f) && typeof f.name === 'string' && typeof f.value === 'string');
      if (!valid) return refused(bad, 'facts are not {name, value} strings');
    }
  }
  return ok(text(200, '1'));
}
