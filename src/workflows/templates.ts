/**
 * Workflow templates (contract §6, ADR 014): `message`, `subject` and `body` are Mustache
 * templates (the `mustache` package: logic-less, sections and inverted sections, no partials)
 * over the variables of `TemplateContext`. An unknown variable renders empty. Escaping depends
 * on the target, never on the template: plain text for e-mail, SMS and JSON targets (their
 * bodies are then built by serialisation, so quotes and line breaks stay data), and Slack's own
 * `&`, `<`, `>` escaping for Slack's mrkdwn text. `{{{x}}}` and `{{&x}}` are accepted and render
 * like `{{x}}`: the target decides the escaping, so a template cannot switch it off. Names resolve
 * to the context's own data only, never to inherited members such as `constructor` or `toString`.
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
    tokens = new Mustache.Writer().parse(template);
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
  return new TargetEscapedWriter((value) => escapeValue(stringOf(value))).render(
    template,
    new DataContext(context),
  );
}

/**
 * Mustache's writer with the target's escaping on every value: unescaped tags (`{{{x}}}`, `{{&x}}`,
 * and their forms under delimiters changed with `{{=<% %>=}}`) are rendered like escaped ones. A
 * fresh writer per call: Mustache's shared one caches every template it ever parsed.
 */
class TargetEscapedWriter extends Mustache.Writer {
  private readonly options: Mustache.RenderOptions;

  constructor(escapeValue: (value: unknown) => string) {
    super();
    this.options = { escape: escapeValue };
  }

  override render(template: string, view: Mustache.Context): string {
    return super.render(template, view, undefined, this.options);
  }

  override unescapedValue(token: string[], context: Mustache.Context): string {
    return this.escapedValue(token, context, this.options);
  }
}

/**
 * The lookup of names over data: own properties of objects and arrays only. Mustache's own lookup
 * follows prototypes and calls the functions it finds, so `{{metadata.__defineGetter__}}` threw
 * and `{{device.metadata.tags.push}}` changed the context; here both are unknown names (empty).
 */
class DataContext extends Mustache.Context {
  override push(view: unknown): Mustache.Context {
    return new DataContext(view, this);
  }

  override lookup(name: string): unknown {
    if (name === '.') return this.view;
    const path = name.split('.');
    for (let context: Mustache.Context | undefined = this; context; context = context.parent) {
      const found = ownPath(context.view, path);
      if (found) return found.value;
    }
    return undefined;
  }
}

function ownPath(view: unknown, path: readonly string[]): { value: unknown } | undefined {
  let value = view;
  for (const name of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, name)) return undefined;
    value = (value as Record<string, unknown>)[name];
  }
  return typeof value === 'function' ? undefined : { value };
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
