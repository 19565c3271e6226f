/**
 * The members table. Owners and admins change a role (select, then "Change role": a select that
 * acted on every arrow key would demote people on the way) and remove members; the API's refusals
 * (the last owner, only an owner touches ownership) are shown as it words them.
 */
import { useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { useLocation } from '../../app/router.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { type Role, rolesYouMayGrant } from './roles.ts';
import { changeMemberRole, removeMember, teamKeys, useMembers } from './teamApi.ts';

type Member = Schemas['Member'];

export function MemberList({
  workspaceId,
  workspaceName,
  myId,
  myRole,
}: {
  workspaceId: string;
  workspaceName: string;
  myId: string;
  myRole: Role;
}) {
  const { query } = useLocation();
  const offset = offsetOf(query);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const members = useMembers(workspaceId, offset);
  const invalidate = useInvalidate();
  useLastPageWhenPastEnd(members.data?.pagination, members.data?.results.length ?? 0);
  const manages = myRole === 'owner' || myRole === 'admin';

  /** True when the API made the change. */
  const changeRole = async (member: Member, role: Role): Promise<boolean> => {
    const { error } = await changeMemberRole(workspaceId, member.user_id, role);
    setProblem(error ? errorMessage(error) : null);
    setDone(error ? null : `${member.email} is now ${role === 'admin' ? 'an' : 'a'} ${role}.`);
    invalidate(teamKeys.all);
    return !error;
  };

  const remove = async (member: Member): Promise<void> => {
    const { error } = await removeMember(workspaceId, member.user_id);
    setProblem(error ? errorMessage(error) : null);
    setDone(error ? null : `${member.email} was removed from the workspace.`);
    invalidate(teamKeys.all);
  };

  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <Notice kind="error">{problem ?? failureMessage(members.error)}</Notice>
      <Notice kind="success">{done}</Notice>
      {members.data === undefined ? (
        members.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <div className="table-wrap">
            <table className="members-table">
              <caption className="visually-hidden">Members of {workspaceName}</caption>
              <thead>
                <tr>
                  <th scope="col">Person</th>
                  <th scope="col">Role</th>
                  <th scope="col">Joined</th>
                  {manages ? (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {members.data.results.map((member) => (
                  <tr key={member.user_id}>
                    <th scope="row">
                      {member.name ?? member.email}
                      {member.user_id === myId ? <span className="you"> (you)</span> : null}
                      {member.name ? <span className="member-email">{member.email}</span> : null}
                    </th>
                    <td>
                      {manages && (member.role !== 'owner' || myRole === 'owner') ? (
                        <RoleChanger
                          member={member}
                          choices={rolesYouMayGrant(myRole)}
                          onChange={(role) => changeRole(member, role)}
                        />
                      ) : (
                        member.role
                      )}
                    </td>
                    <td>{formatTime(member.joined_at)}</td>
                    {manages ? (
                      <td>
                        {member.user_id === myId || (member.role === 'owner' && myRole !== 'owner') ? null : (
                          <ConfirmButton
                            danger
                            question={`Remove ${member.email}?`}
                            confirmLabel="Remove"
                            onConfirm={() => remove(member)}
                          >
                            Remove<span className="visually-hidden"> {member.email}</span>
                          </ConfirmButton>
                        )}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pagination={members.data.pagination} shown={members.data.results.length} noun="members" />
        </>
      )}
    </section>
  );
}

function RoleChanger({
  member,
  choices,
  onChange,
}: {
  member: Member;
  choices: Role[];
  onChange(role: Role): Promise<boolean>;
}) {
  const [role, setRole] = useState<Role>(member.role);
  const [busy, setBusy] = useState(false);
  return (
    <span className="role-changer">
      <label>
        <span className="visually-hidden">Role of {member.email}</span>
        <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {(choices.includes(member.role) ? choices : [member.role, ...choices]).map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      <button
        type="button"
        disabled={busy || role === member.role}
        onClick={() => {
          setBusy(true);
          void onChange(role).then((changed) => {
            setBusy(false);
            // Refused (e.g. the last owner): the select shows the role the member still has.
            if (!changed) setRole(member.role);
          });
        }}
      >
        Change role<span className="visually-hidden"> of {member.email}</span>
      </button>
    </span>
  );
}
