import { type FormEvent, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { AuthLayout } from './AuthLayout.tsx';
import { requestPasswordReset } from './authApi.ts';

export function ForgotPasswordPage() {
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const { error: failure } = await requestPasswordReset(formValue(event.currentTarget, 'email'));
    if (failure) setError(errorMessage(failure));
    else setSent(true);
  };

  return (
    <AuthLayout title="Reset your password">
      {sent ? (
        <Notice kind="success">
          If an account uses that address, an e-mail with a reset link is on its way.
        </Notice>
      ) : (
        <form onSubmit={submit}>
          <Field label="E-mail" name="email" type="email" autoComplete="email" required />
          <Notice kind="error">{error}</Notice>
          <button type="submit" className="primary">
            Send reset link
          </button>
        </form>
      )}
      <p>
        <Link href="/login">Back to sign in</Link>
      </p>
    </AuthLayout>
  );
}
