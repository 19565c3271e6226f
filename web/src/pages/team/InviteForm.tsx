/** Invite by e-mail with a role: someone with an account joins at once, anyone else gets an e-mail. */
import { type FormEvent, useId, useState } from 'react';
import { errorMessage, thrownMessage } from '../../api/client.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { ROLE_HELP, type Role, rolesYouMayGrant } from './roles.ts';
import { inviteMember } from './teamApi.ts';

export function InviteForm({ workspaceId, onInvited }: { workspaceId: string; onInvited(): void }) {
  const { me } = useAuth();
  const roleId = useId();
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  /** The invitation's link when no e-mail could carry it (the server has no mail set up). */
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const invite = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget;
    const email = formValue(form, 'email').trim();
    const role = formValue(form, 'role') as Role;
    setBusy(true);
    try {
      const { data, error: failure, response } = await inviteMember(workspaceId, email, role);
      setLink(null);
      if (!data) {
        setDone(null);
        setError(errorMessage(failure));
        return;
      }
      setError(null);
      const acceptUrl = 'accept_url' in data ? data.accept_url : undefined;
      setDone(
        response.status === 201
          ? `${email} already had an account and is now a ${role} of this workspace.`
          : acceptUrl
            ? `Invitation made for ${email}. It is valid for 7 days.`
            : `Invitation sent to ${email}. It is valid for 7 days.`,
      );
      if (acceptUrl) setLink({ email, url: acceptUrl });
      form.reset();
      onInvited();
    } catch (thrown) {
      setDone(null);
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <form className="invite-form" onSubmit={(e) => void invite(e)}>
        <Field label="E-mail" name="email" type="email" required maxLength={254} autoComplete="off" />
        <div className="field">
          <label htmlFor={roleId}>Role</label>
          <select id={roleId} name="role" defaultValue="member" aria-describedby={`${roleId}-hint`}>
            {rolesYouMayGrant(me?.role).map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" className="primary" disabled={busy}>
          Send invitation
        </button>
      </form>
      <p id={`${roleId}-hint`} className="hint">
        {ROLE_HELP}
      </p>
      <Notice kind="error">{error}</Notice>
      <Notice kind="success">{done}</Notice>
      {link ? <InvitationLink email={link.email} url={link.url} /> : null}
    </section>
  );
}

/**
 * Without mail the invitation e-mail is only kept on the server: its link is shown here, once, for
 * the inviter to pass on by other means.
 */
function InvitationLink({ email, url }: { email: string; url: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async (): Promise<void> => {
    await navigator.clipboard.writeText(url);
    setCopied(true);
  };
  return (
    <section className="new-key invitation-link" aria-labelledby="invitation-link-title">
      <h3 id="invitation-link-title">No e-mail was sent</h3>
      <p>
        This server has no mail set up, so {email} gets no message. Send them this link yourself: it is shown
        only now, and works for an account with that address.
      </p>
      <div className="copy-row">
        <code data-testid="invitation-link">{url}</code>
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy link'}
        </button>
      </div>
      <p role="status">{copied ? 'The link is on your clipboard.' : ''}</p>
    </section>
  );
}
