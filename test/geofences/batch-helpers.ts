/** Shared pieces of the batch and export tests: answer types, calls, and error relocation. */
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';

import { plan, plansFile } from '../billing/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, type ErrorBody, expectStatus } from '../helpers/identity.ts';
import type { Credentials, GeofenceOut } from './helpers.ts';

export interface Rejection extends ErrorBody {
  index: number;
}

export interface BatchOut {
  created: GeofenceOut[];
  updated: GeofenceOut[];
  rejected: Rejection[];
}

export interface FeatureOut {
  type: 'Feature';
  id: string;
  geometry: GeofenceOut['geometry'];
  properties: Record<string, unknown> & { name: string; external_id: string | null };
  bbox: number[];
}

export interface FeatureCollectionOut {
  type: 'FeatureCollection';
  features: FeatureOut[];
}

/** Plans for these tests: `free` (every new workspace) holds 10,000 geofences, `small` 3. */
export function batchPlans(): string {
  return plansFile([plan('free', { geofences: 10_000 }), plan('small', { geofences: 3 })]);
}

/** POST /geofences/batch with a body object, or JSON text as it is; expects 200. */
export async function batch(t: TestApp, credentials: Credentials, body: unknown): Promise<BatchOut> {
  const headers = typeof body === 'string' ? { 'content-type': 'application/json' } : undefined;
  const res = await call(t, '/geofences/batch', { ...credentials, body, ...(headers ? { headers } : {}) });
  return expectStatus<BatchOut>(res, 200, 'batch');
}

export async function exportAll(
  t: TestApp,
  credentials: Credentials,
  query: Record<string, string> = {},
): Promise<FeatureCollectionOut> {
  const res = await call(t, '/geofences/export', { ...credentials, query });
  return expectStatus<FeatureCollectionOut>(res, 200, 'export');
}

type Loc = Array<string | number>;

/** A single create's error body as a batch item's: each `loc` moved from `body` to `at`. */
export function relocated(body: ErrorBody, at: (loc: Loc) => Loc): ErrorBody {
  if (!Array.isArray(body.detail)) return body;
  return {
    ...body,
    detail: (body.detail as Array<{ type: string; loc: Loc; msg: string }>).map((issue) => ({
      ...issue,
      loc: at(issue.loc.slice(1)),
    })),
  };
}

/** For the list form: `["body", "geofences", index, …]`. */
export const inList =
  (index: number) =>
  (rest: Loc): Loc => ['body', 'geofences', index, ...rest];

/** For a Feature: the geometry under `geometry`, every other field under `properties`. */
export const inFeature =
  (index: number) =>
  (rest: Loc): Loc =>
    rest[0] === 'geometry'
      ? ['body', 'features', index, ...rest]
      : ['body', 'features', index, 'properties', ...rest];

/** The record as the export writes it. */
export function featureOf(g: GeofenceOut & Record<string, unknown>): FeatureOut {
  const { id, workspace_id: _w, geometry, bbox, ...properties } = g;
  return { type: 'Feature', id, geometry, properties: properties as FeatureOut['properties'], bbox };
}

/**
 * Counts the statements run through a Kysely instance (`db.withPlugin(counter)`): Kysely hands every
 * result to its plugins, raw compiled statements (db/statements.ts) included.
 */
export class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.count += 1;
    return args.result;
  }
}
