/**
 * Account: who you are (the API keeps name and e-mail as registered), the e-mail check, and your
 * notification preferences (GET/PATCH /account/settings). Personal: the same in every workspace.
 */
import { useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { resendVerificationEmail, useAccountSettings } from './accountApi.ts';
import { PreferencesForm } from './PreferencesForm.tsx';

export default function AccountPage() {
  const { me } = useAuth();
  const settings = useAccountSettings();
  return (
    <main id="main" className="page account-page">
      <h1>Account</h1>
      <p className="lead">Your own details and how you hear about what happens in your workspaces.</p>
      <section aria-labelledby="profile-title">
        <h2 id="profile-title">Profile</h2>
        {me === null ? (
          <p role="status">Loading…</p>
        ) : (
          <>
            <dl className="facts profile">
              <dt>Name</dt>
              <dd>{me.name ?? 'Not given'}</dd>
              <dt>E-mail</dt>
              <dd>
                {me.email} {me.email_verified ? <span className="badge badge-success">Verified</span> : null}
              </dd>
              <dt>Member since</dt>
              <dd>{formatTime(me.created_at)}</dd>
            </dl>
            <p className="hint">
              Name and e-mail stay as you registered them. To change your password, use{' '}
              <Link href="/forgot-password">the reset by e-mail</Link>.
            </p>
            {me.email_verified ? null : <VerifyEmail />}
          </>
        )}
      </section>
      <section aria-labelledby="preferences-title">
        <h2 id="preferences-title">Notifications</h2>
        {settings.data === undefined ? (
          settings.error ? (
            <Notice kind="error">{failureMessage(settings.error)}</Notice>
          ) : (
            <p role="status">Loading…</p>
          )
        ) : (
          <PreferencesForm settings={settings.data} />
        )}
      </section>
    </main>
  );
}

function VerifyEmail() {
  const [state, setState] = useState<{ sent: boolean; error: string | null }>({ sent: false, error: null });
  const send = async (): Promise<void> => {
    const { error } = await resendVerificationEmail();
    setState({ sent: !error, error: error ? errorMessage(error) : null });
  };
  return (
    <div className="notice notice-info verify-email">
      <p>Your e-mail address is not verified yet.</p>
      <button type="button" onClick={() => void send()} disabled={state.sent}>
        Send the verification e-mail again
      </button>
      <Notice kind="success">{state.sent ? 'Sent: follow the link in the e-mail.' : null}</Notice>
      <Notice kind="error">{state.error}</Notice>
    </div>
  );
}
