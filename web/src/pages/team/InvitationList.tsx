/**
 * Pending invitations with Resend (a new link valid 7 days; the old one stops working) and Revoke
 * (the link stops working). Expired ones stay listed so they can be resent.
 */
import { useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { useLocation } from '../../app/router.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { resendInvitation, revokeInvitation, teamKeys, useInvitations } from './teamApi.ts';

type Invitation = Schemas['Invitation'];
/** The list's own offset in the URL: the members list above has `offset`. */
const OFFSET_KEY = 'invitations_offset';

export function InvitationList({ workspaceId }: { workspaceId: string }) {
  const { query } = useLocation();
  const { me } = useAuth();
  const offset = offsetOf(query, OFFSET_KEY);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const invitations = useInvitations(workspaceId, offset);
  const invalidate = useInvalidate();
  useLastPageWhenPastEnd(invitations.data?.pagination, invitations.data?.results.length ?? 0, OFFSET_KEY);
  // Read once per render: whether an invitation has expired is shown, not ticking.
  const now = Date.now();

  const act = async (invitation: Invitation, kind: 'resend' | 'revoke'): Promise<void> => {
    const { error } =
      kind === 'resend'
        ? await resendInvitation(workspaceId, invitation.id)
        : await revokeInvitation(workspaceId, invitation.id);
    setProblem(error ? errorMessage(error) : null);
    setDone(
      error
        ? null
        : kind === 'resend'
          ? `A new invitation e-mail went to ${invitation.email}; the earlier link no longer works.`
          : `The invitation of ${invitation.email} was revoked; its link no longer works.`,
    );
    invalidate(teamKeys.all);
  };

  return (
    <section aria-labelledby="invitations-title">
      <h2 id="invitations-title">Pending invitations</h2>
      <Notice kind="error">{problem ?? failureMessage(invitations.error)}</Notice>
      <Notice kind="success">{done}</Notice>
      {invitations.data === undefined ? (
        invitations.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : invitations.data.pagination.total === 0 ? (
        <p>No invitations are waiting for an answer.</p>
      ) : (
        <>
          <div className="table-wrap">
            <table className="invitations-table">
              <caption className="visually-hidden">Invitations not yet accepted</caption>
              <thead>
                <tr>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  <th scope="col">Invited by</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Expires</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {invitations.data.results.map((invitation) => (
                  <tr key={invitation.id}>
                    <th scope="row">{invitation.email}</th>
                    <td>{invitation.role}</td>
                    <td>
                      {invitation.invited_by
                        ? (invitation.invited_by.name ?? invitation.invited_by.email)
                        : 'An API key'}
                    </td>
                    <td>{formatTime(invitation.created_at)}</td>
                    <td>
                      {Date.parse(invitation.expires_at) <= now ? (
                        <span className="badge badge-failed">Expired</span>
                      ) : (
                        formatTime(invitation.expires_at)
                      )}
                    </td>
                    <td className="row-actions">
                      {/* Renewing an owner invitation grants ownership for longer: only an owner may. */}
                      {invitation.role === 'owner' && me?.role !== 'owner' ? null : (
                        <ConfirmButton
                          question={`Send ${invitation.email} a new link?`}
                          confirmLabel="Resend"
                          onConfirm={() => act(invitation, 'resend')}
                        >
                          Resend<span className="visually-hidden"> to {invitation.email}</span>
                        </ConfirmButton>
                      )}
                      <ConfirmButton
                        danger
                        question={`Revoke the invitation of ${invitation.email}?`}
                        confirmLabel="Revoke"
                        onConfirm={() => act(invitation, 'revoke')}
                      >
                        Revoke<span className="visually-hidden"> the invitation of {invitation.email}</span>
                      </ConfirmButton>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            pagination={invitations.data.pagination}
            shown={invitations.data.results.length}
            noun="invitations"
            queryKey={OFFSET_KEY}
          />
        </>
      )}
    </section>
  );
}
