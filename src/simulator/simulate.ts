/**
 * Replays a track through the public API, as a device would: finds or creates the device by
 * external id, then posts each point to `POST /devices/{id}/locations`, waiting between points
 * (the file's own timestamps, or 1 s apart, divided by `speed`). Prints one JSON line per event.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { TrackPoint } from './track-file.ts';

export interface SimulateOptions {
  baseUrl: string;
  apiKey: string;
  device: string;
  points: TrackPoint[];
  /** Replay speed factor; Infinity sends as fast as the API answers. */
  speed: number;
  now?: () => number;
  wait?: (ms: number) => Promise<unknown>;
  log?: (line: string) => void;
}

export interface SimulateResult {
  deviceId: string;
  sent: number;
  events: Array<{ event_type: string; geofence_id: string; event_id: string }>;
}

async function call(
  options: SimulateOptions,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(`${options.baseUrl.replace(/\/+$/, '')}/api/v1${path}`, {
    method,
    headers: {
      'x-api-key': options.apiKey,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function deviceIdFor(options: SimulateOptions): Promise<string> {
  const found = (await call(
    options,
    'GET',
    `/devices?external_id=${encodeURIComponent(options.device)}&limit=1`,
  )) as {
    results: Array<{ id: string }>;
  };
  const existing = found.results[0];
  if (existing) return existing.id;
  const created = (await call(options, 'POST', '/devices', {
    name: options.device,
    external_id: options.device,
  })) as { id: string };
  return created.id;
}

export async function simulate(options: SimulateOptions): Promise<SimulateResult> {
  const wait = options.wait ?? sleep;
  const now = options.now ?? Date.now;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const deviceId = await deviceIdFor(options);
  const start = now();
  const events: SimulateResult['events'] = [];
  let previousTime: number | undefined;
  for (const [index, point] of options.points.entries()) {
    const fileTime = point.timestamp ? Date.parse(point.timestamp) : undefined;
    const gapMs =
      fileTime !== undefined && previousTime !== undefined
        ? Math.max(0, fileTime - previousTime)
        : index === 0
          ? 0
          : 1000;
    previousTime = fileTime ?? (previousTime ?? start) + gapMs;
    if (gapMs > 0 && Number.isFinite(options.speed)) await wait(gapMs / options.speed);
    const timestamp = point.timestamp ?? new Date(start + (previousTime - start)).toISOString();
    const answer = (await call(options, 'POST', `/devices/${deviceId}/locations`, {
      coordinates: [point.lng, point.lat],
      timestamp,
    })) as { events: Array<{ event_type: string; geofence_id: string; event_id: string }> };
    for (const event of answer.events) {
      events.push(event);
      log(
        JSON.stringify({
          point: index,
          event_type: event.event_type,
          geofence_id: event.geofence_id,
          event_id: event.event_id,
        }),
      );
    }
  }
  return { deviceId, sent: options.points.length, events };
}
