import { type FormEvent, useState } from 'react';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { AuthLayout } from './AuthLayout.tsx';

export function LoginPage({ next }: { next: string }) {
  const { login } = useAuth();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    const form = event.currentTarget;
    const problem = await login(formValue(form, 'email'), formValue(form, 'password'));
    setBusy(false);
    if (problem) setError(problem);
    else navigate(next, { replace: true });
  };

  return (
    <AuthLayout title="Sign in">
      <form onSubmit={submit}>
        <Field label="E-mail" name="email" type="email" autoComplete="username" required />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required />
        <Notice kind="error">{error}</Notice>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        <Link href="/forgot-password">Forgot your password?</Link>
      </p>
      <p>
        New here? <Link href="/register">Create an account</Link>
      </p>
    </AuthLayout>
  );
}
