/** Location use cases: one location, a batch, and a device's history (contract §4.2). */
import { deviceExists } from '../devices/devices.repository.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import type { ValidationIssue } from '../http/validation-errors.ts';
import { FieldValidationError, NotFoundError } from '../shared/errors.ts';
import { findSession } from '../tracking/sessions.repository.ts';
import { ownDeviceRefs, resolveDeviceRefs } from './device-refs.ts';
import { type IngestContext, type IngestItem, ingestLocations } from './ingest.service.ts';
import type { IngestCoalescer } from './ingest-coalescer.ts';
import { type LocationFields, parseLocation } from './location-input.ts';
import { type LocationFilters, listLocations, type StoredLocation } from './locations.repository.ts';

/** One location; concurrent ones of a workspace are committed together by the coalescer. */
export async function recordLocation(
  ctx: IngestContext,
  coalescer: IngestCoalescer,
  workspaceId: string,
  deviceId: string,
  fields: LocationFields,
): Promise<{ location: StoredLocation; events: GeofenceEvent[] }> {
  const parsed = parseLocation(fields, ctx.clock.now(), ['body']);
  if (!parsed.ok) throw new FieldValidationError(parsed.issues);
  const { location, events } = await coalescer.submit(workspaceId, deviceId, parsed.location);
  if (!location) throw new NotFoundError('Device');
  return { location, events };
}

/** One batch item after its schema check: the device reference and the location fields. */
export interface BatchItem extends LocationFields {
  device_id?: string | undefined;
  device_external_id?: string | undefined;
}

export interface BatchRejection {
  index: number;
  detail: string | ValidationIssue[];
}

export interface BatchResult {
  accepted: number;
  rejected: BatchRejection[];
  events: GeofenceEvent[];
}

/**
 * A batch: every item is checked on its own, so one bad item is reported (with its index) without
 * failing the others. `items` holds the schema-valid items by their index in the request;
 * `rejected` the ones that already failed their schema.
 */
export async function recordBatch(
  ctx: IngestContext,
  workspaceId: string,
  items: ReadonlyArray<{ index: number; item: BatchItem }>,
  rejected: BatchRejection[],
  /** A device token's batch: the one device it may write (contract §2.3b). */
  onlyDevice?: string,
): Promise<BatchResult> {
  const receivedAt = ctx.clock.now();
  const receivedIso = receivedAt.toISOString();
  const valid: Array<{ index: number; item: BatchItem; location: IngestItem['location'] }> = [];
  for (const { index, item } of items) {
    const prefix = ['body', 'locations', index];
    const hasId = item.device_id !== undefined;
    const hasExternal = item.device_external_id !== undefined;
    if (hasId === hasExternal) {
      rejected.push({
        index,
        detail: [
          {
            type: hasId ? 'value_error' : 'missing',
            loc: hasId ? prefix : [...prefix, 'device_id'],
            msg: hasId
              ? 'Give either device_id or device_external_id, not both'
              : 'Field required (device_id or device_external_id)',
          },
        ],
      });
      continue;
    }
    const parsed = parseLocation(item, receivedAt, prefix, receivedIso);
    if (!parsed.ok) rejected.push({ index, detail: parsed.issues });
    else valid.push({ index, item, location: parsed.location });
  }

  const refs = valid.map((v) => v.item);
  const deviceIds =
    onlyDevice === undefined
      ? await resolveDeviceRefs(ctx, workspaceId, refs)
      : await ownDeviceRefs(ctx, workspaceId, onlyDevice, refs);
  const result = await ingestLocations(
    ctx,
    workspaceId,
    valid.map((v, i) => ({ ref: v.index, deviceId: deviceIds[i] ?? '', location: v.location })),
  );
  for (const ref of result.missingDevice) rejected.push({ index: ref, detail: 'Device not found' });
  rejected.sort((a, b) => a.index - b.index);
  // Across devices, events are reported in the order they happened.
  const events = [...result.events].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
  return { accepted: result.stored.size, rejected, events };
}

export async function locationHistory(
  ctx: IngestContext,
  workspaceId: string,
  deviceId: string,
  filters: Omit<LocationFilters, 'deviceId'>,
  offset: number,
  limit: number,
): Promise<{ locations: StoredLocation[]; total: number }> {
  if (!(await deviceExists(ctx.db, workspaceId, deviceId))) throw new NotFoundError('Device');
  return listLocations(ctx.db, workspaceId, { ...filters, deviceId }, offset, limit);
}

/** A tracking session's locations, newest first; the session must be the workspace's. */
export async function sessionLocations(
  ctx: Pick<IngestContext, 'db'>,
  workspaceId: string,
  sessionId: string,
  offset: number,
  limit: number,
): Promise<{ locations: StoredLocation[]; total: number }> {
  if (!(await findSession(ctx.db, workspaceId, sessionId))) throw new NotFoundError('Session');
  return listLocations(ctx.db, workspaceId, { sessionId }, offset, limit);
}
