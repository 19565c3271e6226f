/**
 * API-key scopes (contract §2.3). `write` implies `read` of the same resource; `*` is everything.
 * JWT users get the scopes their workspace role allows: owners and admins everything, members
 * everything but the administrative writes (workspace settings and members, the plan).
 */
import type { WorkspaceRole } from '../workspaces/workspaces.tables.ts';

export const SCOPES = [
  'geofences:read',
  'geofences:write',
  'devices:read',
  'devices:write',
  'locations:write',
  'events:read',
  'workflows:read',
  'workflows:write',
  'webhooks:read',
  'webhooks:write',
  'workspaces:read',
  'workspaces:write',
  'account:read',
  'account:write',
  'subscriptions:read',
  'subscriptions:write',
] as const;

export type Scope = (typeof SCOPES)[number];
export type GrantableScope = Scope | '*';
export const GRANTABLE_SCOPES: readonly GrantableScope[] = [...SCOPES, '*'];

const ADMIN_ONLY: ReadonlySet<Scope> = new Set(['workspaces:write', 'subscriptions:write']);

/** Expands granted scopes: `*` → all, `x:write` → also `x:read`. */
export function expandScopes(granted: readonly string[]): Set<Scope> {
  const out = new Set<Scope>();
  for (const scope of granted) {
    if (scope === '*') return new Set(SCOPES);
    if ((SCOPES as readonly string[]).includes(scope)) {
      out.add(scope as Scope);
      if (scope.endsWith(':write')) {
        const read = scope.replace(/:write$/, ':read');
        if ((SCOPES as readonly string[]).includes(read)) out.add(read as Scope);
      }
    }
  }
  return out;
}

export function scopesForRole(role: WorkspaceRole): Set<Scope> {
  if (role === 'owner' || role === 'admin') return new Set(SCOPES);
  return new Set(SCOPES.filter((s) => !ADMIN_ONLY.has(s)));
}

export function isAdminRole(role: WorkspaceRole): boolean {
  return role === 'owner' || role === 'admin';
}
