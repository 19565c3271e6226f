/**
 * The words of a geofence: its name, description and the caller's own external ID. A part of its
 * own so the form shell keeps to state and saving; each field shows the server's issue for it.
 */

import { TextField } from './GeofenceFormField.tsx';
import type { FieldErrors } from './geofenceFormState.ts';

export interface GeofenceDetails {
  name: string;
  description: string;
  externalId: string;
}

export function GeofenceDetailsFields({
  details,
  errors,
  onChange,
}: {
  details: GeofenceDetails;
  errors: FieldErrors;
  onChange: (change: Partial<GeofenceDetails>) => void;
}) {
  return (
    <>
      <TextField label="Name" error={errors.name}>
        {(attrs) => (
          <input
            {...attrs}
            value={details.name}
            onChange={(e) => onChange({ name: e.target.value })}
            required
            maxLength={255}
          />
        )}
      </TextField>
      <TextField label="Description" error={errors.description}>
        {(attrs) => (
          <textarea
            {...attrs}
            rows={2}
            value={details.description}
            maxLength={2000}
            onChange={(e) => onChange({ description: e.target.value })}
          />
        )}
      </TextField>
      <TextField
        label="External ID"
        hint="Your own identifier, unique in the workspace (optional)."
        error={errors.external_id}
      >
        {(attrs) => (
          <input
            {...attrs}
            value={details.externalId}
            maxLength={255}
            onChange={(e) => onChange({ externalId: e.target.value })}
          />
        )}
      </TextField>
    </>
  );
}
