/**
 * Outgoing e-mail (contract §0 `SMTP_URL`). Every message is first kept in `email_outbox`.
 *
 * Without SMTP it is stored `logged` and stays there for operators to read: never lost, never sent.
 *
 * With SMTP it is stored `pending`: a job of the one job engine (ADR 020, the kind in
 * mail-job.ts), not a send of the request. `send()` resolves once the row is stored and wakes
 * this process's mail worker (`signal`); the worker claims the message with a lease, sends it
 * through this transport and records the outcome — `sent`, or a retry on MAIL_RETRY_SCHEDULE_MS
 * (1 min … 6 h), or `failed` for good after the last attempt (or at once when the server refuses
 * the message itself), its reason kept with the credentials of SMTP_URL blanked. So a mail server
 * that is down or refuses connections delays messages instead of losing them, and a password-reset
 * mail still goes out after the answer (contract §2.1).
 *
 * Who sends: the engine's mail worker, which runs in the API server (unless RUN_WORKER=false)
 * and in worker processes; an API node with RUN_WORKER=false only stores, and a worker process
 * finds its messages by its poll (WEBHOOK_POLL_INTERVAL). Several processes on one database
 * send each message once: claims take disjoint messages under leases (at least once if a process
 * dies mid-send: the lease runs out and another sends it again). Stopping a process never loses
 * a message: the engine gives back claimed messages not started and finishes those in flight;
 * one still pending is sent by the next process. `close()` sends nothing.
 *
 * `idle()`, for tests and tools: makes every message due now go out — it waits for this process's
 * mail worker's claims and sends, and runs rounds of the kind itself for what no worker took — so
 * a caller reads the outcome (the SMTP server's mailbox, the outbox row) right after it, whether
 * or not the process runs the engine. Test apps run a mail worker like a server does.
 *
 * Workflow e-mail actions use `sendNow` instead: one attempt through the same transport, its
 * outcome awaited, nothing kept here (the workflow's own job records and retries it).
 */
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Db, DialectCapabilities } from '../db/database.ts';
import type { WakeSignal } from '../jobs/wake-signal.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import { insertOutboxMessage } from './email-outbox.repository.ts';
import { createMailJobWorker, MailJobKind, type MailWorker } from './mail-job.ts';

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
  /** The e-mail job kind: the engine's mail worker runs it (engine.ts `createMailWorker`). */
  readonly jobKind: MailJobKind;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly signal: WakeSignal | undefined;
  private readonly transport: Transport | undefined;
  private readonly credentials: readonly string[];
  /** Runs `idle()`'s rounds; made on first use. */
  private drainWorker: MailWorker | undefined;
  private draining: Promise<void> | undefined;

  constructor(deps: {
    db: Db;
    capabilities: DialectCapabilities;
    clock: Clock;
    logger: Logger;
    smtpUrl: string | undefined;
    /** Woken when a message is stored `pending` (deps.signals.mail). */
    signal?: WakeSignal;
  }) {
    this.db = deps.db;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.signal = deps.signal;
    this.transport = deps.smtpUrl ? createSmtpTransport(deps.smtpUrl) : undefined;
    this.credentials = smtpCredentials(deps.smtpUrl);
    const transport = this.transport;
    this.jobKind = new MailJobKind({
      db: deps.db,
      capabilities: deps.capabilities,
      clock: deps.clock,
      logger: deps.logger,
      send: transport
        ? async (message) => {
            await transport.sendMail({ from: MAIL_FROM, ...message });
          }
        : undefined,
      redact: (text) => this.redact(text),
    });
  }

  /** False without SMTP_URL: messages are kept `logged`, and nobody receives them. */
  get sends(): boolean {
    return this.transport !== undefined;
  }

  /** Stores a message (`pending` for the mail worker, or `logged` without SMTP); resolves once stored. */
  async send(message: MailMessage): Promise<void> {
    const id = uuidv7();
    const status = this.transport ? 'pending' : 'logged';
    await insertOutboxMessage(this.db, { id, message, now: this.clock.now(), status });
    if (status === 'pending') {
      this.signal?.notify();
      return;
    }
    this.logger.info(
      { mailId: id, to: message.to, subject: message.subject },
      'e-mail kept in outbox (no SMTP_URL)',
    );
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

  /**
   * Resolves once no message is due now and none is being sent by this process: waits for the
   * mail workers' claims and sends, and sends what none of them took (see the header).
   */
  idle(): Promise<void> {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
    return this.draining;
  }

  private async drain(): Promise<void> {
    this.drainWorker ??= createMailJobWorker(this.jobKind, { clock: this.clock, logger: this.logger });
    for (;;) {
      await this.jobKind.settled();
      const claimed = await this.drainWorker.runOnce();
      // Nothing left to take, and no other claim under way that may have taken it meanwhile.
      if (claimed === 0 && this.jobKind.isSettled) return;
    }
  }

  /** Closes the transport once an `idle()` under way is done; sends nothing (pending messages stay). */
  async close(): Promise<void> {
    await this.draining;
    this.transport?.close();
  }
}
