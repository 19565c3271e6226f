/**
 * Team: the workspace's members and, for its owners and admins, roles, removal, invitations by
 * e-mail and the pending invitations. A member sees who is in the team, read-only.
 */
import { useInvalidate } from '../../api/queries.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { hasRole } from '../../ui/RequireRole.tsx';
import { InvitationList } from './InvitationList.tsx';
import { InviteForm } from './InviteForm.tsx';
import { MemberList } from './MemberList.tsx';
import { teamKeys } from './teamApi.ts';

export default function TeamPage() {
  const { me } = useAuth();
  const invalidate = useInvalidate();
  if (me === null)
    return (
      <main id="main" className="page">
        <h1>Team</h1>
        <p role="status">Loading…</p>
      </main>
    );
  const workspace = me.workspaces.find((w) => w.id === me.workspace_id)?.name ?? 'this workspace';
  const manages = hasRole(me, ['owner', 'admin']);
  return (
    <main id="main" className="page team-page">
      <h1>Team</h1>
      <p className="lead">The people of {workspace} and their roles.</p>
      {manages ? null : (
        <div className="notice notice-info" role="status">
          You are a member of {workspace}, so this list is read-only: only its owners and admins invite
          people, change roles and remove members.
        </div>
      )}
      {manages ? (
        <InviteForm workspaceId={me.workspace_id} onInvited={() => invalidate(teamKeys.all)} />
      ) : null}
      <MemberList workspaceId={me.workspace_id} workspaceName={workspace} myId={me.id} myRole={me.role} />
      {manages ? <InvitationList workspaceId={me.workspace_id} /> : null}
    </main>
  );
}
