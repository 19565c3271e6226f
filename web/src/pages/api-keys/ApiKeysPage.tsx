import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { failureMessage } from '../../api/queries.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { focusOn } from '../../ui/focus.ts';
import { formatTime } from '../../ui/format.ts';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { RequireRole } from '../../ui/RequireRole.tsx';
import { apiKeyKeys, createApiKey, revokeApiKey, useApiKeys } from './apiKeysApi.ts';
import { SCOPE_GROUPS, type Scope } from './scopes.ts';

type ApiKey = Schemas['ApiKey'];

/**
 * Settings → API keys: create with scopes, the key shown once with a copy button, list, revoke.
 * Owners and admins manage the workspace's keys (contract §2.1); the API refuses members every
 * key operation, listing included, so a member is told who can instead of being shown a form.
 */
export function ApiKeysPage() {
  const { me } = useAuth();
  return (
    <main id="main" className="page">
      <h1>API keys</h1>
      <p className="lead">
        Keys let your devices and servers call the API. A key is shown once, when it is created.
      </p>
      <RequireRole roles={['owner', 'admin']} what="create, list or revoke the workspace's API keys">
        {/* Another workspace is another set of keys. */}
        <WorkspaceKeys key={me?.workspace_id} />
      </RequireRole>
    </main>
  );
}

function WorkspaceKeys() {
  const list = useApiKeys();
  const keys = list.data?.results ?? null;
  /** Why the list could not be loaded: shown in place of the list, never a lasting "Loading…". */
  const listError = failureMessage(list.error);
  const client = useQueryClient();
  /** Resolves once the list on screen was read again. */
  const load = () => client.invalidateQueries({ queryKey: apiKeyKeys.all });
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const listHeading = useRef<HTMLHeadingElement>(null);

  const create = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget;
    const scopes = new FormData(form).getAll('scope') as Scope[];
    if (scopes.length === 0) {
      setError('Choose at least one scope.');
      return;
    }
    const { data, error: failure } = await createApiKey({ name: formValue(form, 'name'), scopes });
    if (!data) {
      setError(errorMessage(failure));
      return;
    }
    setError(null);
    setRevoked(null);
    setCreated({ name: data.name, key: data.key });
    form.reset();
    await load();
  };

  const revoke = async (key: ApiKey): Promise<void> => {
    if (!window.confirm(`Revoke "${key.name}"? Clients using it stop working at once.`)) return;
    const { error: failure } = await revokeApiKey(key.id);
    if (failure) setError(errorMessage(failure));
    await load();
    // After the list: the row (and its focused button) is gone, and the message takes the focus.
    if (!failure) setRevoked(`“${key.name}” was revoked: clients using it are refused from now on.`);
  };

  return (
    <>
      {created ? (
        // Not spread: `key` is React's own prop and would never reach the component.
        <NewKey
          name={created.name}
          secret={created.key}
          onDone={() => {
            setCreated(null);
            // The section with the Done button goes away: the reader goes on at the list.
            focusOn(listHeading.current);
          }}
        />
      ) : null}
      <section aria-labelledby="create-key">
        <h2 id="create-key">Create a key</h2>
        <form onSubmit={create} className="stack">
          <Field label="Name" name="name" required maxLength={255} placeholder="Fleet tracker" />
          <fieldset className="scopes">
            <legend>Scopes</legend>
            <label className="check">
              <input type="checkbox" name="scope" value="*" /> Everything (<code>*</code>)
            </label>
            <div className="scope-groups">
              {SCOPE_GROUPS.map((group) => (
                <fieldset key={group.resource} className="scope-group">
                  <legend>{group.resource}</legend>
                  {group.scopes.map((scope) => (
                    <label key={scope} className="check">
                      <input type="checkbox" name="scope" value={scope} /> {scope.split(':')[1]}
                    </label>
                  ))}
                </fieldset>
              ))}
            </div>
          </fieldset>
          <Notice kind="error">{error}</Notice>
          <button type="submit" className="primary">
            Create key
          </button>
        </form>
      </section>
      <section aria-labelledby="key-list">
        <h2 id="key-list" ref={listHeading}>
          Keys
        </h2>
        <Notice kind="success">{revoked}</Notice>
        {keys === null ? (
          listError ? (
            <Notice kind="error">{listError}</Notice>
          ) : (
            <p role="status">Loading…</p>
          )
        ) : keys.length === 0 ? (
          <p>No keys yet.</p>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Prefix</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    <td>
                      <code>{key.prefix}…</code>
                    </td>
                    <td>{key.scopes.join(', ')}</td>
                    <td>{formatTime(key.created_at)}</td>
                    <td>{key.last_used_at ? formatTime(key.last_used_at) : 'Never'}</td>
                    <td>
                      <button type="button" className="danger" onClick={() => void revoke(key)}>
                        Revoke<span className="visually-hidden"> {key.name}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </>
  );
}

function NewKey({ name, secret, onDone }: { name: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  // The key is shown once: the reader is taken to it (the form they sent stays behind).
  useEffect(() => focusOn(heading.current), []);
  const copy = async (): Promise<void> => {
    await navigator.clipboard.writeText(secret);
    setCopied(true);
  };
  return (
    <section className="new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title" ref={heading}>
        Key “{name}” created
      </h2>
      <p>Copy it now: it will not be shown again.</p>
      <div className="copy-row">
        <code data-testid="new-api-key">{secret}</code>
        <button type="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <p role="status">{copied ? 'The key is on your clipboard.' : ''}</p>
      <button type="button" onClick={onDone}>
        Done
      </button>
    </section>
  );
}
