/**
 * The pure part of ingestion (no I/O), run inside the transaction between its reads and writes:
 * 1. `planDevices`: each device's locations in timestamp order, evaluated against its locked state;
 * 2. `buildRows`: the rows to write — locations, events (for transitions whose geofence is still an
 *    enabled row), session summaries and device states.
 */
import type { DeviceTrackingState, LockedDevice } from '../devices/device-tracking.repository.ts';
import type { LastLocation } from '../devices/devices.repository.ts';
import { seedEventId } from '../events/event-id.ts';
import type { EventGeofence, GeofenceEvent } from '../events/events.repository.ts';
import { pointOf } from '../geo/point.ts';
import { uuidv7, uuidv7After } from '../shared/ids.ts';
import { recordSessionStep } from '../tracking/session-summary.ts';
import type { TrackingSession } from '../tracking/sessions.repository.ts';
import { type ContainmentIndex, type DeviceCursor, evaluateLocation, type Transition } from './evaluate.ts';
import type { ParsedLocation } from './location-input.ts';
import type { StoredLocation } from './locations.repository.ts';
import { DevicePresence, type DwellTimer, type FiredDwell, type KnownPoint } from './presence-plan.ts';

export interface IngestItem {
  /** The caller's handle for this item (e.g. its index in a batch). */
  ref: number;
  deviceId: string;
  location: ParsedLocation;
}

interface PlannedLocation {
  ref: number;
  stored: StoredLocation;
  /** Dwell timers that came due before this location (contract §4.5): their events come first. */
  dwells: FiredDwell[];
  transitions: Transition[];
  /** Geofences containing it (empty when out of order). */
  insideIds: readonly string[];
}

export interface DevicePlan {
  device: LockedDevice;
  steps: PlannedLocation[];
  /** The device's evaluation state after its last in-order location. */
  cursor: DeviceCursor;
  /** Its presence rows and dwell timers after this ingestion. */
  presence: DevicePresence;
}

/** Stored dwell timers and last known points of the devices, read under their locks. */
export interface DwellState {
  timers: ReadonlyMap<string, DwellTimer[]>;
  lastPoints: ReadonlyMap<string, KnownPoint>;
}

export interface Plan {
  devices: DevicePlan[];
  /** Refs of items whose device was not found (in this workspace). */
  missingDevice: number[];
  /** Every geofence some transition names: their rows are read before building events. */
  transitionIds: Set<string>;
}

export function planDevices(
  workspaceId: string,
  items: readonly IngestItem[],
  devices: ReadonlyMap<string, LockedDevice>,
  index: ContainmentIndex,
  receivedAt: Date,
  dwell?: DwellState,
): Plan {
  const plan: Plan = { devices: [], missingDevice: [], transitionIds: new Set() };
  for (const [deviceId, group] of groupByDevice(items)) {
    const device = devices.get(deviceId);
    if (!device) {
      for (const item of group) plan.missingDevice.push(item.ref);
      continue;
    }
    let cursor: DeviceCursor = {
      insideIds: device.insideGeofenceIds,
      lastEvaluatedAt: device.lastEvaluatedAt,
    };
    const presence = new DevicePresence(
      dwell?.timers.get(deviceId) ?? [],
      dwell?.lastPoints.get(deviceId) ?? null,
    );
    // The id the device's next in-order location must exceed (its newest row's, then each new one's).
    let floor = device.newestId;
    const steps: PlannedLocation[] = [];
    for (const item of group) {
      const { lng, lat, recordedAt } = item.location;
      const evaluation = evaluateLocation(cursor, index, lng, lat, recordedAt, item.location.accuracy);
      const outOfOrder = evaluation.outOfOrder;
      const id = outOfOrder || floor === null ? uuidv7() : uuidv7After(floor);
      if (!outOfOrder) floor = id;
      const stored = storedLocation(id, workspaceId, device, item.location, receivedAt, outOfOrder);
      if (evaluation.outOfOrder) {
        steps.push({ ref: item.ref, stored, dwells: [], transitions: [], insideIds: [] });
        continue;
      }
      const dwells = presence.fireDue(recordedAt);
      for (const d of dwells) plan.transitionIds.add(d.geofenceId);
      trackPresence(
        presence,
        index,
        cursor.insideIds,
        evaluation.cursor.insideIds,
        evaluation.transitions,
        recordedAt,
      );
      presence.moved({ lng, lat, locationId: stored.id });
      cursor = evaluation.cursor;
      for (const t of evaluation.transitions) plan.transitionIds.add(t.geofenceId);
      steps.push({
        ref: item.ref,
        stored,
        dwells,
        transitions: evaluation.transitions,
        insideIds: cursor.insideIds,
      });
    }
    plan.devices.push({ device, steps, cursor, presence });
  }
  return plan;
}

/** `geofence_presence` writes: pairs rewritten (deleted, then inserted when inside), dwell marks. */
export interface PresenceRows {
  deletes: Array<[deviceId: string, geofenceId: string]>;
  inserts: PresenceRow[];
  dwelled: Array<{ deviceId: string; geofenceId: string; at: Date }>;
}

export interface PresenceRow {
  deviceId: string;
  geofenceId: string;
  enteredAt: Date;
  dwellDueAt: Date | null;
  dwelledAt: Date | null;
}

export interface Rows {
  locations: StoredLocation[];
  /** In processing order: per device (id order), in timestamp order. */
  events: GeofenceEvent[];
  eventsByRef: Map<number, GeofenceEvent[]>;
  storedByRef: Map<number, StoredLocation>;
  /** New states of the devices with at least one in-order location. */
  states: DeviceTrackingState[];
  /** Those of them whose inside-set changed: the only device rows an ingestion writes. */
  insideSets: DeviceTrackingState[];
  /** The active sessions involved, summaries updated. */
  sessions: TrackingSession[];
  presence: PresenceRows;
}

export function buildRows(
  workspaceId: string,
  plan: Plan,
  geofences: ReadonlyMap<string, EventGeofence>,
  activeSessions: ReadonlyMap<string, TrackingSession>,
  now: Date,
): Rows {
  const rows: Rows = {
    locations: [],
    events: [],
    eventsByRef: new Map(),
    storedByRef: new Map(),
    states: [],
    insideSets: [],
    sessions: [],
    presence: { deletes: [], inserts: [], dwelled: [] },
  };
  for (const { device, steps, cursor, presence } of plan.devices) {
    addPresenceRows(rows.presence, workspaceId, device.id, presence, geofences);
    const session = device.activeSessionId ? activeSessions.get(device.activeSessionId) : undefined;
    // Set by the newest in-order location; a device with none keeps its row as it was.
    let lastLocation: LastLocation | null = null;
    for (const step of steps) {
      const { stored } = step;
      rows.locations.push(stored);
      rows.storedByRef.set(step.ref, stored);
      const dwellEvents = step.dwells.flatMap((d) => {
        const geofence = geofences.get(d.geofenceId);
        return geofence ? [dwellEventOf(workspaceId, device, d, geofence, now)] : [];
      });
      const events = step.transitions.flatMap((t) => {
        const geofence = geofences.get(t.geofenceId);
        return geofence ? [eventOf(workspaceId, device, stored, t, geofence, now)] : [];
      });
      if (dwellEvents.length > 0) events.unshift(...dwellEvents);
      rows.eventsByRef.set(step.ref, events);
      rows.events.push(...events);
      if (!stored.outOfOrder) {
        lastLocation = {
          point: pointOf(stored.lng, stored.lat),
          timestamp: stored.recordedAtIso,
          accuracy: stored.accuracy,
          location_id: stored.id,
        };
      }
      if (session) {
        recordSessionStep(session, {
          lng: stored.lng,
          lat: stored.lat,
          recordedAt: stored.recordedAt,
          inOrder: !stored.outOfOrder,
          insideIds: step.insideIds,
          events: events.length,
        });
      }
    }
    if (session) rows.sessions.push(session);
    // Out-of-order locations leave the device as it was, last_seen_at included.
    if (lastLocation !== null) {
      const state: DeviceTrackingState = {
        id: device.id,
        lastLocation,
        lastSeenAt: now,
        // In order means no older than the cursor's time: the newest such location's is the cursor's.
        lastEvaluatedAt: lastLocation.timestamp,
        insideGeofenceIds: cursor.insideIds,
      };
      rows.states.push(state);
      if (!sameIds(cursor.insideIds, device.insideGeofenceIds)) rows.insideSets.push(state);
    }
  }
  return rows;
}

/** Whether two inside-sets are the same list (the stored order is the one the API shows). */
function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Items per device, devices in id order, each group in timestamp order (ties keep request order). */
function groupByDevice(items: readonly IngestItem[]): Map<string, IngestItem[]> {
  const groups = new Map<string, IngestItem[]>();
  for (const item of items) {
    const group = groups.get(item.deviceId);
    if (group) group.push(item);
    else groups.set(item.deviceId, [item]);
  }
  for (const group of groups.values()) {
    if (group.length > 1) {
      group.sort(
        (a, b) => a.location.recordedAt.getTime() - b.location.recordedAt.getTime() || a.ref - b.ref,
      );
    }
  }
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function storedLocation(
  id: string,
  workspaceId: string,
  device: LockedDevice,
  l: ParsedLocation,
  receivedAt: Date,
  outOfOrder: boolean,
): StoredLocation {
  return {
    // Generated after the device lock, above the device's newest id: location ids sort in the order
    // locations were applied, and the newest row of a device is its last applied one.
    id,
    workspaceId,
    deviceId: device.id,
    // Locations received while a session is active carry its id, out-of-order ones too.
    sessionId: device.activeSessionId,
    lng: l.lng,
    lat: l.lat,
    accuracy: l.accuracy,
    speed: l.speed,
    heading: l.heading,
    altitude: l.altitude,
    metadata: l.metadata,
    recordedAt: l.recordedAt,
    recordedAtIso: l.recordedAtIso,
    receivedAt,
    outOfOrder,
  };
}

/**
 * The presence effects of one evaluated location: an enter starts a visit (and its dwell timer when
 * the geofence has one); an exit ends it, and so does a geofence that left the set silently
 * (deleted or disabled: no event, but the visit is over).
 */
function trackPresence(
  presence: DevicePresence,
  index: ContainmentIndex,
  before: readonly string[],
  after: readonly string[],
  transitions: readonly Transition[],
  at: Date,
): void {
  for (const t of transitions) {
    if (t.type === 'enter')
      presence.enter(t.geofenceId, at, index.rulesOf?.(t.geofenceId).dwellSeconds ?? null);
    else if (t.type === 'exit') presence.leave(t.geofenceId);
  }
  if (before.length === 0) return;
  for (const id of before) {
    if (!after.includes(id) && !transitions.some((t) => t.geofenceId === id)) presence.leave(id);
  }
}

function addPresenceRows(
  out: PresenceRows,
  workspaceId: string,
  deviceId: string,
  presence: DevicePresence,
  geofences: ReadonlyMap<string, EventGeofence>,
): void {
  void workspaceId;
  for (const [geofenceId, final] of presence.finals) {
    out.deletes.push([deviceId, geofenceId]);
    // An enter whose geofence row is gone produced no event: no visit either.
    if (final.kind === 'inside' && geofences.has(geofenceId)) {
      out.inserts.push({ deviceId, geofenceId, ...final });
    }
  }
  for (const d of presence.dwelled) out.dwelled.push({ deviceId, geofenceId: d.geofenceId, at: d.at });
}

/** A dwell event (contract §4.5): at the dwell moment, at the device's last known point and location. */
export function dwellEventOf(
  workspaceId: string,
  device: LockedDevice,
  dwell: FiredDwell,
  geofence: EventGeofence,
  now: Date,
): GeofenceEvent {
  return {
    id: uuidv7(),
    workspaceId,
    eventId: seedEventId(dwell.geofenceId, 'dwell', dwell.at),
    eventType: 'dwell',
    deviceId: device.id,
    userId: device.userId ?? device.id,
    geofenceId: dwell.geofenceId,
    geofenceName: geofence.name,
    lng: dwell.point.lng,
    lat: dwell.point.lat,
    locationId: dwell.point.locationId,
    sessionId: device.activeSessionId,
    occurredAt: dwell.at,
    createdAt: now,
    metadata: { geofence_metadata: geofence.metadata, event_metadata: {} },
  };
}

function eventOf(
  workspaceId: string,
  device: LockedDevice,
  location: StoredLocation,
  transition: Transition,
  geofence: EventGeofence,
  now: Date,
): GeofenceEvent {
  return {
    id: uuidv7(),
    workspaceId,
    eventId: seedEventId(transition.geofenceId, transition.type, location.recordedAt),
    eventType: transition.type,
    deviceId: device.id,
    // Contract §4.1: the device's user_id, or the device id when it has none.
    userId: device.userId ?? device.id,
    geofenceId: transition.geofenceId,
    geofenceName: geofence.name,
    lng: location.lng,
    lat: location.lat,
    locationId: location.id,
    sessionId: location.sessionId,
    occurredAt: location.recordedAt,
    createdAt: now,
    metadata: { geofence_metadata: geofence.metadata, event_metadata: location.metadata },
  };
}
