/**
 * Tracking sessions (contract §4.4). Start and stop lock the device row first, like location
 * ingestion does, so a location is either wholly before a start/stop (no session id) or wholly
 * after it, and "one active session per device" is checked without a race (the partial unique
 * index backs it up).
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { withTransaction } from '../db/transaction.ts';
import { lockDevices, setActiveSession } from '../devices/device-tracking.repository.ts';
import type { Clock } from '../shared/clock.ts';
import { BadRequestError, ConflictError, NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { elapsedSeconds } from './session-summary.ts';
import {
  completeSession,
  findSession,
  insertSession,
  listSessions as listRows,
  type SessionFilters,
  type TrackingSession,
} from './sessions.repository.ts';

export interface SessionsContext {
  db: Db;
  clock: Clock;
  capabilities: DialectCapabilities;
}

function sessionActive(): ConflictError {
  return new ConflictError('SESSION_ACTIVE', 'Device already has an active session');
}

export async function startSession(
  ctx: SessionsContext,
  workspaceId: string,
  deviceId: string,
  metadata: Record<string, unknown> | undefined,
): Promise<TrackingSession> {
  const now = ctx.clock.now();
  const session: TrackingSession = {
    id: uuidv7(),
    workspaceId,
    deviceId,
    status: 'active',
    metadata: metadata ?? {},
    startedAt: now,
    endedAt: null,
    locationCount: 0,
    distanceM: 0,
    durationS: 0,
    eventCount: 0,
    geofenceIdsVisited: [],
    lastLng: null,
    lastLat: null,
    lastRecordedAt: null,
    createdAt: now,
  };
  try {
    await withTransaction(ctx.db, async (trx) => {
      const device = (await lockDevices(trx, ctx.capabilities, workspaceId, [deviceId])).get(deviceId);
      if (!device) throw new NotFoundError('Device');
      if (device.activeSessionId !== null) throw sessionActive();
      await insertSession(trx, session);
      await setActiveSession(trx, workspaceId, deviceId, session.id);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw sessionActive();
    throw error;
  }
  return session;
}

export async function stopSession(
  ctx: SessionsContext,
  workspaceId: string,
  id: string,
): Promise<TrackingSession> {
  const known = await findSession(ctx.db, workspaceId, id);
  if (!known) throw new NotFoundError('Session');
  return withTransaction(ctx.db, async (trx) => {
    const device = (await lockDevices(trx, ctx.capabilities, workspaceId, [known.deviceId])).get(
      known.deviceId,
    );
    // Re-read under the lock: the summary may have moved and a concurrent stop may have won.
    const session = await findSession(trx, workspaceId, id);
    if (!session || !device) throw new NotFoundError('Session');
    if (session.status !== 'active') throw new BadRequestError('Session is already completed');
    const endedAt = ctx.clock.now();
    const durationS = elapsedSeconds(session.startedAt, endedAt);
    await completeSession(trx, workspaceId, id, endedAt, durationS);
    if (device.activeSessionId === id) await setActiveSession(trx, workspaceId, device.id, null);
    return { ...session, status: 'completed' as const, endedAt, durationS };
  });
}

export async function getSession(
  ctx: SessionsContext,
  workspaceId: string,
  id: string,
): Promise<TrackingSession> {
  const session = await findSession(ctx.db, workspaceId, id);
  if (!session) throw new NotFoundError('Session');
  return session;
}

export function listSessions(
  ctx: SessionsContext,
  workspaceId: string,
  filters: SessionFilters,
  offset: number,
  limit: number,
): Promise<{ sessions: TrackingSession[]; total: number }> {
  return listRows(ctx.db, workspaceId, filters, offset, limit);
}
