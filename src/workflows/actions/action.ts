/**
 * The one interface every workflow action type implements (contract §6, ADR 014). The worker
 * hands an executor the action's config with its secrets opened, the event the run is about and
 * the runtime (guarded HTTP client, mail transport, database pools, timeouts); the executor makes
 * exactly one attempt and reports its outcome. Retries, leases and records are the worker's.
 */
import type { Dispatcher } from 'undici';
import type { HostLookup } from '../../outbound/outbound-guard.ts';
import type { TemplateContext } from '../templates.ts';

export interface ActionOutcome {
  success: boolean;
  /** The target's HTTP status (chat, Twilio, AWS), or null where there is none (SMTP, database). */
  statusCode: number | null;
  /** Why the attempt failed, in words an operator can act on; never holds a secret. */
  errorMessage: string | null;
  /** At most 1 KiB of what the target answered (response body, SMTP reply, inserted row id). */
  responseExcerpt: string | null;
  /**
   * A failure that another attempt would repeat exactly (a template past its rendering bounds):
   * the action fails for good at once instead of waiting out the retry schedule.
   */
  final?: boolean;
}

/** A sent e-mail's outcome comes back to the caller (unlike account mail, which is queued). */
export interface MailSender {
  sendNow(message: { to: string[]; subject: string; text: string }): Promise<{ response: string }>;
}

export interface ActionRuntime {
  /** Undici dispatcher with the SSRF guard (or without it when private targets are allowed). */
  dispatcher: Dispatcher;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: non-HTTP targets (AWS endpoints, database hosts) honour it too. */
  allowPrivateTargets: boolean;
  /** DNS resolution and address policy of the guard, replaceable in tests. */
  lookup?: HostLookup;
  classify?: (ip: string) => string | null;
  /** Bound on one attempt: connect, request and response together. */
  timeoutMs: number;
  mail: MailSender;
  /** Customer PostgreSQL pools of `database` actions, one per target, closed when idle. */
  databases: DatabaseTargets;
}

export interface DatabaseTargets {
  /** Inserts one event row into `table` at `connectionUrl`; resolves with the new row's id. */
  insertEvent(connectionUrl: string, table: string, row: DatabaseEventRow): Promise<string>;
  close(): Promise<void>;
}

export interface DatabaseEventRow {
  eventId: string;
  eventType: string;
  payload: string;
  createdAt: Date;
}

export interface ActionExecutor<Config> {
  execute(config: Config, context: TemplateContext, runtime: ActionRuntime): Promise<ActionOutcome>;
}
