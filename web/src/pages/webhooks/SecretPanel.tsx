/**
 * The webhook's signing secret: hidden until "Reveal" asks the API for it, copyable, and
 * replaceable ("Rotate secret", confirmed first: the old secret stops working at once).
 */
import { useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { Notice } from '../../ui/forms.tsx';
import { revealSecret, rotateSecret } from './webhooksApi.ts';

export function SecretPanel({ webhookId, created }: { webhookId: string; created?: string | undefined }) {
  const [secret, setSecret] = useState<string | null>(created ?? null);
  const [message, setMessage] = useState<string | null>(
    created ? 'Webhook created. Its signing secret is shown below.' : null,
  );
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reveal = async (): Promise<void> => {
    setBusy(true);
    const { data, error: failure } = await revealSecret(webhookId);
    setBusy(false);
    if (data) {
      setSecret(data.secret);
      setError(null);
      setMessage(null);
    } else setError(errorMessage(failure));
  };

  const rotate = async (): Promise<void> => {
    const { data, error: failure } = await rotateSecret(webhookId);
    if (data) {
      setSecret(data.secret);
      setError(null);
      setMessage('Secret rotated: every delivery from now on is signed with the new secret.');
    } else setError(errorMessage(failure));
  };

  const copy = async (): Promise<void> => {
    if (secret === null) return;
    try {
      await navigator.clipboard.writeText(secret);
      setError(null);
      setMessage('The secret is on your clipboard.');
    } catch {
      // Denied (no permission, or the page is not focused): the secret is shown, so it can be selected.
      setMessage(null);
      setError('Could not copy to the clipboard: select the secret and copy it yourself.');
    }
  };

  return (
    <section className="secret-panel" aria-labelledby="secret-title">
      <h2 id="secret-title">Signing secret</h2>
      <p className="hint">
        Receivers check <code>X-SVC-Signature</code>: the HMAC-SHA256 of the raw body with this secret.
      </p>
      <div className="copy-row">
        {secret === null ? (
          <code>
            <span aria-hidden="true">whsec_••••••••••••••••</span>
            <span className="visually-hidden">Hidden</span>
          </code>
        ) : (
          <code data-testid="webhook-secret">{secret}</code>
        )}
        {secret === null ? (
          <button type="button" disabled={busy} onClick={() => void reveal()}>
            Reveal
          </button>
        ) : (
          <>
            <button type="button" onClick={() => void copy()}>
              Copy
            </button>
            <button
              type="button"
              onClick={() => {
                setSecret(null);
                setMessage(null);
              }}
            >
              Hide
            </button>
          </>
        )}
        <ConfirmButton
          question="Rotate the secret? The current one stops working at once."
          confirmLabel="Rotate"
          onConfirm={rotate}
        >
          Rotate secret
        </ConfirmButton>
      </div>
      <p role="status" className="secret-status">
        {message ?? ''}
      </p>
      <Notice kind="error">{error}</Notice>
    </section>
  );
}
