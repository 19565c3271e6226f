/**
 * Secrets inside action configs (contract §6, ADR 014): sealed at rest with the service's
 * encryption key, answered masked, and kept by an update that leaves them out or sends back the
 * masked value it was answered. A stored action is `{type, config, sealed}`: `config` is the
 * answer (secrets masked), `sealed` the secrets by field name.
 */
import type { SecretBox } from '../shared/encryption.ts';
import type { ActionType, WorkflowActionInput } from './action-configs.schemas.ts';

export interface StoredAction {
  type: ActionType;
  /** The config as answered: every secret field holds its mask. */
  config: Record<string, unknown>;
  /** Sealed secrets by field name. */
  sealed: Record<string, string>;
}

type SecretKind = 'plain' | 'url-path' | 'url-password';

/** Which config fields of each type are secrets, and how each is masked. */
export const SECRET_FIELDS: Readonly<Record<ActionType, Readonly<Record<string, SecretKind>>>> = {
  webhook: {},
  slack: { webhook_url: 'url-path' },
  discord: { webhook_url: 'url-path' },
  teams: { webhook_url: 'url-path' },
  email: {},
  sms: { auth_token: 'plain' },
  lambda: { secret_access_key: 'plain' },
  sns: { secret_access_key: 'plain' },
  database: { connection_url: 'url-password' },
};

const ELLIPSIS = '…';

/** "…" and the last 4 characters, fewer for short secrets (a mask never reveals half a secret). */
export function maskSecret(value: string): string {
  const shown = value.length >= 16 ? 4 : value.length >= 8 ? 2 : 0;
  return `${ELLIPSIS}${shown > 0 ? value.slice(-shown) : ''}`;
}

function maskUrlPath(value: string): string {
  try {
    const url = new URL(value);
    return `${url.origin}/${maskSecret(`${url.pathname}${url.search}`.slice(1))}`;
  } catch {
    return maskSecret(value);
  }
}

function maskUrlPassword(value: string): string {
  try {
    const url = new URL(value);
    if (url.password === '') return value;
    url.password = ELLIPSIS;
    return url.toString().replace(encodeURIComponent(ELLIPSIS), ELLIPSIS);
  } catch {
    return maskSecret(value);
  }
}

const MASKERS: Record<SecretKind, (value: string) => string> = {
  plain: maskSecret,
  'url-path': maskUrlPath,
  'url-password': maskUrlPassword,
};

/** A secret field absent when creating the action: answered as a 422 `missing` at its place. */
export interface MissingSecret {
  field: string;
}

/**
 * Seals the secrets of `input`. A secret field left out, or holding the mask `previous` answered,
 * keeps `previous`'s value when `previous` is an action of the same type; otherwise it is missing.
 */
export function sealAction(
  input: WorkflowActionInput,
  previous: StoredAction | undefined,
  box: SecretBox,
): StoredAction | MissingSecret {
  const fields = SECRET_FIELDS[input.type];
  const config: Record<string, unknown> = { ...(input.config as Record<string, unknown>) };
  const sealed: Record<string, string> = {};
  const keep = previous?.type === input.type ? previous : undefined;
  for (const [field, kind] of Object.entries(fields)) {
    const value = config[field];
    const kept = keep?.sealed[field];
    if (kept !== undefined && (value === undefined || value === keep?.config[field])) {
      sealed[field] = kept;
      config[field] = keep?.config[field];
      continue;
    }
    if (typeof value !== 'string') return { field };
    sealed[field] = box.seal(value);
    config[field] = MASKERS[kind](value);
  }
  return { type: input.type, config, sealed };
}

/** The config with its secrets opened: what an executor is given. Never answered or logged. */
export function openConfig(action: StoredAction, box: SecretBox): Record<string, unknown> {
  const config = { ...action.config };
  for (const [field, value] of Object.entries(action.sealed)) config[field] = box.open(value);
  return config;
}

/** The action as answered: `{type, config}` with masks. */
export function publicAction(action: StoredAction): { type: ActionType; config: Record<string, unknown> } {
  return { type: action.type, config: action.config };
}
