/**
 * A real SMTP server on 127.0.0.1 (random port) that keeps every message it receives, so tests
 * read verification, reset and invitation e-mails the way a user would: over SMTP. Start the app
 * with `SMTP_URL: sink.url`. The MIME parsing is just enough for the service's own messages
 * (multipart/alternative, quoted-printable or base64 parts, encoded-word subjects).
 */
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { callerOutsideHelpers, trackFixture } from './open-fixtures.ts';

export interface SinkMessage {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO), lower-cased. */
  to: string[];
  subject: string;
  text: string;
  html: string;
  raw: string;
  /** The value of the first `token: <value>` line of the text part, if any. */
  token: string | undefined;
}

export interface SmtpSink {
  url: string;
  port: number;
  readonly messages: readonly SinkMessage[];
  /** Resolves with the first message (already received or arriving later) that matches. */
  waitFor(predicate: (message: SinkMessage) => boolean, timeoutMs?: number): Promise<SinkMessage>;
  /** Messages whose envelope recipients include `address` (case-insensitive). */
  messagesTo(address: string): SinkMessage[];
  close(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
  const openedAt = callerOutsideHelpers();
  const messages: SinkMessage[] = [];
  const arrivals = new EventEmitter();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', (error) => callback(error));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const envelope = session.envelope;
        const message = parseMessage(
          raw,
          envelope.mailFrom ? envelope.mailFrom.address : '',
          envelope.rcptTo.map((r) => r.address.toLowerCase()),
        );
        messages.push(message);
        arrivals.emit('message', message);
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  const closed = trackFixture('SMTP sink', openedAt);

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    messagesTo: (address) => messages.filter((m) => m.to.includes(address.toLowerCase())),
    waitFor(predicate, timeoutMs = 5000) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise<SinkMessage>((resolve, reject) => {
        const onMessage = (message: SinkMessage) => {
          if (!predicate(message)) return;
          clearTimeout(timer);
          arrivals.off('message', onMessage);
          resolve(message);
        };
        const timer = setTimeout(() => {
          arrivals.off('message', onMessage);
          const seen = messages.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none';
          reject(new Error(`no matching e-mail within ${timeoutMs} ms (received: ${seen})`));
        }, timeoutMs);
        arrivals.on('message', onMessage);
      });
    },
    close: () =>
      new Promise<void>((resolve) =>
        server.close(() => {
          closed();
          resolve();
        }),
      ),
  };
}

interface MimePart {
  headers: Map<string, string>;
  body: string;
}

function splitPart(raw: string): MimePart {
  const normalized = raw.replace(/\r\n/g, '\n');
  const end = normalized.indexOf('\n\n');
  const head = end === -1 ? normalized : normalized.slice(0, end);
  const body = end === -1 ? '' : normalized.slice(end + 2);
  const headers = new Map<string, string>();
  // Unfold continuation lines, then split "Name: value".
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function headerParam(value: string, name: string): string | undefined {
  const match = new RegExp(`${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(value);
  return match ? (match[1] ?? match[2]) : undefined;
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const softBroken = text.replace(/=\n/g, '');
  for (let i = 0; i < softBroken.length; i++) {
    const char = softBroken[i] ?? '';
    const hex = softBroken.slice(i + 1, i + 3);
    if (char === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(char, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function decodeBody(part: MimePart): string {
  const encoding = (part.headers.get('content-transfer-encoding') ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(part.body);
  return part.body;
}

/** RFC 2047 encoded words (`=?UTF-8?Q?...?=` / `=?UTF-8?B?...?=`), as nodemailer writes them. */
function decodeHeader(value: string): string {
  return value
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_all, _charset: string, kind: string, data: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('utf8')
        : decodeQuotedPrintable(data.replace(/_/g, ' ')),
    );
}

/** Leaf parts (text/plain, text/html, …) of a possibly nested multipart message. */
function leafParts(part: MimePart): MimePart[] {
  const type = part.headers.get('content-type') ?? 'text/plain';
  if (!/^multipart\//i.test(type)) return [part];
  const boundary = headerParam(type, 'boundary');
  if (!boundary) return [part];
  const sections = part.body.split(`--${boundary}`);
  // sections[0] is the preamble; the part after the closing "--boundary--" starts with "--".
  return sections
    .slice(1)
    .filter((s) => !s.startsWith('--'))
    .flatMap((s) => leafParts(splitPart(s.replace(/^\n/, ''))));
}

export function parseMessage(raw: string, from: string, to: string[]): SinkMessage {
  const root = splitPart(raw);
  let text = '';
  let html = '';
  for (const leaf of leafParts(root)) {
    const type = (leaf.headers.get('content-type') ?? 'text/plain').toLowerCase();
    if (type.startsWith('text/plain') && !text) text = decodeBody(leaf);
    else if (type.startsWith('text/html') && !html) html = decodeBody(leaf);
  }
  const token = /token: *(\S+)/i.exec(text)?.[1];
  return { from, to, subject: decodeHeader(root.headers.get('subject') ?? ''), text, html, raw, token };
}
