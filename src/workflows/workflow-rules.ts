/**
 * Checks of a workflow's actions beyond their JSON schemas (contract §6, ADR 014): secrets
 * present on creation, outbound targets under the private-target rules of webhooks, templates
 * that parse, webhooks of the workspace. Each failure points at its place in the body.
 */

import { checkTargetHost, checkTargetUrl } from '../outbound/target-rules.ts';
import type { SecretBox } from '../shared/encryption.ts';
import { FieldValidationError } from '../shared/errors.ts';
import type { WorkflowActionInput } from './action-configs.schemas.ts';
import { type StoredAction, sealAction } from './action-secrets.ts';
import { templateProblem } from './templates.ts';

type Loc = Array<string | number>;

const TEMPLATE_FIELDS = ['message', 'subject', 'body'] as const;
/** Outbound http(s) targets of each type, checked like webhook urls. */
const URL_FIELDS: Record<string, readonly string[]> = {
  slack: ['webhook_url'],
  discord: ['webhook_url'],
  teams: ['webhook_url'],
  sms: ['api_base_url'],
  lambda: ['endpoint'],
  sns: ['endpoint'],
};

/** 422s of template fields that do not parse. */
export function templateIssues(action: WorkflowActionInput, loc: Loc): FieldValidationError['issues'] {
  const config = action.config as Record<string, unknown>;
  return TEMPLATE_FIELDS.flatMap((field) => {
    const value = config[field];
    if (typeof value !== 'string') return [];
    const problem = templateProblem(value);
    return problem ? [{ type: 'value_error', loc: [...loc, 'config', field], msg: problem }] : [];
  });
}

/**
 * The targets of an action as sent (a secret sent back masked is not a new target): 422 for a
 * malformed URL, 400 for a literal private address unless allowed.
 */
export function checkActionTargets(
  action: WorkflowActionInput,
  previous: StoredAction | undefined,
  allowPrivateTargets: boolean,
  loc: Loc,
): void {
  const config = action.config as Record<string, unknown>;
  const sameType = previous?.type === action.type ? previous : undefined;
  for (const field of URL_FIELDS[action.type] ?? []) {
    const value = config[field];
    if (typeof value !== 'string' || value === sameType?.config[field]) continue;
    checkTargetUrl(value, allowPrivateTargets, {
      loc: [...loc, 'config', field],
      label: `actions[${String(loc.at(-1))}].config.${field}`,
      what: 'workflow actions',
    });
  }
  if (action.type === 'database') {
    const value = config.connection_url;
    if (typeof value !== 'string' || value === sameType?.config.connection_url) return;
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new FieldValidationError([
        {
          type: 'value_error',
          loc: [...loc, 'config', 'connection_url'],
          msg: 'Input should be a valid URL',
        },
      ]);
    }
    if (url.hostname === '') {
      throw new FieldValidationError([
        {
          type: 'value_error',
          loc: [...loc, 'config', 'connection_url'],
          msg: 'URL should name a host, as in postgres://user:password@host:5432/db',
        },
      ]);
    }
    checkTargetHost(url, allowPrivateTargets, {
      loc: [...loc, 'config', 'connection_url'],
      label: `actions[${String(loc.at(-1))}].config.connection_url`,
      what: 'workflow actions',
    });
  }
}

/**
 * Checks and seals every action; `previous` are the stored actions an update replaces (matched by
 * position and type). Throws the first failing action's 400, or all 422 issues together.
 */
export function prepareActions(
  actions: readonly WorkflowActionInput[],
  previous: readonly StoredAction[],
  box: SecretBox,
  allowPrivateTargets: boolean,
): StoredAction[] {
  const issues: FieldValidationError['issues'] = [];
  const stored: StoredAction[] = [];
  actions.forEach((action, index) => {
    const loc: Loc = ['body', 'actions', index];
    issues.push(...templateIssues(action, loc));
    checkActionTargets(action, previous[index], allowPrivateTargets, loc);
    const sealed = sealAction(action, previous[index], box);
    if ('field' in sealed) {
      issues.push({ type: 'missing', loc: [...loc, 'config', sealed.field], msg: 'Field required' });
      return;
    }
    stored.push(sealed);
  });
  if (issues.length > 0) throw new FieldValidationError(issues);
  return stored;
}

/** 422 for `webhook` actions naming a webhook that is not the workspace's. */
export function unknownWebhookIssues(
  actions: readonly WorkflowActionInput[],
  known: ReadonlySet<string>,
): void {
  const issues: FieldValidationError['issues'] = [];
  actions.forEach((action, index) => {
    if (action.type !== 'webhook' || known.has(action.config.webhook_id)) return;
    issues.push({
      type: 'value_error',
      loc: ['body', 'actions', index, 'config', 'webhook_id'],
      msg: 'No webhook with this id in the workspace',
    });
  });
  if (issues.length > 0) throw new FieldValidationError(issues);
}
