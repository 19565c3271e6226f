/**
 * Where on the dashboard a notification is acted on. The server's text of a dead letter or a failed
 * workflow action ends with the API call that retries it (`Retry it with POST /api/v1/…`), which
 * suits an e-mail read by an API user; on the dashboard the reader gets a link to the page that
 * retries instead, and the text without the call.
 */
import type { Schemas } from '../../api/client.ts';

type Notification = Schemas['Notification'];

export interface NextStep {
  href: string;
  label: string;
}

const API_RETRY = /\s*Retry (?:it|the run) with POST \/api\/v1\/\S+$/;

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export function nextStep(notification: Notification): NextStep | null {
  const data = notification.data;
  if (notification.type === 'webhook.dead_letter') {
    const webhook = text(data.webhook_id);
    const name = text(data.webhook_name);
    return {
      href: webhook
        ? `/webhooks/dead-letters?webhook=${encodeURIComponent(webhook)}`
        : '/webhooks/dead-letters',
      label: name ? `Review and retry the dead letters of “${name}”` : 'Review and retry the dead letters',
    };
  }
  if (notification.type === 'workflow.action_failed') {
    const workflow = text(data.workflow_id);
    if (!workflow) return null;
    const runs = Array.isArray(data.run_ids) ? data.run_ids.filter((id) => text(id)) : [];
    const base = `/workflows/${encodeURIComponent(workflow)}/runs`;
    const name = text(data.workflow_name);
    return runs.length === 1
      ? { href: `${base}/${encodeURIComponent(String(runs[0]))}`, label: 'Review and retry the failed run' }
      : { href: base, label: name ? `Review and retry the runs of “${name}”` : 'Review and retry the runs' };
  }
  return null;
}

/** The notification's text as the dashboard shows it: without the API call when a link replaces it. */
export function bodyText(notification: Notification): string {
  return nextStep(notification) ? notification.body.replace(API_RETRY, '') : notification.body;
}
