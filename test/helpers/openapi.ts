/**
 * Reading the served OpenAPI document in tests: every operation, and ajv validation of a value
 * against a schema of the dereferenced document (OpenAPI 3.0 schemas: ajv knows `nullable`; the
 * `example` annotation is ignored).
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TestApp } from './app.ts';

const addFormats = addFormatsModule.default;

/** Schemas the document must name as components, so that a generated client has their types. */
export const NAMED_SCHEMAS = [
  'Geofence',
  'GeofenceDevice',
  'GeofenceGeometry',
  'GeofenceBatchRequest',
  'GeofenceBatchResult',
  'GeofenceFeatureCollection',
  'Device',
  'Event',
  'Location',
  'Point',
  'TrackingSession',
  'Webhook',
  'Delivery',
  'WebhookAttempt',
  'DeliveryDetail',
  'DeliveryRetryAccepted',
  'DeadLetterEntry',
  'DeadLetterBulkRetryRequest',
  'DeadLetterBulkRetryResult',
  'ApiKey',
  'Notification',
  'Plan',
  'Subscription',
  'Usage',
  'Invoice',
  'Error',
  'ValidationIssue',
  'Pagination',
  'GeofenceList',
  'Workspace',
  'Member',
  'Invitation',
  'InvitationList',
  'User',
  'TokenPair',
  'StreamToken',
  'StreamReadyMessage',
  'StreamLocationMessage',
  'DevicePosition',
  'DevicePositions',
];

export interface MediaObject {
  schema?: object;
  example?: unknown;
}

export interface ResponseObject {
  description: string;
  content?: Record<string, MediaObject>;
}

export interface Operation {
  requestBody?: { content: Record<string, MediaObject> };
  responses: Record<string, ResponseObject>;
  'x-auth-via'?: 'any' | 'user' | 'api_key';
}

export interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
}

export interface DocumentedOperation {
  method: string;
  path: string;
  label: string;
  /** The operation in the dereferenced document: every `$ref` replaced by its target. */
  operation: Operation;
}

export async function servedDocument(t: TestApp): Promise<Document> {
  const res = await t.app.inject({ url: '/openapi/openapi.json' });
  if (res.statusCode !== 200) throw new Error(`openapi.json answered ${res.statusCode}`);
  return res.json() as Document;
}

/** Every operation of the document, dereferenced. */
export async function documentedOperations(document: Document): Promise<DocumentedOperation[]> {
  const dereferenced = (await SwaggerParser.dereference(
    structuredClone(document) as never,
  )) as unknown as Document;
  const out: DocumentedOperation[] = [];
  for (const [path, operations] of Object.entries(dereferenced.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      out.push({ method: method.toUpperCase(), path, label: `${method.toUpperCase()} ${path}`, operation });
    }
  }
  return out;
}

/** The lowest 2xx status an operation documents. */
export function successStatus(operation: Operation): string {
  const status = Object.keys(operation.responses)
    .filter((s) => s.startsWith('2'))
    .sort()[0];
  if (status === undefined) throw new Error('operation documents no 2xx response');
  return status;
}

export class SchemaValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: false });
  private readonly compiled = new WeakMap<object, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
  }

  /** The validation errors of `value` against `schema`, as text; empty when it is valid. */
  errors(schema: object, value: unknown): string {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    return validate(value) ? '' : this.ajv.errorsText(validate.errors);
  }
}
