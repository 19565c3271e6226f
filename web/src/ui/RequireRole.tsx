/**
 * Pages (or parts) only some roles of the workspace may use. Others get a plain explanation of
 * who can, instead of a form that would fail with 403 on submit. The API enforces the same rule;
 * this only spares the reader the attempt.
 */
import type { ReactNode } from 'react';
import { Link } from '../app/Link.tsx';
import { type Me, useAuth } from '../auth/AuthProvider.tsx';

export type Role = Me['role'];

const WHO: Record<string, string> = {
  owner: "the workspace's owners",
  'owner,admin': "the workspace's owners and admins",
};

export function hasRole(me: Me | null, roles: readonly Role[]): boolean {
  return me !== null && roles.includes(me.role);
}

export function RequireRole({
  roles,
  what,
  children,
}: {
  roles: readonly Role[];
  /** What is refused, e.g. "change the plan". */
  what: string;
  children: ReactNode;
}) {
  const { me } = useAuth();
  if (me === null) return <p role="status">Loading…</p>;
  if (hasRole(me, roles)) return <>{children}</>;
  const workspace = me.workspaces.find((w) => w.id === me.workspace_id)?.name ?? 'this workspace';
  return (
    <div className="notice notice-info refused" role="status">
      <p>
        <strong>
          Only {WHO[roles.join(',')] ?? roles.join(' and ')} can {what}.
        </strong>
      </p>
      <p>
        You are {me.role === 'admin' ? 'an' : 'a'} {me.role} of {workspace}. If you need this, ask{' '}
        {roles.includes('admin') ? 'one of its owners or admins' : 'one of its owners'}: the{' '}
        <Link href="/team">Team page</Link> lists who they are.
      </p>
    </div>
  );
}
