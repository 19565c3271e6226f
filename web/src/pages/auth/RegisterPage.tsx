import { type FormEvent, useState } from 'react';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { AuthLayout } from './AuthLayout.tsx';

export function RegisterPage({ next }: { next: string }) {
  const { register } = useAuth();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget;
    setBusy(true);
    const name = formValue(form, 'name');
    const workspace = formValue(form, 'workspace_name');
    const problem = await register({
      email: formValue(form, 'email'),
      password: formValue(form, 'password'),
      ...(name ? { name } : {}),
      ...(workspace ? { workspace_name: workspace } : {}),
    });
    setBusy(false);
    if (problem) setError(problem);
    else navigate(next, { replace: true });
  };

  return (
    <AuthLayout title="Create your account">
      <form onSubmit={submit}>
        <Field label="Your name" name="name" autoComplete="name" maxLength={255} />
        <Field label="E-mail" name="email" type="email" autoComplete="email" required />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={8}
          maxLength={128}
          hint="8 to 128 characters."
          required
        />
        <Field label="Workspace name" name="workspace_name" maxLength={255} placeholder="Acme Logistics" />
        <Notice kind="error">{error}</Notice>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <p>
        Already have an account? <Link href="/login">Sign in</Link>
      </p>
    </AuthLayout>
  );
}
