/**
 * The builder's working copy of a workflow: every config value as the text of its input, secrets
 * remembered as the mask the API answered. Turned into a request body only on save, with the
 * checks the server would make first (required fields, templates that parse) so most mistakes
 * show next to their field before anything is sent.
 */
import type { Schemas } from '../../api/client.ts';
import { type ActionType, specOf } from './actionTypes.ts';
import { templateProblem } from './preview.ts';

export type Workflow = Schemas['Workflow'];
export type EventType = Workflow['trigger']['event_types'][number];
export const EVENT_TYPES: readonly EventType[] = ['enter', 'exit', 'dwell'];

export interface DraftAction {
  /** React key, stable across reordering. */
  key: number;
  type: ActionType;
  values: Record<string, string>;
  /** Secrets as answered (masked) by the API; a value still equal to its mask is left out on save. */
  masked: Record<string, string>;
  /** Position in the saved workflow, or null for an action added since. */
  origin: number | null;
}

export interface Draft {
  name: string;
  description: string;
  enabled: boolean;
  eventTypes: EventType[];
  geofenceId: string | null;
  actions: DraftAction[];
}

let nextKey = 1;

export function newAction(type: ActionType): DraftAction {
  return { key: nextKey++, type, values: {}, masked: {}, origin: null };
}

export function emptyDraft(): Draft {
  return { name: '', description: '', enabled: true, eventTypes: ['enter'], geofenceId: null, actions: [] };
}

export function draftOf(workflow: Workflow): Draft {
  return {
    name: workflow.name,
    description: workflow.description ?? '',
    enabled: workflow.enabled,
    eventTypes: [...workflow.trigger.event_types],
    geofenceId: workflow.trigger.geofence_id,
    actions: workflow.actions.map((action, position) => {
      const values: Record<string, string> = {};
      const masked: Record<string, string> = {};
      for (const field of specOf(action.type).fields) {
        const value = action.config[field.name];
        if (value === undefined || value === null) continue;
        values[field.name] = Array.isArray(value) ? value.join(', ') : String(value);
        if (field.kind === 'secret') masked[field.name] = values[field.name] ?? '';
      }
      return { key: nextKey++, type: action.type, values, masked, origin: position };
    }),
  };
}

/** Problems by field key: `name`, `trigger.geofence_id`, `actions.<i>.config.<field>`, … */
export type FieldProblems = Record<string, string>;

export type Body = Schemas['WorkflowAction'][];

/** The request's fields, or the problems found before sending. */
export function toRequest(draft: Draft):
  | { problems: FieldProblems }
  | {
      body: {
        name: string;
        description: string | null;
        enabled: boolean;
        trigger: { geofence_id: string; event_types: EventType[] };
        actions: Body;
      };
    } {
  const problems: FieldProblems = {};
  if (draft.name.trim() === '') problems.name = 'Give the workflow a name.';
  if (!draft.geofenceId) problems['trigger.geofence_id'] = 'Choose the geofence that triggers it.';
  if (draft.eventTypes.length === 0) problems['trigger.event_types'] = 'Choose at least one event type.';
  if (draft.actions.length === 0) problems.actions = 'Add at least one action.';
  const actions = draft.actions.map((action, index) => {
    const config: Record<string, unknown> = {};
    for (const field of specOf(action.type).fields) {
      const key = `actions.${index}.config.${field.name}`;
      const raw = action.values[field.name] ?? '';
      const value = field.kind === 'template' ? raw : raw.trim();
      const mask = action.masked[field.name];
      if (mask !== undefined && value === mask) {
        // Unchanged secret: left out, the server keeps what it stored for this position.
        if (action.origin !== index)
          problems[key] =
            'Enter this secret again: a stored secret stays with the position of its action, and this action moved.';
        continue;
      }
      if (value === '') {
        if (field.required) problems[key] = `Enter the ${field.label.toLowerCase()}.`;
        continue;
      }
      if (field.kind === 'template') {
        const problem = templateProblem(value);
        if (problem) problems[key] = problem;
      }
      config[field.name] =
        field.kind === 'list'
          ? value
              .split(/[\s,;]+/)
              .map((part) => part.trim())
              .filter(Boolean)
          : value;
    }
    return { type: action.type, config } as Schemas['WorkflowAction'];
  });
  if (Object.keys(problems).length > 0) return { problems };
  return {
    body: {
      name: draft.name.trim(),
      description: draft.description.trim() === '' ? null : draft.description.trim(),
      enabled: draft.enabled,
      trigger: { geofence_id: draft.geofenceId ?? '', event_types: draft.eventTypes },
      actions,
    },
  };
}

interface Issue {
  loc?: Array<string | number>;
  msg?: string;
}

/**
 * A 422's issues by field key (`loc` without its leading "body"), and what could not be placed. A
 * 404 "Geofence not found" belongs to the trigger.
 */
export function problemsOfError(error: unknown): { fields: FieldProblems; general: string[] } {
  const fields: FieldProblems = {};
  const general: string[] = [];
  const detail = (error as { detail?: unknown } | null)?.detail;
  if (typeof detail === 'string') {
    if (/geofence not found/i.test(detail)) fields['trigger.geofence_id'] = detail;
    else general.push(detail);
  } else if (Array.isArray(detail)) {
    for (const issue of detail as Issue[]) {
      const loc = (issue.loc ?? []).filter((part, i) => !(i === 0 && part === 'body'));
      const key = loc.join('.');
      const msg = issue.msg ?? 'Invalid value';
      if (key === '') general.push(msg);
      else fields[key] = fields[key] ? `${fields[key]}; ${msg}` : msg;
    }
  } else general.push('Something went wrong. Please try again.');
  return { fields, general };
}

/** Problems under `prefix` (e.g. `actions.2.`), keyed by the rest. */
export function problemsUnder(problems: FieldProblems, prefix: string): FieldProblems {
  const found: FieldProblems = {};
  for (const [key, message] of Object.entries(problems)) {
    if (key.startsWith(prefix)) found[key.slice(prefix.length)] = message;
  }
  return found;
}
