/** A device's name and identifiers, saved with a partial update (only what changed is sent). */
import { type FormEvent, useState } from 'react';
import { errorMessage, type Schemas, thrownMessage } from '../../api/client.ts';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { updateDevice } from './devicesApi.ts';

export function DeviceForm({
  device,
  onSaved,
}: {
  device: Schemas['Device'];
  onSaved(device: Schemas['Device']): void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget;
    const name = formValue(form, 'name').trim();
    // An emptied identifier is cleared (null), as the API takes it.
    const externalId = formValue(form, 'external_id').trim() || null;
    const userId = formValue(form, 'user_id').trim() || null;
    setSaved(null);
    if (!name) {
      setError('A device needs a name.');
      return;
    }
    const body = {
      ...(name !== device.name ? { name } : {}),
      ...(externalId !== device.external_id ? { external_id: externalId } : {}),
      ...(userId !== device.user_id ? { user_id: userId } : {}),
    };
    if (Object.keys(body).length === 0) {
      setError(null);
      setSaved('Nothing changed.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const { data, error: failure } = await updateDevice(device.id, body);
      if (!data) {
        setError(errorMessage(failure));
        return;
      }
      setSaved('Saved.');
      onSaved(data);
    } catch (thrown) {
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="device-form"
      aria-labelledby="device-form-title"
      onSubmit={(event) => void submit(event)}
    >
      <h2 id="device-form-title">Name and identifiers</h2>
      <Field
        label="Name"
        name="name"
        required
        maxLength={255}
        defaultValue={device.name}
        autoComplete="off"
      />
      <Field
        label="External id"
        name="external_id"
        maxLength={255}
        defaultValue={device.external_id ?? ''}
        autoComplete="off"
        hint="Your own identifier, unique in the workspace. Empty: none."
      />
      <Field
        label="User id"
        name="user_id"
        maxLength={255}
        defaultValue={device.user_id ?? ''}
        autoComplete="off"
        hint="Who or what carries the device, in your terms; sent as user_id in its events."
      />
      <button type="submit" className="primary" disabled={busy}>
        Save
      </button>
      <Notice kind="error">{error}</Notice>
      <Notice kind="success">{saved}</Notice>
    </form>
  );
}
