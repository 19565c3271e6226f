/**
 * Reads the body of POST /geofences/batch (contract §3). The body as a whole must be one of the two
 * forms (a 422 for the request otherwise); then each item is checked on its own with the rules of
 * POST /geofences, in the same order — the text rules of contract §1, the schema, the geometry — so
 * that a rejected item carries exactly the error a single create would have answered, its `loc`
 * pointing into the body as sent.
 */

import { Type } from 'typebox';
import type { GeometryValid } from '../geo/index.ts';
import { StringEnum } from '../http/schemas.ts';
import { textIssues } from '../http/text-rules.ts';
import { createAjv } from '../http/validation.ts';
import { toValidationIssues, type ValidationIssue } from '../http/validation-errors.ts';
import { DomainError, FieldValidationError, InvalidGeometryError } from '../shared/errors.ts';
import { FeatureIn, MAX_BATCH_GEOFENCES } from './geofence-batch.schemas.ts';
import { CreateGeofenceBody } from './geofences.schemas.ts';
import { parseGeometryInput } from './geometry-input.ts';
import type { FenceRules } from './workspace-fences.ts';

type Loc = Array<string | number>;

/** An item that passed every check of a create: what the batch service writes. */
export interface BatchItemInput {
  name: string;
  description: string | null;
  externalId: string | null;
  geometry: GeometryValid;
  metadata: Record<string, unknown>;
  enabled: boolean;
  rules: FenceRules;
}

export interface BatchItemRejection {
  index: number;
  error: DomainError;
}

export interface ParsedBatch {
  items: Array<{ index: number; input: BatchItemInput }>;
  rejected: BatchItemRejection[];
}

const ListEnvelope = Type.Object(
  { geofences: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_GEOFENCES }) },
  { additionalProperties: false },
);

// GeoJSON allows foreign members (RFC 7946 §6.1): other members of the collection are ignored.
const CollectionEnvelope = Type.Object(
  {
    type: StringEnum(['FeatureCollection']),
    features: Type.Array(Type.Unknown(), { minItems: 1, maxItems: MAX_BATCH_GEOFENCES }),
  },
  { additionalProperties: true },
);

// Strict, with defaults, exactly as request bodies are validated (http/validation.ts).
const ajv = createAjv(false);
const validateList = ajv.compile(ListEnvelope);
const validateCollection = ajv.compile(CollectionEnvelope);
const validateCreate = ajv.compile(CreateGeofenceBody);
const validateFeature = ajv.compile(FeatureIn);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member `type` selects the GeoJSON form; otherwise the body is the list form. */
function isGeoJson(body: Record<string, unknown>): boolean {
  return Object.hasOwn(body, 'type');
}

/**
 * What is wrong with the body as a whole (empty when it is one of the two forms with 1..1,000
 * items): any of these is a 422 for the request. The text rules are checked here on everything
 * but the items, which are checked one by one.
 */
export function envelopeIssues(body: unknown): ValidationIssue[] {
  if (!isRecord(body)) return [{ type: 'dict_type', loc: ['body'], msg: 'Input should be a valid object' }];
  const geojson = isGeoJson(body);
  const listKey = geojson ? 'features' : 'geofences';
  const outside = { ...body };
  if (Array.isArray(outside[listKey])) outside[listKey] = [];
  const issues = textIssues(outside, ['body']);
  const validate = geojson ? validateCollection : validateList;
  if (!validate(body)) issues.push(...toValidationIssues(validate.errors ?? [], 'body'));
  if (geojson && Object.hasOwn(body, 'geofences')) {
    // Not silently ignored as a foreign member: it is the other form's list.
    issues.push({
      type: 'extra_forbidden',
      loc: ['body', 'geofences'],
      msg: 'Send either {"geofences": [...]} or a FeatureCollection, not both',
    });
  }
  return issues;
}

/** The items of a body that passed `envelopeIssues`, each checked on its own. */
export function parseBatch(body: Record<string, unknown>): ParsedBatch {
  const geojson = isGeoJson(body);
  const list = (geojson ? body.features : body.geofences) as unknown[];
  const parsed: ParsedBatch = { items: [], rejected: [] };
  for (let index = 0; index < list.length; index++) {
    try {
      const input = geojson ? fromFeature(list[index], index) : fromCreateBody(list[index], index);
      parsed.items.push({ index, input });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      parsed.rejected.push({ index, error });
    }
  }
  return parsed;
}

/** Issues of a value validated on its own (`loc` from `body`), moved to where it sits in the body. */
function relocated(errors: Parameters<typeof toValidationIssues>[0], at: Loc): ValidationIssue[] {
  return toValidationIssues(errors, 'body').map((issue) => ({
    ...issue,
    loc: [...at, ...issue.loc.slice(1)],
  }));
}

function checkText(item: unknown, at: Loc): void {
  const issues = textIssues(item, at);
  if (issues.length > 0) throw new FieldValidationError(issues);
}

interface CreateFields {
  name: string;
  description?: string | null;
  external_id?: string | null;
  metadata?: Record<string, unknown>;
  enabled?: boolean;
  dwell_seconds?: number | null;
  exit_buffer_m?: number | null;
  max_accuracy_m?: number | null;
}

function inputOf(fields: CreateFields, geometry: GeometryValid): BatchItemInput {
  return {
    name: fields.name,
    description: fields.description ?? null,
    externalId: fields.external_id ?? null,
    geometry,
    metadata: fields.metadata ?? {},
    enabled: fields.enabled ?? true,
    rules: {
      dwellSeconds: fields.dwell_seconds ?? null,
      exitBufferM: fields.exit_buffer_m ?? null,
      maxAccuracyM: fields.max_accuracy_m ?? null,
    },
  };
}

/** An item of the list form: a POST /geofences body. */
function fromCreateBody(item: unknown, index: number): BatchItemInput {
  const at: Loc = ['body', 'geofences', index];
  checkText(item, at);
  if (!validateCreate(item)) throw new FieldValidationError(relocated(validateCreate.errors ?? [], at));
  const body = item as CreateFields & { geometry: unknown };
  return inputOf(body, parseGeometryInput(body.geometry, [...at, 'geometry']));
}

/** A Feature of the GeoJSON form: the geometry, and a create body's other fields in `properties`. */
function fromFeature(item: unknown, index: number): BatchItemInput {
  const at: Loc = ['body', 'features', index];
  checkText(item, at);
  if (!validateFeature(item)) throw new FieldValidationError(relocated(validateFeature.errors ?? [], at));
  const feature = item as {
    geometry: Record<string, unknown> & { type: string };
    properties: CreateFields & { radius?: number };
  };
  const { radius } = feature.properties;
  const isPoint = feature.geometry.type === 'Point';
  if (radius !== undefined && !isPoint) {
    throw new FieldValidationError([
      {
        type: 'value_error',
        loc: [...at, 'properties', 'radius'],
        msg: 'Only a Point geometry takes a radius (the circle it stands for)',
      },
    ]);
  }
  // GeoJSON has no circle: a Point with a radius is one, validated as our Circle would be.
  const geometry =
    isPoint && radius !== undefined
      ? { type: 'Circle', coordinates: feature.geometry.coordinates, radius }
      : feature.geometry;
  try {
    return inputOf(feature.properties, parseGeometryInput(geometry, [...at, 'geometry']));
  } catch (error) {
    if (error instanceof InvalidGeometryError && isPoint && radius === undefined) {
      throw new InvalidGeometryError(
        `${error.message}; a Point Feature is a circle when its properties carry a numeric radius (metres)`,
        'unsupported_type',
      );
    }
    throw error;
  }
}
