/**
 * The `email` action (contract §6): one plain-text message to all recipients through the
 * service's SMTP transport (SMTP_URL), sent at once so the attempt records the server's answer.
 * Subject and body are templates with plain-text escaping; the subject is one header line, so
 * line breaks a value brings into it become spaces and cannot add headers.
 */
import type { ActionConfigs } from '../action-configs.schemas.ts';
import { defaultSubject, renderTemplate, type TemplateContext } from '../templates.ts';
import type { ActionExecutor, ActionOutcome } from './action.ts';

/** What an outcome keeps of the server's reply or of an error (contract §6: ≤ 1 KiB). */
const EXCERPT_BYTES = 1024;

export const emailAction: ActionExecutor<ActionConfigs['email']> = {
  async execute(config, context, runtime) {
    const subject = emailSubject(config, context);
    const text =
      config.body === undefined ? defaultEmailBody(context) : renderTemplate(config.body, context, 'text');
    try {
      const { response } = await runtime.mail.sendNow({ to: config.to, subject, text });
      return outcome(true, null, response === '' ? null : cut(response));
    } catch (error) {
      return outcome(false, cut(error instanceof Error ? error.message : String(error)), null);
    }
  },
};

/**
 * The subject line: the rendered template or the default. A subject is one header line, so each
 * line break (CRLF, CR or LF) a value brings in becomes one space and cannot start a new header.
 */
export function emailSubject(config: ActionConfigs['email'], context: TemplateContext): string {
  const subject =
    config.subject === undefined ? defaultSubject(context) : renderTemplate(config.subject, context, 'text');
  return subject.replace(/\r\n|[\r\n]/g, ' ');
}

/** The body when the action has none: the event in words, then its facts one per line. */
export function defaultEmailBody(context: TemplateContext): string {
  const lines = [
    `${defaultSubject(context)}.`,
    '',
    `Device: ${context.device.name} (${context.device.id})`,
    `Event: ${context.event}`,
    `Geofence: ${context.geofence.name} (${context.geofence.id})`,
    `Point: ${context.point.lat}, ${context.point.lng}`,
    `Time: ${context.occurred_at}`,
    `Event id: ${context.event_id}`,
    '',
    `Sent by the workflow "${context.workflow.name}"${context.test ? ' as a test run' : ''}.`,
  ];
  return `${lines.join('\n')}\n`;
}

function outcome(
  success: boolean,
  errorMessage: string | null,
  responseExcerpt: string | null,
): ActionOutcome {
  return { success, statusCode: null, errorMessage, responseExcerpt };
}

/** At most EXCERPT_BYTES of UTF-8, never ending in half a character. */
function cut(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= EXCERPT_BYTES) return text;
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, EXCERPT_BYTES), {
    stream: true,
  });
}
