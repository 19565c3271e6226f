/**
 * /webhooks/new and /webhooks/{id}: the settings form; for an existing webhook also the on/off
 * switch, the signing secret, "Send test event", deletion, and its deliveries.
 */
import { useState } from 'react';
import { errorMessage, thrownMessage } from '../../api/client.ts';
import { failureMessage, useForgetDeleted, useInvalidate } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { Notice } from '../../ui/forms.tsx';
import { DeliveriesList } from './DeliveriesList.tsx';
import { SecretPanel } from './SecretPanel.tsx';
import { TestEvent } from './TestEvent.tsx';
import type { Webhook } from './types.ts';
import { WebhookForm } from './WebhookForm.tsx';
import { WebhookHealthPanel } from './WebhookHealthPanel.tsx';
import { deleteWebhook, deliveryKeys, updateWebhook, useWebhook, webhookKeys } from './webhooksApi.ts';

/** The secret of a webhook just created here, shown on its page once (it is not in the URL). */
let justCreated: { id: string; secret: string } | null = null;

export function WebhookPage({ id }: { id: string | null }) {
  const invalidate = useInvalidate();
  if (id === null)
    return (
      <>
        <h1>New webhook</h1>
        <p className="lead">
          <Link href="/webhooks">All webhooks</Link>
        </p>
        <WebhookForm
          webhook={null}
          onSaved={(hook, secret) => {
            if (secret) justCreated = { id: hook.id, secret };
            invalidate(webhookKeys.all);
            navigate(`/webhooks/${hook.id}`);
          }}
        />
      </>
    );
  return <ExistingWebhook id={id} />;
}

function ExistingWebhook({ id }: { id: string }) {
  const loaded = useWebhook(id);
  const invalidate = useInvalidate();
  const forgetDeleted = useForgetDeleted();
  const [hook, setHook] = useState<Webhook | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [created] = useState(() => {
    const secret = justCreated?.id === id ? justCreated.secret : undefined;
    justCreated = null;
    return secret;
  });
  const current = hook ?? loaded.data;

  if (current === undefined)
    return (
      <>
        <h1>Webhook</h1>
        {loaded.error ? (
          <Notice kind="error">{failureMessage(loaded.error)}</Notice>
        ) : (
          <p role="status">Loading…</p>
        )}
      </>
    );

  const toggle = async (): Promise<void> => {
    setBusy(true);
    try {
      const { data, error: failure } = await updateWebhook(id, { enabled: !current.enabled });
      if (data) {
        setHook(data);
        invalidate(webhookKeys.all);
        setError(null);
        setMessage(data.enabled ? 'Enabled: new events are delivered.' : 'Disabled: no new deliveries.');
      } else setError(errorMessage(failure));
    } catch (thrown) {
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  const remove = async (): Promise<void> => {
    const { error: failure } = await deleteWebhook(id);
    if (failure) setError(errorMessage(failure));
    else {
      forgetDeleted(webhookKeys.all);
      forgetDeleted(deliveryKeys.all);
      navigate('/webhooks');
    }
  };

  return (
    <>
      <h1>{current.name}</h1>
      <p className="lead">
        <code>
          {current.method} {current.url}
        </code>
      </p>
      <div className="webhook-actions">
        <div className="field switch-row">
          <button
            type="button"
            role="switch"
            aria-checked={current.enabled}
            className={`switch ${current.enabled ? 'on' : 'off'}`}
            disabled={busy}
            onClick={() => void toggle()}
          >
            Enabled
          </button>
          <span className="hint">
            {current.enabled ? 'Events are delivered.' : 'Disabled: nothing is sent.'}
          </span>
        </div>
        <TestEvent webhookId={id} onDone={() => invalidate(deliveryKeys.all)} />
        <ConfirmButton
          danger
          question={`Delete “${current.name}”? Its queued deliveries stop.`}
          confirmLabel="Delete"
          onConfirm={remove}
        >
          Delete webhook
        </ConfirmButton>
      </div>
      <p role="status">{message ?? ''}</p>
      <Notice kind="error">{error}</Notice>
      <WebhookHealthPanel webhookId={id} />
      <SecretPanel webhookId={id} created={created} />
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <WebhookForm
          webhook={current}
          onSaved={(saved) => {
            setHook(saved);
            invalidate(webhookKeys.all);
            setError(null);
            setMessage('Changes saved.');
          }}
        />
      </section>
      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Deliveries</h2>
        <DeliveriesList webhookId={id} />
      </section>
    </>
  );
}
