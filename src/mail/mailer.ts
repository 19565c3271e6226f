/**
 * Outgoing e-mail (contract §0 `SMTP_URL`). Every message is first kept in `email_outbox`; with
 * SMTP configured it is then sent through nodemailer, otherwise it is logged and stays there for
 * operators: never lost. Sending happens after the request's transaction and off the request's
 * critical path; `idle()` lets shutdown and tests wait for sends in flight.
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
    to: string;
    subject: string;
    text: string;
    html: string;
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

export class Mailer {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly transport: Transport | undefined;

  constructor(deps: { db: Db; clock: Clock; logger: Logger; smtpUrl: string | undefined }) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.transport = deps.smtpUrl ? createSmtpTransport(deps.smtpUrl) : undefined;
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

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async close(): Promise<void> {
    await this.idle();
    this.transport?.close();
  }
}
