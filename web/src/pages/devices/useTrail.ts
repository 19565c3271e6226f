/**
 * The selected device's recent trail: the locations of its newest tracking session, or — a device
 * that never had a session — its latest locations. Drawn as a line on the map and extended while
 * the device moves (for a session only while it is active).
 */
import { useEffect, useRef, useState } from 'react';
import type { Schemas } from '../../api/client.ts';
import type { DeviceState, DevicesMap } from '../../map/devicesMap.ts';
import { loadRecentTrail } from './devicesApi.ts';

const TRAIL_POINTS = 200;

export interface Trail {
  session: Schemas['TrackingSession'] | null;
  points: number;
}

export function useTrail(
  deviceId: string,
  map: DevicesMap | null,
  live: DeviceState | undefined,
): { trail: Trail | null; error: boolean } {
  const [trail, setTrail] = useState<Trail | null>(null);
  const [error, setError] = useState(false);
  const lastPoint = useRef<string | null>(null);
  /** When the trail's newest point was recorded: an older position (a stale snapshot) is no step. */
  const lastTime = useRef(0);

  useEffect(() => {
    if (!map) return;
    const abort = new AbortController();
    setTrail(null);
    setError(false);
    lastPoint.current = null;
    lastTime.current = 0;
    void (async () => {
      const { session, locations } = await loadRecentTrail(deviceId, TRAIL_POINTS, abort.signal);
      if (abort.signal.aborted) return;
      if (!locations) {
        setError(true);
        return;
      }
      // Newest first from the API; a line is drawn oldest to newest (by when the fix was taken).
      const ordered = [...locations].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
      map.setTrail(ordered.map((l) => [l.point.coordinates[1] ?? 0, l.point.coordinates[0] ?? 0]));
      const newest = ordered.at(-1);
      lastPoint.current = newest ? `${newest.point.coordinates[1]},${newest.point.coordinates[0]}` : null;
      lastTime.current = newest ? Date.parse(newest.timestamp) : 0;
      setTrail({ session, points: ordered.length });
    })().catch(() => {
      if (!abort.signal.aborted) setError(true);
    });
    return () => {
      abort.abort();
      map.setTrail([]);
    };
  }, [deviceId, map]);

  // The device moved: the trail grows (a completed session's trail is history and stays as it is).
  const position = live ? `${live.lat},${live.lng}` : null;
  const at = live?.at ? Date.parse(live.at) : 0;
  useEffect(() => {
    if (!map || !trail || !position || position === lastPoint.current || at <= lastTime.current) return;
    if (trail.session && trail.session.status !== 'active') return;
    lastPoint.current = position;
    lastTime.current = at;
    const [lat = 0, lng = 0] = position.split(',').map(Number);
    map.extendTrail([lat, lng]);
    setTrail((t) => (t ? { ...t, points: t.points + 1 } : t));
  }, [map, trail, position, at]);

  return { trail, error };
}
