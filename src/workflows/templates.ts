/**
 * Workflow templates (contract §6, ADR 014): `message`, `subject` and `body` are Mustache
 * templates (the `mustache` package: logic-less, sections and inverted sections, no partials)
 * over the variables of `TemplateContext`. An unknown variable renders empty. Escaping depends
 * on the target, never on the template: plain text for e-mail, SMS and JSON targets (their
 * bodies are then built by serialisation, so quotes and line breaks stay data), and Slack's own
 * `&`, `<`, `>` escaping for Slack's mrkdwn text. `{{{x}}}` and `{{&x}}` are accepted and render
 * like `{{x}}`: the target decides the escaping, so a template cannot switch it off. Names resolve
 * to the context's own data only, never to inherited members such as `constructor` or `toString`
 * (`template-context.ts`).
 *
 * Rendering is bounded while it renders (contract §6, `template-budget.ts`): 64 KiB of output,
 * 10,000 section iterations and an internal number of steps; past one, the render stops and
 * throws `TemplateBudgetError`, whose message names the bound. Templates are parsed by
 * `template-parser.ts`, Mustache's parser with a scanner linear in the template's length.
 */
import Mustache from 'mustache';
import { RenderBudget } from './template-budget.ts';
import { DataContext } from './template-context.ts';
import { parseTemplate, type TemplateToken } from './template-parser.ts';
import { valueText } from './template-value.ts';

export {
  MAX_TEMPLATE_OUTPUT_BYTES,
  MAX_TEMPLATE_SECTION_ITERATIONS,
  MAX_TEMPLATE_STEPS,
  TemplateBudgetError,
} from './template-budget.ts';

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
  let tokens: TemplateToken[];
  try {
    tokens = parseTemplate(template);
  } catch (error) {
    return `Invalid template: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (hasPartial(tokens)) return 'Invalid template: partials ({{> name}}) are not supported';
  return null;
}

/** Objects of the context whose own keys are the documented variables under them. */
const KNOWN_OBJECTS = new Set(['geofence', 'device', 'point', 'workflow']);
/** Free-form objects: any key under them may exist (`device.metadata.<key>`). */
const OPEN_OBJECTS = ['geofence.metadata', 'device.metadata', 'metadata'];
const KNOWN_NAMES = new Set<string>([...TEMPLATE_VARIABLES, ...KNOWN_OBJECTS, ...OPEN_OBJECTS]);

const isOpen = (path: string): boolean =>
  OPEN_OBJECTS.some((open) => path === open || path.startsWith(`${open}.`));
const isKnown = (path: string): boolean => KNOWN_NAMES.has(path) || isOpen(path);

/**
 * The variables of `template` that are none of TEMPLATE_VARIABLES (`{{bogus.var}}`, a typo such as
 * `{{device.nmae}}`), in order of first use. They render empty, as Mustache does; the preview
 * names them so the empty spot in a message is not a surprise. Inside a section of a documented
 * object (`{{#device}}{{name}}{{/device}}`) names resolve in it first, as when rendering; inside a
 * section over free-form metadata nothing is known about the names, and none is reported.
 */
export function unknownVariables(template: string): string[] {
  let tokens: TemplateToken[];
  try {
    tokens = parseTemplate(template);
  } catch {
    return [];
  }
  const unknown = new Set<string>();
  // Iterative, as hasPartial: each entry is a token list and the objects its names resolve in.
  const pending: Array<{ list: readonly TemplateToken[]; scopes: readonly string[] | null }> = [
    { list: tokens, scopes: [] },
  ];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const { list, scopes } = item;
    for (const token of list) {
      const kind = token[0];
      if (kind !== 'name' && kind !== '&' && kind !== '#' && kind !== '^') continue;
      const name = String(token[1] ?? '');
      const resolved = scopes === null || name === '.' ? null : resolve(name, scopes);
      if (scopes !== null && name !== '.' && resolved === undefined) unknown.add(name);
      if (kind !== '#' && kind !== '^') continue;
      const body = token[4] as unknown as TemplateToken[];
      // A section over a documented object looks names up in it; over anything free-form, who knows.
      const inner =
        scopes === null || resolved === undefined || (resolved !== null && isOpen(resolved))
          ? null
          : resolved !== null && kind === '#' && KNOWN_OBJECTS.has(resolved)
            ? [resolved, ...scopes]
            : scopes;
      if (Array.isArray(body)) pending.push({ list: body, scopes: inner });
    }
  }
  return [...unknown];
}

/** The full path `name` stands for in the innermost of `scopes` that has it, or undefined. */
function resolve(name: string, scopes: readonly string[]): string | undefined {
  for (const scope of scopes) if (isKnown(`${scope}.${name}`)) return `${scope}.${name}`;
  return isKnown(name) ? name : undefined;
}

function hasPartial(tokens: readonly TemplateToken[]): boolean {
  // Iterative: sections may nest thousands of levels deep in a template of the maximum length.
  const pending = [tokens];
  for (let list = pending.pop(); list; list = pending.pop()) {
    for (const token of list) {
      if (token[0] === '>') return true;
      if (Array.isArray(token[4])) pending.push(token[4] as TemplateToken[]);
    }
  }
  return false;
}

/**
 * Renders `template` over `context`, each value escaped for the target. Throws
 * `TemplateBudgetError` as soon as the render passes a bound of `template-budget.ts`.
 */
export function renderTemplate(template: string, context: TemplateContext, escaping: Escaping): string {
  return new BoundedWriter(ESCAPES[escaping]).render(template, context);
}

type Tokens = string[][];

/**
 * Mustache's writer, rendering the tokens of `template-parser.ts` within a `RenderBudget`: each
 * tag visited is a step, each section body rendered an iteration, and each piece of output is
 * counted before it is added. Every tag form of a value (`{{x}}`, `{{{x}}}`, `{{&x}}`, and their
 * forms under delimiters changed with `{{=<% %>=}}`) gets the target's escaping. Partials render
 * nothing (none are given; they are refused on save), as do comments and delimiter changes.
 */
class BoundedWriter extends Mustache.Writer {
  private readonly budget = new RenderBudget();
  private readonly escapeText: (text: string) => string;

  constructor(escapeText: (text: string) => string) {
    super();
    this.escapeText = escapeText;
  }

  override parse(template: string): TemplateToken[] {
    return parseTemplate(template);
  }

  override render(template: string, view: unknown): string {
    return this.renderTokens(this.parse(template) as Tokens, new DataContext(view, undefined, this.budget));
  }

  override renderTokens(tokens: Tokens, context: Mustache.Context): string {
    let buffer = '';
    for (const token of tokens) {
      this.budget.step();
      switch (token[0]) {
        case '#':
          buffer += this.renderSection(token, context);
          break;
        case '^':
          buffer += this.renderInverted(token, context);
          break;
        case 'name':
        case '&':
          buffer += this.budget.write(this.escapedValue(token, context));
          break;
        case 'text':
          buffer += this.budget.write(token[1] ?? '');
          break;
      }
    }
    return buffer;
  }

  /** Mustache's section: once per item of a list, once for any other truthy value. */
  override renderSection(token: string[], context: Mustache.Context): string {
    const value: unknown = context.lookup(token[1] ?? '');
    if (!value) return '';
    const body = token[4] as unknown as Tokens;
    if (Array.isArray(value)) {
      let buffer = '';
      for (let i = 0; i < value.length; i += 1) {
        this.budget.iterate();
        buffer += this.renderTokens(body, context.push(value[i]));
      }
      return buffer;
    }
    this.budget.iterate();
    if (typeof value === 'object' || typeof value === 'string' || typeof value === 'number') {
      return this.renderTokens(body, context.push(value));
    }
    return this.renderTokens(body, context);
  }

  /** Mustache's inverted section: once when the value is falsy or an empty list. */
  override renderInverted(token: string[], context: Mustache.Context): string {
    const value: unknown = context.lookup(token[1] ?? '');
    if (value && !(Array.isArray(value) && value.length === 0)) return '';
    this.budget.iterate();
    return this.renderTokens(token[4] as unknown as Tokens, context);
  }

  /** The value's text, refused before it is escaped when it cannot fit (escaping never shortens). */
  override escapedValue(token: string[], context: Mustache.Context): string {
    return this.escapeText(valueText(context.lookup(token[1] ?? ''), this.budget));
  }

  override unescapedValue(token: string[], context: Mustache.Context): string {
    return this.escapedValue(token, context);
  }
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
