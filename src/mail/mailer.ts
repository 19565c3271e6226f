/**
 * Outgoing e-mail (contract §0 `SMTP_URL`). Every message is first kept in `email_outbox`; with
 * SMTP configured it is then sent through nodemailer, otherwise it is logged and stays there for
 * operators: never lost. Sending happens after the request's transaction and off the request's
 * critical path; `idle()` lets shutdown and tests wait for sends in flight. Workflow e-mail
 * actions use `sendNow` instead: one attempt through the same transport, its outcome awaited.
 */
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import { insertOutboxMessage, markOutboxFailed, markOutboxSent } from './email-outbox.repository.ts';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Transport {
  sendMail(message: {
    from: string;
    to: string | string[];
    subject: string;
    text: string;
    html?: string;
  }): Promise<unknown>;
  close(): void;
}

function createSmtpTransport(smtpUrl: string): Transport {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  return nodemailer.createTransport({
    host: url.hostname,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(url.username
      ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }
      : {}),
    // Fail fast: a mail server that does not answer must not hold messages for minutes.
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 10_000,
  });
}

export const MAIL_FROM = 'Geofencing Service <no-reply@geofence.local>';

export const SMTP_NOT_CONFIGURED = 'SMTP_URL is not configured: e-mail actions cannot be sent';

/**
 * The user name and password of SMTP_URL, raw and decoded: blanked in whatever `sendNow` reports,
 * should a server ever echo them. A user name under 3 characters is left alone (blanking it would
 * garble every reply); a password of any length is blanked.
 */
function smtpCredentials(smtpUrl: string | undefined): string[] {
  if (!smtpUrl || !URL.canParse(smtpUrl)) return [];
  const url = new URL(smtpUrl);
  const decode = (text: string) => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  const users = [url.username, decode(url.username)].filter((user) => user.length >= 3);
  const passwords = [url.password, decode(url.password)].filter((password) => password.length > 0);
  // Longest first, so a password containing the user name is blanked whole.
  return [...new Set([...users, ...passwords])].sort((a, b) => b.length - a.length);
}

/** The server's reply to the message, and the recipients it refused when it took the rest. */
function acceptance(info: unknown): string {
  const sent = (info ?? {}) as { response?: unknown; rejectedErrors?: unknown };
  const response = typeof sent.response === 'string' ? sent.response : '';
  const refused = Array.isArray(sent.rejectedErrors)
    ? sent.rejectedErrors.map(
        (error: { recipient?: unknown; response?: unknown }) =>
          `${String(error.recipient)}: ${String(error.response)}`,
      )
    : [];
  return refused.length === 0 ? response : `${response} (refused: ${refused.join('; ')})`;
}

/** Also the `MailSender` of workflow e-mail actions (workflows/actions/action.ts), by its shape. */
export class Mailer {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly transport: Transport | undefined;
  private readonly credentials: readonly string[];

  constructor(deps: { db: Db; clock: Clock; logger: Logger; smtpUrl: string | undefined }) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.transport = deps.smtpUrl ? createSmtpTransport(deps.smtpUrl) : undefined;
    this.credentials = smtpCredentials(deps.smtpUrl);
  }

  /** Queues a message; resolves once it is stored (delivery continues in the background). */
  async send(message: MailMessage): Promise<void> {
    const id = uuidv7();
    await insertOutboxMessage(this.db, { id, message, now: this.clock.now() });
    if (!this.transport) {
      this.logger.info(
        { mailId: id, to: message.to, subject: message.subject },
        'e-mail kept in outbox (no SMTP_URL)',
      );
      return;
    }
    const delivery = this.deliver(id, message).finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
  }

  private async deliver(id: string, message: MailMessage): Promise<void> {
    const transport = this.transport;
    if (!transport) return;
    try {
      await transport.sendMail({ from: MAIL_FROM, ...message });
      await markOutboxSent(this.db, id, this.clock.now());
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.error({ mailId: id, to: message.to, err: reason }, 'e-mail delivery failed');
      await markOutboxFailed(this.db, id, reason).catch(() => {});
    }
  }

  /**
   * Sends one message to all of `to` now and resolves with the server's reply line; nothing is
   * kept in the outbox (the caller records the attempt). Rejects when SMTP_URL is not configured
   * and when the server cannot be reached or refuses the message, with the server's reply (code
   * and text) in the error and never the credentials of SMTP_URL.
   */
  async sendNow(message: { to: string[]; subject: string; text: string }): Promise<{ response: string }> {
    const transport = this.transport;
    if (!transport) throw new Error(SMTP_NOT_CONFIGURED);
    let info: unknown;
    try {
      info = await transport.sendMail({
        from: MAIL_FROM,
        to: message.to,
        subject: message.subject,
        text: message.text,
      });
    } catch (error) {
      throw new Error(`SMTP: ${this.redact(error instanceof Error ? error.message : String(error))}`);
    }
    return { response: this.redact(acceptance(info)) };
  }

  private redact(text: string): string {
    return this.credentials.reduce((result, secret) => result.replaceAll(secret, '…'), text);
  }

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async close(): Promise<void> {
    await this.idle();
    this.transport?.close();
  }
}
