/**
 * Where an event happened: the device's point over its geofence, drawn by the shared map modules.
 * The geofence is the one stored now (it may have been edited since, or deleted: then the point is
 * drawn alone, with a word saying so). Loaded only by the event page, so the feed carries no Leaflet.
 */
import L from 'leaflet';
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { createBaseMap } from '../../map/baseMap.ts';
import type { GeofenceGeometry } from '../../map/geofenceGeometry.ts';
import { GeofenceLayer, type GeofenceShape } from '../../map/geofenceLayer.ts';
import { Notice } from '../../ui/forms.tsx';
import { getGeofence } from './eventApi.ts';

/** Zoom when there is no geofence to frame: a street or two around the point. */
const POINT_ZOOM = 16;
const POINT_STYLE: L.CircleMarkerOptions = {
  radius: 7,
  color: '#ffffff',
  weight: 2,
  fillColor: '#d9480f',
  fillOpacity: 1,
};

/** The geofence as a shape, or null when it no longer exists. */
async function loadShape(id: string): Promise<GeofenceShape | null> {
  const { data, error, response } = await getGeofence(id);
  if (data)
    return {
      id: data.id,
      name: data.name,
      enabled: data.enabled,
      geometry: data.geometry as GeofenceGeometry,
      bbox: data.bbox,
    };
  if (response.status === 404) return null;
  throw new Error(errorMessage(error));
}

export default function EventMap({
  point,
  geofenceId,
  geofenceName,
}: {
  /** `[lng, lat]`, as GeoJSON. */
  point: readonly number[];
  geofenceId: string;
  geofenceName: string;
}) {
  const container = useRef<HTMLDivElement>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [found, setFound] = useState<boolean | null>(null);
  const [lng = 0, lat = 0] = point;

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    let cancelled = false;
    let destroy: (() => void) | null = null;
    const label = `Map of the event: the device's point and the geofence ${geofenceName}`;
    void Promise.all([createBaseMap(element, label), loadShape(geofenceId)])
      .then(([{ map, renderer }, shape]) => {
        // Listeners first: remove() ends a running pan (a resize's) with a moveend on a map already
        // taken apart, which the canvas would answer by drawing on a context that is gone.
        destroy = () => {
          map.off();
          map.remove();
        };
        if (cancelled) {
          destroy();
          return;
        }
        const where = L.latLng(lat, lng);
        let bounds = L.latLngBounds(where, where);
        if (shape) {
          const shapes = new GeofenceLayer(
            map,
            renderer,
            () => undefined,
            () => false,
          );
          shapes.setAll([shape]);
          bounds = shapes.bounds()?.extend(where) ?? bounds;
        }
        L.circleMarker(where, { ...POINT_STYLE, renderer }).addTo(map);
        if (shape) map.fitBounds(bounds, { padding: [24, 24], maxZoom: 17, animate: false });
        else map.setView(where, POINT_ZOOM, { animate: false });
        setFound(shape !== null);
      })
      .catch((failure: unknown) =>
        setProblem(`The map could not load: ${failure instanceof Error ? failure.message : String(failure)}`),
      );
    return () => {
      cancelled = true;
      destroy?.();
    };
  }, [geofenceId, geofenceName, lat, lng]);

  return (
    <div className="event-map-wrap">
      <Notice kind="error">{problem}</Notice>
      <div ref={container} className="event-map" data-testid="event-map" />
      <p className="hint">
        {found === null
          ? 'Loading the geofence…'
          : found
            ? 'The orange dot is where the device was; the geofence is drawn as it is now.'
            : 'The orange dot is where the device was; the geofence has been deleted since.'}
      </p>
    </div>
  );
}
