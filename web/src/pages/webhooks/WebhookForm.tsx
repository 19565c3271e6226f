/**
 * Every setting of a webhook, for creating one (POST) or changing one (PATCH with every field, so
 * removed headers and geofences go too). Rules the API checks (URL, header names) come back as
 * its messages.
 */
import { type FormEvent, useId, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { Field, Notice } from '../../ui/forms.tsx';
import { type GeofenceChoice, GeofencePicker } from './GeofencePicker.tsx';
import { type HeaderRow, HeadersEditor, headerRow, headersOf } from './HeadersEditor.tsx';
import {
  EVENT_HINTS,
  METHODS,
  SUBSCRIBABLE,
  type SubscribableEvent,
  type Webhook,
  type WebhookMethod,
} from './types.ts';
import { createWebhook, updateWebhook } from './webhooksApi.ts';

interface Values {
  name: string;
  url: string;
  method: WebhookMethod;
  content_type: string;
  timeout_seconds: string;
  rate_limit_per_minute: string;
  events: SubscribableEvent[];
  headers: HeaderRow[];
  geofences: GeofenceChoice;
  enabled: boolean;
}

function initialValues(hook: Webhook | null): Values {
  return {
    name: hook?.name ?? '',
    url: hook?.url ?? '',
    method: hook?.method ?? 'POST',
    content_type: hook?.content_type ?? 'application/json',
    timeout_seconds: String(hook?.timeout_seconds ?? 30),
    rate_limit_per_minute: String(hook?.rate_limit_per_minute ?? 60),
    events: hook?.events ?? ['geofence.enter', 'geofence.exit'],
    headers: Object.entries(hook?.headers ?? {}).map(([name, value]) => headerRow(name, value)),
    geofences: {
      all: hook?.geofence_ids == null,
      chosen: (hook?.geofence_ids ?? []).map((id) => ({ id, label: id })),
    },
    enabled: hook?.enabled ?? true,
  };
}

export function WebhookForm({
  webhook,
  onSaved,
}: {
  webhook: Webhook | null;
  onSaved(hook: Webhook, secret?: string): void;
}) {
  const id = useId();
  const [values, setValues] = useState(() => initialValues(webhook));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = <K extends keyof Values>(key: K, value: Values[K]): void =>
    setValues((v) => ({ ...v, [key]: value }));

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const headers = headersOf(values.headers);
    if ('problem' in headers) return setError(headers.problem);
    if (values.events.length === 0) return setError('Choose at least one event type.');
    if (!values.geofences.all && values.geofences.chosen.length === 0)
      return setError('Add at least one geofence, or choose “Events of every geofence”.');
    const body = {
      name: values.name.trim(),
      url: values.url.trim(),
      method: values.method,
      content_type: values.content_type.trim(),
      timeout_seconds: Number(values.timeout_seconds),
      rate_limit_per_minute: Number(values.rate_limit_per_minute),
      events: values.events,
      headers: headers.headers,
      geofence_ids: values.geofences.all ? null : values.geofences.chosen.map((g) => g.id),
    };
    setBusy(true);
    setError(null);
    try {
      if (webhook) {
        const { data, error: failure } = await updateWebhook(webhook.id, body);
        if (data) onSaved(data);
        else setError(errorMessage(failure));
      } else {
        const { data, error: failure } = await createWebhook({ ...body, enabled: values.enabled });
        if (data) {
          const { secret, ...hook } = data;
          onSaved(hook, secret);
        } else setError(errorMessage(failure));
      }
    } finally {
      setBusy(false);
    }
  };

  const toggleEvent = (type: SubscribableEvent, on: boolean): void =>
    set(
      'events',
      SUBSCRIBABLE.filter((t) => (t === type ? on : values.events.includes(t))),
    );

  return (
    <form
      className="webhook-form"
      onSubmit={(event) => void submit(event)}
      aria-label={webhook ? 'Webhook settings' : 'New webhook'}
    >
      <Field
        label="Name"
        required
        maxLength={255}
        value={values.name}
        onChange={(e) => set('name', e.target.value)}
        placeholder="Dispatch system"
      />
      <Field
        label="URL"
        type="url"
        required
        maxLength={2048}
        value={values.url}
        onChange={(e) => set('url', e.target.value)}
        placeholder="https://example.com/hooks/geofence"
        hint="Where deliveries are sent (http or https)."
      />
      <div className="field-grid">
        <div className="field">
          <label htmlFor={`${id}-method`}>Method</label>
          <select
            id={`${id}-method`}
            value={values.method}
            onChange={(e) => set('method', e.target.value as WebhookMethod)}
          >
            {METHODS.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <Field
          label="Content type"
          required
          maxLength={255}
          value={values.content_type}
          onChange={(e) => set('content_type', e.target.value)}
        />
        <Field
          label="Timeout (seconds)"
          type="number"
          required
          min={1}
          max={60}
          value={values.timeout_seconds}
          onChange={(e) => set('timeout_seconds', e.target.value)}
          hint="Per attempt, 1 to 60."
        />
        <Field
          label="Rate limit (deliveries per minute)"
          type="number"
          required
          min={1}
          max={10000}
          value={values.rate_limit_per_minute}
          onChange={(e) => set('rate_limit_per_minute', e.target.value)}
          hint="More wait for the next minute."
        />
      </div>
      <fieldset className="event-choice">
        <legend>Event types</legend>
        {SUBSCRIBABLE.map((type) => (
          <label key={type} className="check">
            <input
              type="checkbox"
              checked={values.events.includes(type)}
              onChange={(e) => toggleEvent(type, e.target.checked)}
            />{' '}
            <code>{type}</code> <span className="hint">— {EVENT_HINTS[type]}</span>
          </label>
        ))}
      </fieldset>
      <GeofencePicker choice={values.geofences} onChange={(choice) => set('geofences', choice)} />
      <HeadersEditor rows={values.headers} onChange={(rows) => set('headers', rows)} />
      {webhook ? null : (
        <label className="check">
          <input
            type="checkbox"
            checked={values.enabled}
            onChange={(e) => set('enabled', e.target.checked)}
          />{' '}
          Enabled (deliver events from now on)
        </label>
      )}
      <Notice kind="error">{error}</Notice>
      <div className="button-row">
        <button type="submit" className="primary" disabled={busy}>
          {webhook ? 'Save changes' : 'Create webhook'}
        </button>
      </div>
    </form>
  );
}
