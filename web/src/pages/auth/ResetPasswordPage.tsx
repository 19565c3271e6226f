import { type FormEvent, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { AuthLayout } from './AuthLayout.tsx';
import { confirmPasswordReset } from './authApi.ts';

/** The landing page of the reset e-mail's link (`/reset-password?token=…`). */
export function ResetPasswordPage({ token }: { token: string }) {
  const [done, setDone] = useState(false);
  const [error, setError] = useState<string | null>(
    token ? null : 'This link has no token. Ask for a new one.',
  );

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const { error: failure } = await confirmPasswordReset(token, formValue(event.currentTarget, 'password'));
    if (failure) setError(errorMessage(failure));
    else setDone(true);
  };

  return (
    <AuthLayout title="Choose a new password">
      {done ? (
        <Notice kind="success">
          Your password is changed and every other session is signed out. <Link href="/login">Sign in</Link>
        </Notice>
      ) : (
        <form onSubmit={submit}>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            minLength={8}
            maxLength={128}
            hint="8 to 128 characters."
            required
          />
          <Notice kind="error">{error}</Notice>
          <button type="submit" className="primary" disabled={!token}>
            Change password
          </button>
        </form>
      )}
      <p>
        <Link href="/forgot-password">Ask for a new link</Link>
      </p>
    </AuthLayout>
  );
}
