/** Shared pieces of the billing tests: a PLANS_FILE with small numbers, and ingestion shortcuts. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Plan } from '../../src/billing/plans.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus } from '../helpers/identity.ts';

/** Writes the plans to a temporary file and returns its path. */
export function plansFile(plans: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-plans-'));
  const file = path.join(dir, 'plans.json');
  fs.writeFileSync(file, JSON.stringify(plans));
  return file;
}

export function plan(id: string, limits: Partial<Plan['limits']>, extra: Partial<Plan> = {}): Plan {
  return {
    id,
    name: id[0]?.toUpperCase() + id.slice(1),
    price_cents_per_month: 0,
    limits: {
      api_requests_per_hour: 10_000,
      events_per_month: 1_000_000,
      geofences: 1_000,
      webhooks: 100,
      devices: 1_000,
      ...limits,
    },
    overage_cents_per_1000_events: null,
    self_service: true,
    ...extra,
  };
}

/** A 1 km circle at (10, 50); points alternately inside and outside it produce one event each. */
export const FENCE = { type: 'Circle', coordinates: [10, 50], radius: 1000 };
export const INSIDE: [number, number] = [10, 50];
export const OUTSIDE: [number, number] = [10.1, 50];
export const FAR: [number, number] = [11, 51];

export async function setUpTracking(t: TestApp, token: string): Promise<{ deviceId: string }> {
  expectStatus(await call(t, '/geofences', { token, body: { name: 'depot', geometry: FENCE } }), 201);
  const device = expectStatus<{ id: string }>(
    await call(t, '/devices', { token, body: { name: 'truck' } }),
    201,
  );
  return { deviceId: device.id };
}

export function locate(t: TestApp, token: string, deviceId: string, at: [number, number]) {
  return call(t, `/devices/${deviceId}/locations`, { token, body: { coordinates: at } });
}
