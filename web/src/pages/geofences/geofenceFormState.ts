/**
 * What the geofence form decides without a browser: the rule fields (contract §4.5) as text and as
 * numbers, the checks made before a save and the body a save sends (server errors are placed by
 * geofenceFormErrors.ts). Kept apart from the components so they can be tested without a browser.
 */
// Types straight from the generated schema: this module stays free of the client and the map.
import type { components } from '../../api/schema.ts';

type Geofence = components['schemas']['Geofence'];

export type RuleName = 'dwell_seconds' | 'exit_buffer_m' | 'max_accuracy_m';
export type FieldName =
  | 'name'
  | 'description'
  | 'external_id'
  | 'metadata'
  | 'geometry'
  | 'enabled'
  | RuleName;
export type FieldErrors = Partial<Record<FieldName, string>>;
export interface Rule {
  name: RuleName;
  label: string;
  min: number;
  max: number;
  unit: string;
  integer: boolean;
  off: string;
}

/**
 * The rules of contract §4.5 as the form offers them: an empty field is `null` (the rule is off,
 * behaviour exactly §4.3). Ranges are the API's; the server checks them and its message lands at
 * the field, so the form does not refuse first with a different wording.
 */
export const RULES: readonly Rule[] = [
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

export type RuleTexts = Record<RuleName, string>;

export function ruleTexts(geofence: Geofence | null): RuleTexts {
  const text = (value: number | null | undefined): string => (value == null ? '' : String(value));
  return {
    dwell_seconds: text(geofence?.dwell_seconds),
    exit_buffer_m: text(geofence?.exit_buffer_m),
    max_accuracy_m: text(geofence?.max_accuracy_m),
  };
}

/** A rule's field as the API wants it: empty is null (off); anything else the number typed. */
export function ruleValue(text: string): number | null {
  return text.trim() === '' ? null : Number(text);
}

/**
 * The exit buffer to ring on the map as it is typed: a value out of range is still drawn (the
 * server says what is wrong with it on save); nothing for an empty field or one that is no length.
 */
export function bufferToDraw(text: string): number | null {
  const metres = ruleValue(text);
  return metres !== null && Number.isFinite(metres) && metres > 0 ? metres : null;
}

export const BAD_NUMBER = 'Enter a number, or leave empty to switch the rule off.';
export const FIX_BELOW = 'Some fields need a fix: see the messages below them.';

/**
 * The rules a save sends: a new geofence those that are set; an edit only those changed since it
 * was loaded, so a save does not undo a rule changed elsewhere meanwhile.
 */
export function rulesToSend(
  geofence: Geofence | null,
  rules: RuleTexts,
): Partial<Record<RuleName, number | null>> {
  const send: Partial<Record<RuleName, number | null>> = {};
  for (const { name } of RULES) {
    const value = ruleValue(rules[name]);
    if (geofence ? value !== (geofence[name] ?? null) : value !== null) send[name] = value;
  }
  return send;
}

export type MetadataResult = { value: Record<string, unknown> } | { problem: string };

/** The metadata as the form first shows it: empty for none, else indented JSON. */
export function metadataText(geofence: Geofence | null): string {
  return geofence && Object.keys(geofence.metadata).length > 0
    ? JSON.stringify(geofence.metadata, null, 2)
    : '';
}

/** The metadata text as the object the API wants, or why it is not one. */
export function parseMetadata(text: string): MetadataResult {
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

/** Why the form refuses to send, where (beside the fields) and in its summary. */
export interface Refusal {
  fieldErrors: FieldErrors;
  formError: string;
}

/**
 * The checks made before the geometry is read, in the order the form reports them. `badRules` are
 * the number fields holding text that is not a number: such a field reads as '' (which would
 * switch the rule off), and only the input's validity tells the two apart.
 */
export function checkBeforeSave(
  badRules: readonly RuleName[],
  metadata: MetadataResult,
  geometryText: string,
): Refusal | { metadata: Record<string, unknown> } {
  if (badRules.length > 0) {
    const fieldErrors: FieldErrors = {};
    for (const rule of badRules) fieldErrors[rule] = BAD_NUMBER;
    return { fieldErrors, formError: FIX_BELOW };
  }
  if ('problem' in metadata) return { fieldErrors: {}, formError: metadata.problem };
  if (geometryText.trim() === '') {
    return {
      fieldErrors: { geometry: 'Draw a polygon or a circle on the map, or type its GeoJSON.' },
      formError: 'A geofence needs a geometry: draw it on the map, or type its GeoJSON below.',
    };
  }
  return { metadata: metadata.value };
}

export interface FormTexts {
  name: string;
  description: string;
  externalId: string;
  metadata: Record<string, unknown>;
  rules: RuleTexts;
}

/** The fields a save sends, new or edit: empty optional texts are null. */
export function savedFields(geofence: Geofence | null, form: FormTexts) {
  return {
    name: form.name,
    description: form.description.trim() === '' ? null : form.description,
    external_id: form.externalId.trim() === '' ? null : form.externalId,
    metadata: form.metadata,
    ...rulesToSend(geofence, form.rules),
  };
}

/** Whether an edit's geometry differs from the saved one: only then does the save send it. */
export function geometryChanged(geofence: Geofence, geometry: unknown): boolean {
  return JSON.stringify(geofence.geometry) !== JSON.stringify(geometry);
}
