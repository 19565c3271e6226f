/** Workspace settings: its name and the lifetime of access tokens (owners and admins). */
import { type FormEvent, useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { RequireRole } from '../../ui/RequireRole.tsx';
import { describeSeconds, TTL_MAX, TTL_MIN } from './duration.ts';
import { updateWorkspace, useWorkspace, workspaceKeys } from './settingsApi.ts';

export default function WorkspaceSettingsPage() {
  return (
    <main id="main" className="page settings-page">
      <h1>Workspace settings</h1>
      <RequireRole roles={['owner', 'admin']} what="change the workspace settings">
        <SettingsForm />
      </RequireRole>
    </main>
  );
}

function SettingsForm() {
  const { me, reload } = useAuth();
  const workspaceId = me?.workspace_id ?? '';
  const workspace = useWorkspace(workspaceId);
  const invalidate = useInvalidate();
  if (workspace.data === undefined)
    return workspace.error ? (
      <Notice kind="error">{failureMessage(workspace.error)}</Notice>
    ) : (
      <p role="status">Loading…</p>
    );
  // After a save the form keeps what was typed (which the API stored) and its confirmation.
  return (
    <WorkspaceForm
      key={workspace.data.id}
      workspace={workspace.data}
      onSaved={() => {
        invalidate(workspaceKeys.one(workspaceId));
        void reload(); // the switcher shows the name
      }}
    />
  );
}

function WorkspaceForm({ workspace, onSaved }: { workspace: Schemas['Workspace']; onSaved(): void }) {
  const [ttl, setTtl] = useState(String(workspace.settings.access_token_ttl_seconds));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const save = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget;
    setBusy(true);
    const { data, error: failure } = await updateWorkspace(workspace.id, {
      name: formValue(form, 'name').trim(),
      settings: { access_token_ttl_seconds: Number(formValue(form, 'ttl')) },
    });
    setBusy(false);
    if (!data) {
      setSaved(null);
      setError(errorMessage(failure));
      return;
    }
    setError(null);
    setSaved('Settings saved.');
    onSaved();
  };

  const seconds = Number(ttl);
  return (
    <form className="stack settings-form" onSubmit={(e) => void save(e)}>
      <Field label="Workspace name" name="name" required maxLength={255} defaultValue={workspace.name} />
      <Field
        label="Access token lifetime (seconds)"
        name="ttl"
        type="number"
        required
        min={TTL_MIN}
        max={TTL_MAX}
        step={1}
        value={ttl}
        onChange={(e) => setTtl(e.target.value)}
        hint={`${Number.isInteger(seconds) && seconds > 0 ? `${describeSeconds(seconds)}. ` : ''}From 300 (5 minutes) to 2,592,000 (30 days). Access tokens issued from now on (at sign-in and at each refresh) last this long.`}
      />
      <Notice kind="error">{error}</Notice>
      <Notice kind="success">{saved}</Notice>
      <button type="submit" className="primary" disabled={busy}>
        Save settings
      </button>
    </form>
  );
}
