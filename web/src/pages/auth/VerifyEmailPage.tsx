import { useEffect, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { Notice } from '../../ui/forms.tsx';
import { AuthLayout } from './AuthLayout.tsx';
import { verifyEmail } from './authApi.ts';

/** The landing page of the verification e-mail's link (`/verify-email?token=…`): verifies on arrival. */
export function VerifyEmailPage({ token }: { token: string }) {
  const [state, setState] = useState<{ ok: boolean; message: string } | null>(null);

  useEffect(() => {
    if (!token) {
      setState({ ok: false, message: 'This link has no token.' });
      return;
    }
    void verifyEmail(token).then(({ error }) => {
      setState(
        error
          ? { ok: false, message: errorMessage(error) }
          : { ok: true, message: 'Your e-mail address is verified.' },
      );
    });
  }, [token]);

  return (
    <AuthLayout title="E-mail verification">
      {state ? (
        <Notice kind={state.ok ? 'success' : 'error'}>{state.message}</Notice>
      ) : (
        <p role="status">Verifying…</p>
      )}
      <p>
        <Link href="/">Go to the dashboard</Link>
      </p>
    </AuthLayout>
  );
}
