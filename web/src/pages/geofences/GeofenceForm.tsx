/**
 * The form of one geofence: its fields, its geometry as GeoJSON text (the keyboard's way to draw),
 * and save / enable / delete. Server errors land where they belong: a 422 issue beside its field,
 * a geometry error (400 INVALID_GEOMETRY) in the form and pinned on the map where it happened.
 */
import { type FormEvent, type ReactNode, useEffect, useId, useState } from 'react';
import { api, errorMessage } from '../../api/client.ts';
import { type GeofenceGeometry, parseGeometry } from '../../map/geofenceGeometry.ts';
import { formatPosition, formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import type { Geofence } from './geofenceApi.ts';

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

type RuleName = 'dwell_seconds' | 'exit_buffer_m' | 'max_accuracy_m';
type FieldName = 'name' | 'description' | 'external_id' | 'metadata' | 'geometry' | 'enabled' | RuleName;
type FieldErrors = Partial<Record<FieldName, string>>;
const FIELDS: readonly FieldName[] = [
  'name',
  'description',
  'external_id',
  'metadata',
  'geometry',
  'enabled',
  'dwell_seconds',
  'exit_buffer_m',
  'max_accuracy_m',
];

/**
 * The rules of contract §4.5 as the form offers them: an empty field is `null` (the rule is off,
 * behaviour exactly §4.3). Ranges are the API's; the server checks them and its message lands at
 * the field, so the form does not refuse first with a different wording.
 */
const RULES: ReadonlyArray<{
  name: RuleName;
  label: string;
  min: number;
  max: number;
  unit: string;
  integer: boolean;
  off: string;
}> = [
  {
    name: 'dwell_seconds',
    label: 'Dwell (seconds)',
    min: 60,
    max: 86_400,
    unit: 's',
    integer: true,
    off: 'A device inside this long gets one dwell event per visit. Empty: no dwell events.',
  },
  {
    name: 'exit_buffer_m',
    label: 'Exit buffer (metres)',
    min: 1,
    max: 1_000,
    unit: 'm',
    integer: false,
    off: 'A device inside leaves only when this far outside (the dashed ring). Empty: exit at the edge.',
  },
  {
    name: 'max_accuracy_m',
    label: 'Maximum accuracy (metres)',
    min: 1,
    max: 10_000,
    unit: 'm',
    integer: false,
    off: 'Locations less accurate than this change nothing here. Empty: every location counts.',
  },
];

type RuleTexts = Record<RuleName, string>;

function ruleTexts(geofence: Geofence | null): RuleTexts {
  const text = (value: number | null | undefined): string => (value == null ? '' : String(value));
  return {
    dwell_seconds: text(geofence?.dwell_seconds),
    exit_buffer_m: text(geofence?.exit_buffer_m),
    max_accuracy_m: text(geofence?.max_accuracy_m),
  };
}

/** A rule's field as the API wants it: empty is null (off); anything else the number typed. */
function ruleValue(text: string): number | null {
  return text.trim() === '' ? null : Number(text);
}

const BAD_NUMBER = 'Enter a number, or leave empty to switch the rule off.';

/**
 * The rules a save sends: a new geofence those that are set; an edit only those changed since it
 * was loaded, so a save does not undo a rule changed elsewhere meanwhile.
 */
function rulesToSend(geofence: Geofence | null, rules: RuleTexts): Partial<Record<RuleName, number | null>> {
  const send: Partial<Record<RuleName, number | null>> = {};
  for (const { name } of RULES) {
    const value = ruleValue(rules[name]);
    if (geofence ? value !== (geofence[name] ?? null) : value !== null) send[name] = value;
  }
  return send;
}

/** The metadata text as the object the API wants, or why it is not one. */
function parseMetadata(text: string): { value: Record<string, unknown> } | { problem: string } {
  if (text.trim() === '') return { value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      return { problem: 'Metadata must be a JSON object, e.g. {"region": "north"}.' };
    }
    return { value: value as Record<string, unknown> };
  } catch (error) {
    return { problem: `Metadata is not valid JSON: ${(error as Error).message}` };
  }
}

export function GeofenceForm(props: Props) {
  const { geofence } = props;
  const [name, setName] = useState(geofence?.name ?? '');
  const [description, setDescription] = useState(geofence?.description ?? '');
  const [externalId, setExternalId] = useState(geofence?.external_id ?? '');
  const [enabled, setEnabled] = useState(geofence?.enabled ?? true);
  const [metadataText, setMetadataText] = useState(
    geofence && Object.keys(geofence.metadata).length > 0 ? JSON.stringify(geofence.metadata, null, 2) : '',
  );
  const [rules, setRules] = useState<RuleTexts>(() => ruleTexts(geofence));
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<ReactNode>(null);
  const [busy, setBusy] = useState(false);
  const metadata = parseMetadata(metadataText);
  const metadataProblem = 'problem' in metadata ? metadata.problem : null;
  const geometryError = props.geometryProblem ?? fieldErrors.geometry ?? null;
  const exitBuffer = ruleValue(rules.exit_buffer_m);
  const { onExitBuffer } = props;
  // The ring on the map follows the field as it is typed; a value out of range is still drawn (the
  // server says what is wrong with it on save).
  useEffect(() => {
    onExitBuffer(exitBuffer !== null && Number.isFinite(exitBuffer) && exitBuffer > 0 ? exitBuffer : null);
  }, [exitBuffer, onExitBuffer]);

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    setFieldErrors({});
    setFormError(null);
    // A number field holding text that is not a number reads as '' (which would switch the rule
    // off): only the field's validity tells the two apart.
    const badRules: FieldErrors = {};
    for (const { name: rule } of RULES) {
      const input = event.currentTarget.elements.namedItem(rule);
      if (input instanceof HTMLInputElement && input.validity.badInput) badRules[rule] = BAD_NUMBER;
    }
    if (Object.keys(badRules).length > 0) {
      setFieldErrors(badRules);
      setFormError('Some fields need a fix: see the messages below them.');
      return;
    }
    if ('problem' in metadata) {
      setFormError(metadata.problem);
      return;
    }
    if (props.geometryText.trim() === '') {
      setFieldErrors({ geometry: 'Draw a polygon or a circle on the map, or type its GeoJSON.' });
      setFormError('A geofence needs a geometry: draw it on the map, or type its GeoJSON below.');
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
    const fields = {
      name,
      description: description.trim() === '' ? null : description,
      external_id: externalId.trim() === '' ? null : externalId,
      metadata: metadata.value,
      ...rulesToSend(geofence, rules),
    };
    const { data, error, response } = geofence
      ? await api.PATCH('/api/v1/geofences/{geofence_id}', {
          params: { path: { geofence_id: geofence.id } },
          body: geometryChanged(geofence, parsed.geometry)
            ? { ...fields, geometry: parsed.geometry }
            : fields,
        })
      : await api.POST('/api/v1/geofences', { body: { ...fields, enabled, geometry: parsed.geometry } });
    setBusy(false);
    if (data) {
      // A rule not sent may have been changed elsewhere: show what the geofence has now.
      setRules(ruleTexts(data));
      props.onSaved(data, !geofence);
      return;
    }
    showError(response.status, error);
  };

  const showError = (status: number, error: unknown): void => {
    const body = (error ?? {}) as {
      detail?: unknown;
      error_code?: string;
      details?: Record<string, unknown>;
    };
    if (body.error_code === 'INVALID_GEOMETRY' && typeof body.detail === 'string') {
      const reason = typeof body.details?.reason === 'string' ? body.details.reason : null;
      const location = asPosition(body.details?.location);
      const where = location ? ` at ${formatPosition(location)}` : '';
      setFieldErrors({ geometry: `${body.detail}${reason ? ` (${reason}${where})` : ''}` });
      setFormError(body.detail);
      props.onGeometryError(location, body.detail);
      return;
    }
    if (status === 422 && Array.isArray(body.detail)) {
      const errors: FieldErrors = {};
      const rest: string[] = [];
      for (const issue of body.detail as { loc?: (string | number)[]; msg?: string }[]) {
        const field = FIELDS.find((f) => issue.loc?.[0] === 'body' && issue.loc[1] === f);
        const where = (issue.loc ?? []).slice(2).join('.');
        const text = `${where ? `${where}: ` : ''}${issue.msg ?? 'invalid'}`;
        if (field) errors[field] = errors[field] ? `${errors[field]}; ${text}` : text;
        else rest.push(errorMessage({ detail: [issue] }));
      }
      setFieldErrors(errors);
      setFormError(
        rest.length > 0 ? rest.join('; ') : 'Some fields need a fix: see the messages below them.',
      );
      return;
    }
    if (body.error_code === 'DUPLICATE_RESOURCE') setFieldErrors({ external_id: errorMessage(error) });
    setFormError(errorMessage(error));
  };

  const toggle = async (): Promise<void> => {
    if (!geofence) return;
    setBusy(true);
    const { data, error, response } = await api.PATCH('/api/v1/geofences/{geofence_id}', {
      params: { path: { geofence_id: geofence.id } },
      body: { enabled: !geofence.enabled },
    });
    setBusy(false);
    if (data) props.onSaved(data, false);
    else showError(response.status, error);
  };

  const remove = async (): Promise<void> => {
    if (!geofence) return;
    if (!window.confirm(`Delete the geofence “${geofence.name}”? Devices stop getting its events.`)) return;
    setBusy(true);
    const { error, response } = await api.DELETE('/api/v1/geofences/{geofence_id}', {
      params: { path: { geofence_id: geofence.id } },
    });
    setBusy(false);
    if (response.ok) props.onDeleted(geofence);
    else showError(response.status, error);
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
        <TextField label="Name" error={fieldErrors.name}>
          {(attrs) => (
            <input
              {...attrs}
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={255}
            />
          )}
        </TextField>
        <TextField label="Description" error={fieldErrors.description}>
          {(attrs) => (
            <textarea
              {...attrs}
              rows={2}
              value={description}
              maxLength={2000}
              onChange={(e) => setDescription(e.target.value)}
            />
          )}
        </TextField>
        <TextField
          label="External ID"
          hint="Your own identifier, unique in the workspace (optional)."
          error={fieldErrors.external_id}
        >
          {(attrs) => (
            <input
              {...attrs}
              value={externalId}
              maxLength={255}
              onChange={(e) => setExternalId(e.target.value)}
            />
          )}
        </TextField>
        {geofence ? (
          <div className="field switch-row">
            <button
              type="button"
              role="switch"
              aria-checked={geofence.enabled}
              className={`switch ${geofence.enabled ? 'on' : 'off'}`}
              disabled={busy}
              onClick={() => void toggle()}
            >
              Enabled
            </button>
            <span className="hint">
              {geofence.enabled ? 'Produces events and matches /contains.' : 'Disabled: no events.'}
            </span>
          </div>
        ) : (
          <label className="check">
            <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
          </label>
        )}
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
        <TextField
          label="Geometry (GeoJSON)"
          hint='A "Polygon" (shell, then holes; rings closed) or {"type": "Circle", "coordinates": [lng, lat], "radius": metres}. Drawing on the map fills this in.'
          error={geometryError}
        >
          {(attrs) => (
            <textarea
              {...attrs}
              rows={6}
              spellCheck={false}
              value={props.geometryText}
              onChange={(e) => {
                setFieldErrors((f) => ({ ...f, geometry: undefined }));
                props.onGeometryText(e.target.value);
              }}
            />
          )}
        </TextField>
        <button type="button" onClick={() => props.onApplyGeometry(true)}>
          Show geometry on map
        </button>
        <fieldset className="rules">
          <legend>Dwell, exit buffer and accuracy</legend>
          <p className="hint">Optional rules; leave a field empty to turn its rule off.</p>
          {RULES.map((rule) => (
            <TextField
              key={rule.name}
              label={rule.label}
              hint={`${rule.min.toLocaleString()}–${rule.max.toLocaleString()} ${rule.unit}. ${rule.off}`}
              error={fieldErrors[rule.name]}
            >
              {(attrs) => (
                <input
                  {...attrs}
                  name={rule.name}
                  type="number"
                  inputMode={rule.integer ? 'numeric' : 'decimal'}
                  min={rule.min}
                  max={rule.max}
                  step={rule.integer ? 1 : 'any'}
                  value={rules[rule.name]}
                  placeholder="off"
                  onChange={(e) => {
                    const value = e.target.value;
                    setRules((r) => ({ ...r, [rule.name]: value }));
                    setFieldErrors((f) => ({ ...f, [rule.name]: undefined }));
                  }}
                />
              )}
            </TextField>
          ))}
        </fieldset>
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

function geometryChanged(geofence: Geofence, geometry: GeofenceGeometry): boolean {
  return JSON.stringify(geofence.geometry) !== JSON.stringify(geometry);
}

function asPosition(value: unknown): [number, number] | null {
  return Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'number'
    ? [value[0], value[1]]
    : null;
}

interface FieldAttrs {
  id: string;
  'aria-invalid': boolean | undefined;
  'aria-describedby': string | undefined;
}

/** A labelled control with its hint and its error (tied to it for screen readers). */
function TextField({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: string;
  error?: string | null;
  children: (attrs: FieldAttrs) => ReactNode;
}) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({
        id,
        'aria-invalid': error ? true : undefined,
        'aria-describedby': described || undefined,
      })}
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      {error ? (
        <small id={`${id}-error`} className="field-error">
          {error}
        </small>
      ) : null}
    </div>
  );
}
