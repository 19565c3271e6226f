/**
 * Notification preferences. In-app notifications always arrive; these choose which also come by
 * e-mail (contract §2.5: `email_notifications` switches e-mail on, `notify_on` picks the topics).
 */
import { type FormEvent, useId, useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { useInvalidate } from '../../api/queries.ts';
import { Notice } from '../../ui/forms.tsx';
import { accountKeys, saveAccountSettings } from './accountApi.ts';

type Settings = Schemas['AccountSettings'];
type Topic = Settings['notify_on'][number];

const TOPICS: Array<{ topic: Topic; label: string }> = [
  { topic: 'dlq', label: 'A webhook delivery failed for good (dead letter)' },
  { topic: 'quota', label: 'Event usage reached 80%, 100%, 120% or 150% of the plan' },
  { topic: 'api_key', label: 'An API key was created or revoked' },
];

/** Every IANA zone the browser knows, with the saved one kept even if it does not know that. */
function timeZones(current: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return known.includes(current) ? known : [current, ...known];
}

/** The form keeps what was saved (the API stores exactly that), so no reload is needed after it. */
export function PreferencesForm({ settings }: { settings: Settings }) {
  const zoneId = useId();
  const [byEmail, setByEmail] = useState(settings.email_notifications);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const invalidate = useInvalidate();

  const save = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    setBusy(true);
    const { error: failure } = await saveAccountSettings({
      timezone: String(data.get('timezone')),
      email_notifications: byEmail,
      // A disabled fieldset sends nothing: the topics are kept for when e-mail is switched on again.
      ...(byEmail ? { notify_on: data.getAll('notify_on') as Topic[] } : {}),
    });
    setBusy(false);
    setError(failure ? errorMessage(failure) : null);
    setSaved(failure ? null : 'Preferences saved.');
    if (!failure) invalidate(accountKeys.settings);
  };

  return (
    <form className="stack preferences-form" onSubmit={(e) => void save(e)}>
      <div className="field">
        <label htmlFor={zoneId}>Time zone</label>
        <select id={zoneId} name="timezone" defaultValue={settings.timezone}>
          {timeZones(settings.timezone).map((zone) => (
            <option key={zone} value={zone}>
              {zone}
            </option>
          ))}
        </select>
      </div>
      <label className="check">
        <input
          type="checkbox"
          name="email_notifications"
          checked={byEmail}
          onChange={(e) => setByEmail(e.target.checked)}
        />{' '}
        Send me notifications by e-mail too
      </label>
      <fieldset className="topics" disabled={!byEmail}>
        <legend>E-mail me when</legend>
        {TOPICS.map(({ topic, label }) => (
          <label key={topic} className="check">
            <input
              type="checkbox"
              name="notify_on"
              value={topic}
              defaultChecked={settings.notify_on.includes(topic)}
            />{' '}
            {label}
          </label>
        ))}
      </fieldset>
      <Notice kind="error">{error}</Notice>
      <Notice kind="success">{saved}</Notice>
      <button type="submit" className="primary" disabled={busy}>
        Save preferences
      </button>
    </form>
  );
}
