import type { paths } from '../../api/schema.ts';

export type Scope =
  paths['/api/v1/account/api-keys']['post']['requestBody']['content']['application/json']['scopes'][number];

/** Scopes grouped by resource for the checkboxes; the type check fails if the API adds one we do not show. */
export const SCOPE_GROUPS = [
  { resource: 'Geofences', scopes: ['geofences:read', 'geofences:write'] },
  { resource: 'Devices', scopes: ['devices:read', 'devices:write'] },
  { resource: 'Locations', scopes: ['locations:write'] },
  { resource: 'Events', scopes: ['events:read'] },
  { resource: 'Workflows', scopes: ['workflows:read', 'workflows:write'] },
  { resource: 'Webhooks', scopes: ['webhooks:read', 'webhooks:write'] },
  { resource: 'Workspaces', scopes: ['workspaces:read', 'workspaces:write'] },
  { resource: 'Account', scopes: ['account:read', 'account:write'] },
  { resource: 'Subscriptions', scopes: ['subscriptions:read', 'subscriptions:write'] },
] as const satisfies ReadonlyArray<{ resource: string; scopes: readonly Scope[] }>;

type Shown = (typeof SCOPE_GROUPS)[number]['scopes'][number] | '*';
const everyScopeShown: Exclude<Scope, Shown> extends never ? true : false = true;
void everyScopeShown;
