/**
 * Stores what a tracker sent (contract §4.6) through the one ingestion path of the JSON routes: the
 * adapters only read the client's format; here every fix gets the location input's own checks
 * (`parseLocation`: ranges, the 1970 … now + 10 min window), its device, and then the coalescer
 * (one fix: as `POST /devices/{id}/locations`) or `ingestLocations` (a batch: as
 * `POST /locations/batch`). Events, dwell timers, webhooks, workflows and the live stream follow
 * from there exactly as for the JSON routes.
 *
 * A request is stored whole or not at all as far as its content goes: any problem in any fix is
 * answered 400 naming the client's field, before anything is written.
 */
import type { GeofenceEvent } from '../events/events.repository.ts';
import { MAX_FREE_OBJECT_DEPTH, tooDeepPath } from '../http/free-object.ts';
import type { ValidationIssue } from '../http/validation-errors.ts';
import { resolveDeviceRefs } from '../locations/device-refs.ts';
import type { IngestContext } from '../locations/ingest.service.ts';
import { ingestLocations } from '../locations/ingest.service.ts';
import type { IngestCoalescer } from '../locations/ingest-coalescer.ts';
import { type ParsedLocation, parseLocation } from '../locations/location-input.ts';
import { NotFoundError, ValidationError } from '../shared/errors.ts';
import type { TrackerFix, TrackerPayload } from './tracker-fix.ts';

export interface TrackerContext extends IngestContext {
  coalescer: IngestCoalescer;
}

/** Whose fixes these are: a device token's device, or (an API key) the devices the payload names. */
export interface TrackerCaller {
  workspaceId: string;
  deviceId: string | undefined;
  /**
   * The credential as the request presented it. A user who typed it into another field of the app
   * (a device name, a user name) must not find it stored with the location: such text is
   * replaced, and a device cannot be named by it.
   */
  secret: string | undefined;
}

/** Contract §4.1 / §4.2: an external id is 1..255 characters, as in `/locations/batch`. */
const MAX_EXTERNAL_ID = 255;

export interface TrackerResult {
  stored: number;
  events: GeofenceEvent[];
}

export async function recordTrackerPayload(
  ctx: TrackerContext,
  caller: TrackerCaller,
  payload: TrackerPayload,
): Promise<TrackerResult> {
  const now = ctx.clock.now();
  const issues: ValidationIssue[] = [...payload.issues];
  const parsed: ParsedLocation[] = [];
  for (const fix of payload.fixes) {
    const metadata = caller.secret === undefined ? fix.metadata : withoutSecret(fix.metadata, caller.secret);
    const result = parseLocation({ ...locationFields(fix), metadata }, now, []);
    if (result.ok) parsed.push(result.location);
    else issues.push(...result.issues.map((issue) => ({ ...issue, loc: clientLoc(fix, issue.loc) })));
    const tooDeep = tooDeepPath(metadata, MAX_FREE_OBJECT_DEPTH);
    if (tooDeep !== undefined) {
      issues.push({
        type: 'value_error',
        loc: [...fix.locs.metadata, ...tooDeep],
        msg: `Objects nest at most ${MAX_FREE_OBJECT_DEPTH} levels`,
      });
    }
    if (caller.deviceId === undefined) issues.push(...deviceIdIssues(fix, caller.secret));
  }
  if (issues.length > 0) throw trackerPayloadError(distinct(issues));
  if (parsed.length === 0) return { stored: 0, events: [] };

  const deviceIds =
    caller.deviceId !== undefined
      ? parsed.map(() => caller.deviceId as string)
      : await resolveDeviceRefs(
          ctx,
          caller.workspaceId,
          payload.fixes.map((fix) => ({ device_external_id: fix.deviceExternalId })),
        );

  const [only] = parsed;
  if (parsed.length === 1 && only !== undefined) {
    const { location, events } = await ctx.coalescer.submit(caller.workspaceId, deviceIds[0] ?? '', only);
    if (!location) throw new NotFoundError('Device');
    return { stored: 1, events };
  }
  const result = await ingestLocations(
    ctx,
    caller.workspaceId,
    parsed.map((location, ref) => ({ ref, deviceId: deviceIds[ref] ?? '', location })),
    // Only a device deleted while the request ran can be missing: then nothing of the batch is
    // stored, since the app sends the whole batch again. A batch sent again (the app timed out
    // waiting for the answer) is stored once: fixes already stored are left out.
    { allOrNone: true, dropStored: true },
  );
  return { stored: result.stored.size, events: result.events };
}

/** With an API key, each fix must name its device by a usable external id. */
function deviceIdIssues(fix: TrackerFix, secret: string | undefined): ValidationIssue[] {
  const id = fix.deviceExternalId;
  if (id === undefined) {
    return [
      {
        type: 'missing',
        loc: fix.deviceLoc,
        msg: 'Field required: the device identifier (or authenticate with a device token)',
      },
    ];
  }
  if (id.length > MAX_EXTERNAL_ID) {
    return [
      {
        type: 'string_too_long',
        loc: fix.deviceLoc,
        msg: `String should have at most ${MAX_EXTERNAL_ID} characters`,
      },
    ];
  }
  if (secret !== undefined && id.includes(secret)) {
    return [
      { type: 'value_error', loc: fix.deviceLoc, msg: 'The device identifier must not hold the credential' },
    ];
  }
  return [];
}

/** The metadata with every text holding the credential replaced (keys are kept as sent). */
function withoutSecret(value: Record<string, unknown>, secret: string): Record<string, unknown> {
  if (secret === '' || !JSON.stringify(value).includes(secret)) return value;
  const scrub = (item: unknown): unknown => {
    if (typeof item === 'string') return item.includes(secret) ? '[redacted]' : item;
    if (Array.isArray(item)) return item.map(scrub);
    if (item !== null && typeof item === 'object') {
      return Object.fromEntries(Object.entries(item).map(([key, child]) => [key, scrub(child)]));
    }
    return item;
  };
  return scrub(value) as Record<string, unknown>;
}

function locationFields(fix: TrackerFix) {
  return {
    coordinates: [fix.lng, fix.lat],
    timestamp: fix.timestamp,
    accuracy: fix.accuracy,
    speed: fix.speed,
    heading: fix.heading,
    altitude: fix.altitude,
    metadata: fix.metadata,
  };
}

/** parseLocation names our fields (`coordinates`, `timestamp`); the client knows its own. */
function clientLoc(fix: TrackerFix, loc: ReadonlyArray<string | number>): Array<string | number> {
  const [field, member] = loc;
  if (field === 'coordinates') return member === 0 ? fix.locs.lng : fix.locs.lat;
  if (field === 'timestamp') return fix.locs.timestamp;
  return fix.locs.lat;
}

/** 400 VALIDATION_ERROR (contract §4.6): `detail` names each field, `details.errors` lists them. */
export function trackerPayloadError(issues: readonly ValidationIssue[]): ValidationError {
  const shown = issues.slice(0, 5).map((i) => `${i.loc.join('.')}: ${i.msg}`);
  const more = issues.length > shown.length ? ` (and ${issues.length - shown.length} more)` : '';
  return new ValidationError(`Invalid tracker payload: ${shown.join('; ')}${more}`, { errors: [...issues] });
}

/** The readers check the coordinate ranges, and so does parseLocation: each problem once. */
function distinct(issues: readonly ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = JSON.stringify([issue.type, issue.loc]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
