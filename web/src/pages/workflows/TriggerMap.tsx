/**
 * Picking the trigger geofence on a small map: every geofence of the workspace (one request to
 * GET /geofences/export) drawn by the shared map modules; a click on one chooses it. Loaded only
 * when asked for, so the list and the builder do not carry Leaflet.
 */
import { useEffect, useRef, useState } from 'react';
import { api, errorMessage } from '../../api/client.ts';
import { createBaseMap } from '../../map/baseMap.ts';
import type { GeofenceGeometry } from '../../map/geofenceGeometry.ts';
import { GeofenceLayer, type GeofenceShape } from '../../map/geofenceLayer.ts';
import { Notice } from '../../ui/forms.tsx';

async function loadShapes(): Promise<GeofenceShape[]> {
  const { data, error } = await api.GET('/api/v1/geofences/export', { parseAs: 'json' });
  if (!data) throw new Error(errorMessage(error));
  return data.features.map((f) => ({
    id: f.id,
    name: f.properties.name,
    enabled: f.properties.enabled,
    geometry: f.geometry as GeofenceGeometry,
    bbox: f.bbox,
  }));
}

export default function TriggerMap({
  selected,
  onPick,
}: {
  selected: string | null;
  onPick(id: string, name: string): void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const layer = useRef<GeofenceLayer | null>(null);
  const names = useRef(new Map<string, string>());
  const pick = useRef(onPick);
  pick.current = onPick;
  const [problem, setProblem] = useState<string | null>(null);
  const [count, setCount] = useState<number | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the map is made once; the selection follows below
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    let cancelled = false;
    let destroy: (() => void) | null = null;
    void Promise.all([createBaseMap(element, 'Map of geofences: click one to trigger on it'), loadShapes()])
      .then(([{ map, renderer }, shapes]) => {
        if (cancelled) {
          map.remove();
          return;
        }
        destroy = () => map.remove();
        const shapesLayer = new GeofenceLayer(
          map,
          renderer,
          (id) => pick.current(id, names.current.get(id) ?? id),
          () => false,
        );
        for (const s of shapes) names.current.set(s.id, s.name);
        shapesLayer.setAll(shapes);
        shapesLayer.select(selected);
        layer.current = shapesLayer;
        setCount(shapes.length);
        const bounds = (selected ? shapesLayer.boundsOf(selected) : null) ?? shapesLayer.bounds();
        if (bounds) map.fitBounds(bounds, { padding: [16, 16], maxZoom: 16, animate: false });
      })
      .catch((failure: unknown) =>
        setProblem(`The map could not load: ${failure instanceof Error ? failure.message : String(failure)}`),
      );
    return () => {
      cancelled = true;
      layer.current = null;
      destroy?.();
    };
  }, []);

  useEffect(() => {
    layer.current?.select(selected);
  }, [selected]);

  return (
    <div className="trigger-map-wrap">
      <Notice kind="error">{problem}</Notice>
      <div ref={container} className="trigger-map" data-testid="trigger-map" />
      <p className="hint">
        {count === null
          ? 'Loading the geofences…'
          : count === 0
            ? 'This workspace has no geofences yet.'
            : 'Click a geofence to trigger on it; the one chosen is drawn in orange.'}
      </p>
    </div>
  );
}
