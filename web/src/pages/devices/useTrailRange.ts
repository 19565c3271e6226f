/**
 * A device's trail between two times, from its location history (`GET /devices/{id}/locations`
 * with `from`/`to`, newest first, paged): drawn as a line on the map, oldest to newest. Without a
 * range, its newest locations. At most `MAX_POINTS` are fetched (the newest of the range); the
 * answer says when there were more. A range open towards now grows while the device moves.
 */
import { useEffect, useRef, useState } from 'react';
import type { DeviceState, DevicesMap } from '../../map/devicesMap.ts';
import { listDeviceLocations } from './devicesApi.ts';

const PAGE = 200;
const MAX_POINTS = 1000;

export interface TrailRange {
  /** Locations drawn. */
  points: number;
  /** The range held more locations than were fetched (only the newest are drawn). */
  more: boolean;
  /** When the oldest and newest drawn locations were recorded. */
  first: string | null;
  last: string | null;
}

export function useTrailRange(
  deviceId: string,
  map: DevicesMap | null,
  from: string | null,
  to: string | null,
  live: DeviceState | undefined,
): { trail: TrailRange | null; error: boolean } {
  const [trail, setTrail] = useState<TrailRange | null>(null);
  const [error, setError] = useState(false);
  const newest = useRef(0);

  useEffect(() => {
    if (!map) return;
    const abort = new AbortController();
    setTrail(null);
    setError(false);
    newest.current = 0;
    void (async () => {
      const found: Array<{ at: string; lat: number; lng: number }> = [];
      let more = false;
      for (let offset = 0; offset < MAX_POINTS; offset += PAGE) {
        const { data } = await listDeviceLocations(
          deviceId,
          { from: from ?? undefined, to: to ?? undefined, offset, limit: PAGE },
          abort.signal,
        );
        if (!data) throw new Error('trail not loaded');
        for (const l of data.results)
          found.push({ at: l.timestamp, lat: l.point.coordinates[1] ?? 0, lng: l.point.coordinates[0] ?? 0 });
        more = data.pagination.has_more;
        // Without a range, the newest page is the trail.
        if (!more || (!from && !to)) break;
      }
      if (abort.signal.aborted) return;
      found.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
      map.setTrail(found.map((p) => [p.lat, p.lng]));
      // A chosen range is what the reader wants to see (unless the map follows the device).
      if ((from || to) && !map.following) map.fitTrail();
      newest.current = found.length > 0 ? Date.parse(found.at(-1)?.at ?? '') : 0;
      setTrail({ points: found.length, more, first: found[0]?.at ?? null, last: found.at(-1)?.at ?? null });
    })().catch(() => {
      if (!abort.signal.aborted) setError(true);
    });
    return () => {
      abort.abort();
      map.setTrail([]);
    };
  }, [deviceId, map, from, to]);

  // A newer position inside an open range extends the line.
  const at = live?.at ? Date.parse(live.at) : 0;
  const lat = live?.lat;
  const lng = live?.lng;
  useEffect(() => {
    if (!map || !trail || lat === undefined || lng === undefined || at <= newest.current) return;
    if (to && at > Date.parse(to)) return;
    if (from && at < Date.parse(from)) return;
    newest.current = at;
    map.extendTrail([lat, lng]);
    const when = new Date(at).toISOString();
    setTrail((t) => (t ? { ...t, points: t.points + 1, first: t.first ?? when, last: when } : t));
  }, [map, trail, lat, lng, at, from, to]);

  return { trail, error };
}
