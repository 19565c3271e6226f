/**
 * A new device, from the list: a name and, optionally, the external id the customer's own systems
 * know it by. The new device opens on its own page, where a tracker can be connected to it.
 */
import { type FormEvent, useState } from 'react';
import { errorMessage, thrownMessage } from '../../api/client.ts';
import { useInvalidate } from '../../api/queries.ts';
import { navigate } from '../../app/router.ts';
import { Field, formValue, Notice } from '../../ui/forms.tsx';
import { useEntityLookups } from '../events/entities.ts';
import { createDevice, deviceKeys } from './devicesApi.ts';

export function CreateDeviceForm() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { rememberDevice } = useEntityLookups();
  const invalidate = useInvalidate();

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    const form = event.currentTarget;
    const name = formValue(form, 'name').trim();
    const externalId = formValue(form, 'external_id').trim();
    if (!name) {
      setError('A device needs a name.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const { data, error: failure } = await createDevice({
        name,
        ...(externalId ? { external_id: externalId } : {}),
      });
      if (!data) {
        setError(errorMessage(failure));
        return;
      }
      invalidate(deviceKeys.all);
      rememberDevice({ id: data.id, label: data.name, detail: data.external_id });
      navigate(`/devices/${data.id}`);
    } catch (thrown) {
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  return (
    <details className="create-device">
      <summary>Add a device</summary>
      <form aria-label="Add a device" onSubmit={(event) => void submit(event)}>
        <div className="form-row">
          <Field label="Name" name="name" required maxLength={255} autoComplete="off" />
          <Field
            label="External id (optional)"
            name="external_id"
            maxLength={255}
            autoComplete="off"
            hint="Your own identifier for it, unique in the workspace; trackers can name the device by it."
          />
        </div>
        <Notice kind="error">{error}</Notice>
        <button type="submit" className="primary" disabled={busy}>
          Create device
        </button>
      </form>
    </details>
  );
}
