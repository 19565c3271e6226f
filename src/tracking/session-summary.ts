/**
 * Keeps a tracking session's summary current as its locations arrive (contract §4.4):
 * - location_count: every location stored with the session's id (out-of-order ones too);
 * - distance_m: haversine steps between consecutive in-order locations;
 * - duration_s: from the start to the newest in-order location while active; to `ended_at` once
 *   stopped;
 * - event_count: events produced by its locations;
 * - geofence_ids_visited: geofences containing any of its in-order locations, first visit first.
 */
import { haversineDistance } from '../geo/index.ts';
import type { TrackingSession } from './sessions.repository.ts';

export interface SessionStep {
  lng: number;
  lat: number;
  recordedAt: Date;
  /** False for an out-of-order location: counted, but not part of the path. */
  inOrder: boolean;
  insideIds: readonly string[];
  events: number;
}

/** Applies one location to `session` (a working copy owned by the caller's transaction). */
export function recordSessionStep(session: TrackingSession, step: SessionStep): void {
  session.locationCount += 1;
  session.eventCount += step.events;
  if (!step.inOrder) return;
  if (session.lastLng !== null && session.lastLat !== null) {
    session.distanceM += haversineDistance(session.lastLng, session.lastLat, step.lng, step.lat);
  }
  session.lastLng = step.lng;
  session.lastLat = step.lat;
  session.lastRecordedAt = step.recordedAt;
  session.durationS = Math.max(session.durationS, elapsedSeconds(session.startedAt, step.recordedAt));
  for (const id of step.insideIds) {
    if (!session.geofenceIdsVisited.includes(id)) session.geofenceIdsVisited.push(id);
  }
}

/** Whole seconds from `from` to `to`, never negative (a device clock may lag the server's). */
export function elapsedSeconds(from: Date, to: Date): number {
  return Math.max(0, Math.floor((to.getTime() - from.getTime()) / 1000));
}
