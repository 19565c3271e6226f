import { useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { isSignedIn } from '../../auth/session.ts';
import { Notice } from '../../ui/forms.tsx';
import { AuthLayout } from './AuthLayout.tsx';
import { acceptInvitation } from './authApi.ts';

/** The invitation e-mail's link: sign in (or create an account), then accept. */
export function AcceptInvitationPage({ token }: { token: string }) {
  const { switchWorkspace } = useAuth();
  const [error, setError] = useState<string | null>(null);
  const here = `/accept-invitation?token=${encodeURIComponent(token)}`;

  const accept = async (): Promise<void> => {
    const { data, error: failure } = await acceptInvitation(token);
    if (!data) {
      setError(errorMessage(failure));
      return;
    }
    // Land in the workspace just joined, not in the one the session was signed in to.
    const problem = await switchWorkspace(data.id);
    if (problem) {
      setError(problem);
      return;
    }
    navigate('/geofences');
  };

  return (
    <AuthLayout title="Join a workspace">
      {isSignedIn() ? (
        <>
          <p>You were invited to a workspace.</p>
          <Notice kind="error">{error}</Notice>
          <button type="button" className="primary" onClick={() => void accept()} disabled={!token}>
            Accept invitation
          </button>
        </>
      ) : (
        <p>
          <Link href={`/login?next=${encodeURIComponent(here)}`}>Sign in</Link> or{' '}
          <Link href={`/register?next=${encodeURIComponent(here)}`}>create an account</Link> to accept the
          invitation.
        </p>
      )}
    </AuthLayout>
  );
}
