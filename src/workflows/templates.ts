/**
 * Workflow templates (contract §6, ADR 014): `message`, `subject` and `body` are Mustache
 * templates (the `mustache` package: logic-less, sections and inverted sections, no partials)
 * over the variables of `TemplateContext`. An unknown variable renders empty. Escaping depends
 * on the target, never on the template: plain text for e-mail, SMS and JSON targets (their
 * bodies are then built by serialisation, so quotes and line breaks stay data), and Slack's own
 * `&`, `<`, `>` escaping for Slack's mrkdwn text. `{{{x}}}` and `{{&x}}` are accepted and render
 * like `{{x}}`: the target decides the escaping, so a template cannot switch it off.
 */
import Mustache from 'mustache';

export interface TemplateContext {
  event: 'geofence.enter' | 'geofence.exit' | 'geofence.dwell';
  event_type: 'enter' | 'exit' | 'dwell';
  /** Seed §6.3 `event_id`. */
  event_id: string;
  occurred_at: string;
  geofence: { id: string; name: string; metadata: Record<string, unknown> };
  device: {
    id: string;
    name: string;
    external_id: string | null;
    user_id: string | null;
    metadata: Record<string, unknown>;
  };
  point: { lat: number; lng: number };
  /** The event's own metadata (`event_metadata` of the record). */
  metadata: Record<string, unknown>;
  workflow: { id: string; name: string };
  /** The seed §6.3 webhook payload as JSON text (what `database`, `lambda` and `sns` send). */
  payload_json: string;
  /** True for a run started by POST /workflows/{id}/test. */
  test: boolean;
}

/** The variables documented in the OpenAPI description of workflows. */
export const TEMPLATE_VARIABLES = [
  'event',
  'event_type',
  'event_id',
  'occurred_at',
  'geofence.id',
  'geofence.name',
  'geofence.metadata.<key>',
  'device.id',
  'device.name',
  'device.external_id',
  'device.user_id',
  'device.metadata.<key>',
  'point.lat',
  'point.lng',
  'metadata.<key>',
  'workflow.id',
  'workflow.name',
  'payload_json',
  'test',
] as const;

export type Escaping = 'text' | 'slack';

export const ESCAPES: Record<Escaping, (value: string) => string> = {
  text: (value) => value,
  // https://api.slack.com/reference/surfaces/formatting#escaping: exactly these three.
  slack: (value) => value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;'),
};

/** Why `template` cannot be used, or null when it renders. Run when a workflow is saved. */
export function templateProblem(template: string): string | null {
  let tokens: unknown[];
  try {
    tokens = Mustache.parse(template);
  } catch (error) {
    return `Invalid template: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (hasPartial(tokens)) return 'Invalid template: partials ({{> name}}) are not supported';
  return null;
}

function hasPartial(tokens: readonly unknown[]): boolean {
  for (const token of tokens) {
    if (!Array.isArray(token)) continue;
    if (token[0] === '>') return true;
    if (Array.isArray(token[4]) && hasPartial(token[4] as unknown[])) return true;
  }
  return false;
}

/** Renders `template` over `context`, each value escaped for the target. */
export function renderTemplate(template: string, context: TemplateContext, escaping: Escaping): string {
  const escapeValue = ESCAPES[escaping];
  // Triple mustaches would bypass `escape`: rewrite them to the escaped form first.
  const uniform = template
    .replace(/\{\{\{\s*([^}]*?)\s*\}\}\}/g, '{{$1}}')
    .replace(/\{\{&\s*([^}]*?)\s*\}\}/g, '{{$1}}');
  return Mustache.render(uniform, context, undefined, {
    escape: (value: unknown) => escapeValue(stringOf(value)),
  });
}

function stringOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const VERBS = { enter: 'entered', exit: 'left', dwell: 'has stayed in' } as const;

/** The default one-line message: "Truck 7 entered Depot (52.52, 13.405) at 2026-…Z". */
export function defaultMessage(context: TemplateContext): string {
  const prefix = context.test ? '[test] ' : '';
  return `${prefix}${context.device.name} ${VERBS[context.event_type]} ${context.geofence.name} (${context.point.lat}, ${context.point.lng}) at ${context.occurred_at}`;
}

/** The default subject line of e-mail actions. */
export function defaultSubject(context: TemplateContext): string {
  const prefix = context.test ? '[test] ' : '';
  return `${prefix}${context.device.name} ${VERBS[context.event_type]} ${context.geofence.name}`;
}
