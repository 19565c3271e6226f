/** Invite by e-mail with a role: someone with an account joins at once, anyone else gets an e-mail. */
import { type FormEvent, useId, useState } from 'react';
import { api, errorMessage, thrownMessage } from '../../api/client.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { ROLE_HELP, type Role, rolesYouMayGrant } from './roles.ts';

export function InviteForm({ workspaceId, onInvited }: { workspaceId: string; onInvited(): void }) {
  const { me } = useAuth();
  const roleId = useId();
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const invite = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget;
    const email = formValue(form, 'email').trim();
    const role = formValue(form, 'role') as Role;
    setBusy(true);
    try {
      const {
        data,
        error: failure,
        response,
      } = await api.POST('/api/v1/workspaces/{workspace_id}/members', {
        params: { path: { workspace_id: workspaceId } },
        body: { email, role },
      });
      if (!data) {
        setDone(null);
        setError(errorMessage(failure));
        return;
      }
      setError(null);
      setDone(
        response.status === 201
          ? `${email} already had an account and is now a ${role} of this workspace.`
          : `Invitation sent to ${email}. It is valid for 7 days.`,
      );
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
    </section>
  );
}
