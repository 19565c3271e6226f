/** The workspace roles as the team page offers them (contract §2.1, §2.4). */
import type { Schemas } from '../../api/client.ts';

export type Role = Schemas['Member']['role'];

export const ROLE_HELP =
  'Members use the workspace; admins also manage its people, settings, API keys and plan; owners also grant ownership.';

/** Only an owner grants (or takes away) the owner role; the API refuses it to an admin. */
export function rolesYouMayGrant(myRole: Role | undefined): Role[] {
  return myRole === 'owner' ? ['member', 'admin', 'owner'] : ['member', 'admin'];
}
