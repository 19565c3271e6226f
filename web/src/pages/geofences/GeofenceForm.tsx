/**
 * The form of one geofence: its fields, its geometry as GeoJSON text (the keyboard's way to draw),
 * and save / enable / delete. Server errors land where they belong: a 422 issue beside its field,
 * a geometry error (400 INVALID_GEOMETRY) in the form and pinned on the map where it happened.
 * This shell holds the state and the saves; the field groups, the decisions (geofenceFormState.ts,
 * geofenceFormErrors.ts) and the calls (geofenceApi.ts) live beside it.
 */
import { type FormEvent, type ReactNode, useEffect, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { useForgetDeleted, useInvalidate } from '../../api/queries.ts';
import { parseGeometry } from '../../map/geofenceGeometry.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { type GeofenceDetails, GeofenceDetailsFields } from './GeofenceDetailsFields.tsx';
import { GeofenceEnabledField } from './GeofenceEnabledField.tsx';
import { TextField } from './GeofenceFormField.tsx';
import { GeofenceRulesFields } from './GeofenceRulesFields.tsx';
import { GeofenceShapeFields } from './GeofenceShapeFields.tsx';
import {
  createGeofence,
  deleteGeofence,
  type Geofence,
  geofenceKeys,
  updateGeofence,
} from './geofenceApi.ts';
import { errorBody, fieldIssuesOf, geometryErrorOf, summaryOfUnplaced } from './geofenceFormErrors.ts';
import {
  bufferToDraw,
  checkBeforeSave,
  type FieldErrors,
  geometryChanged,
  metadataText as initialMetadataText,
  parseMetadata,
  RULES,
  type RuleTexts,
  ruleTexts,
  savedFields,
} from './geofenceFormState.ts';

interface Props {
  /** The geofence being edited, or null for a new one. */
  geofence: Geofence | null;
  geometryText: string;
  /** A problem of the current geometry found before any request (bad JSON, a cut into pieces). */
  geometryProblem: string | null;
  onGeometryText: (text: string) => void;
  /** Draws the typed geometry on the map; false (and a geometry problem) when it cannot be read. */
  onApplyGeometry: (fit: boolean) => boolean;
  onSaved: (geofence: Geofence, created: boolean) => void;
  onDeleted: (geofence: Geofence) => void;
  onClose: () => void;
  /** A 400 INVALID_GEOMETRY: where (if the server said) and why. */
  onGeometryError: (location: [number, number] | null, message: string) => void;
  /** The exit buffer as typed (metres, null when empty), for the ring on the map. */
  onExitBuffer: (metres: number | null) => void;
}

export function GeofenceForm(props: Props) {
  const { geofence } = props;
  const [details, setDetails] = useState<GeofenceDetails>(() => ({
    name: geofence?.name ?? '',
    description: geofence?.description ?? '',
    externalId: geofence?.external_id ?? '',
  }));
  const [enabled, setEnabled] = useState(geofence?.enabled ?? true);
  const [metadataText, setMetadataText] = useState(() => initialMetadataText(geofence));
  const [rules, setRules] = useState<RuleTexts>(() => ruleTexts(geofence));
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<ReactNode>(null);
  const [busy, setBusy] = useState(false);
  // Saves go through the plain API functions: the lists, pickers and names cached elsewhere are
  // told here (a deleted one is only marked stale, so the page being left never asks for it).
  const invalidate = useInvalidate();
  const forgetDeleted = useForgetDeleted();
  const metadata = parseMetadata(metadataText);
  const metadataProblem = 'problem' in metadata ? metadata.problem : null;
  const geometryError = props.geometryProblem ?? fieldErrors.geometry ?? null;
  const exitBuffer = bufferToDraw(rules.exit_buffer_m);
  const { onExitBuffer } = props;
  // The ring on the map follows the field as it is typed.
  useEffect(() => {
    onExitBuffer(exitBuffer);
  }, [exitBuffer, onExitBuffer]);

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    setFieldErrors({});
    setFormError(null);
    const form = event.currentTarget;
    const badRules = RULES.map((rule) => rule.name).filter((rule) => {
      const input = form.elements.namedItem(rule);
      return input instanceof HTMLInputElement && input.validity.badInput;
    });
    const checked = checkBeforeSave(badRules, metadata, props.geometryText);
    if ('formError' in checked) {
      setFieldErrors(checked.fieldErrors);
      setFormError(checked.formError);
      return;
    }
    const parsed = parseGeometry(props.geometryText);
    if ('problem' in parsed) {
      setFieldErrors({ geometry: parsed.problem });
      setFormError(parsed.problem);
      return;
    }
    // Text typed but not applied yet: show on the map what is about to be saved.
    props.onApplyGeometry(false);
    setBusy(true);
    const fields = savedFields(geofence, { ...details, metadata: checked.metadata, rules });
    const { data, error, response } = geofence
      ? await updateGeofence(
          geofence.id,
          geometryChanged(geofence, parsed.geometry) ? { ...fields, geometry: parsed.geometry } : fields,
        )
      : await createGeofence({ ...fields, enabled, geometry: parsed.geometry });
    setBusy(false);
    if (data) {
      invalidate(geofenceKeys.all);
      // A rule not sent may have been changed elsewhere: show what the geofence has now.
      setRules(ruleTexts(data));
      props.onSaved(data, !geofence);
      return;
    }
    showError(response.status, error);
  };

  const showError = (status: number, error: unknown): void => {
    const body = errorBody(error);
    const geometry = geometryErrorOf(body);
    if (geometry) {
      setFieldErrors({ geometry: geometry.field });
      setFormError(geometry.detail);
      props.onGeometryError(geometry.location, geometry.detail);
      return;
    }
    const issues = fieldIssuesOf(status, body);
    if (issues) {
      setFieldErrors(issues.fieldErrors);
      setFormError(summaryOfUnplaced(issues.unplaced.map((issue) => errorMessage({ detail: [issue] }))));
      return;
    }
    if (body.error_code === 'DUPLICATE_RESOURCE') setFieldErrors({ external_id: errorMessage(error) });
    setFormError(errorMessage(error));
  };

  const toggle = async (): Promise<void> => {
    if (!geofence) return;
    setBusy(true);
    const { data, error, response } = await updateGeofence(geofence.id, { enabled: !geofence.enabled });
    setBusy(false);
    if (data) {
      invalidate(geofenceKeys.all);
      props.onSaved(data, false);
    } else showError(response.status, error);
  };

  const remove = async (): Promise<void> => {
    if (!geofence) return;
    if (!window.confirm(`Delete the geofence “${geofence.name}”? Devices stop getting its events.`)) return;
    setBusy(true);
    const { error, response } = await deleteGeofence(geofence.id);
    setBusy(false);
    if (response.ok) {
      forgetDeleted(geofenceKeys.all);
      props.onDeleted(geofence);
    } else showError(response.status, error);
  };

  return (
    <section aria-labelledby="geofence-form-title" className="geofence-editor">
      <div className="editor-head">
        <h2 id="geofence-form-title">{geofence ? `Edit “${geofence.name}”` : 'New geofence'}</h2>
        <button type="button" onClick={props.onClose}>
          Close form
        </button>
      </div>
      {geofence ? (
        <p className="hint">
          Created {formatTime(geofence.created_at)}, updated {formatTime(geofence.updated_at)}.
        </p>
      ) : (
        <p className="hint">
          Draw a polygon, rectangle or circle with the tools at the top left of the map, or type the geometry
          as GeoJSON below.
        </p>
      )}
      {/* noValidate: the server checks every field and its message lands at that field. */}
      <form onSubmit={submit} noValidate>
        <GeofenceDetailsFields
          details={details}
          errors={fieldErrors}
          onChange={(change) => setDetails((d) => ({ ...d, ...change }))}
        />
        <GeofenceEnabledField
          saved={geofence ? geofence.enabled : null}
          enabled={enabled}
          busy={busy}
          onToggle={() => void toggle()}
          onEnabled={setEnabled}
        />
        <TextField
          label="Metadata (JSON object)"
          hint='Copied into webhook payloads, e.g. {"region": "north"}.'
          error={metadataProblem ?? fieldErrors.metadata}
        >
          {(attrs) => (
            <textarea
              {...attrs}
              rows={3}
              spellCheck={false}
              value={metadataText}
              onChange={(e) => setMetadataText(e.target.value)}
            />
          )}
        </TextField>
        <GeofenceShapeFields
          geometryText={props.geometryText}
          error={geometryError}
          onGeometryText={(text) => {
            setFieldErrors((f) => ({ ...f, geometry: undefined }));
            props.onGeometryText(text);
          }}
          onShowOnMap={() => props.onApplyGeometry(true)}
        />
        <GeofenceRulesFields
          rules={rules}
          errors={fieldErrors}
          onRule={(rule, text) => {
            setRules((r) => ({ ...r, [rule]: text }));
            setFieldErrors((f) => ({ ...f, [rule]: undefined }));
          }}
        />
        <Notice kind="error">{formError}</Notice>
        <div className="button-row">
          <button type="submit" className="primary" disabled={busy}>
            {geofence ? 'Save changes' : 'Create geofence'}
          </button>
          {geofence ? (
            <button type="button" className="danger" disabled={busy} onClick={() => void remove()}>
              Delete
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
