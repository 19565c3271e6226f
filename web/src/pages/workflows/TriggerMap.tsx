/**
 * Picking the trigger geofence on a small map: every geofence of the workspace (one request to
 * GET /geofences/export) drawn by the shared map modules; a click on one chooses it. Loaded only
 * when asked for, so the list and the builder do not carry Leaflet.
 */

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { createBaseMap } from '../../map/baseMap.ts';
import { GeofenceLayer } from '../../map/geofenceLayer.ts';
import { Notice } from '../../ui/forms.tsx';
import { loadGeofenceShapes } from './workflowApi.ts';

export default function TriggerMap({
  selected,
  onPick,
}: {
  selected: string | null;
  onPick(id: string, name: string): void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const layer = useRef<GeofenceLayer | null>(null);
  const client = useQueryClient();
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
    void Promise.all([
      createBaseMap(element, 'Map of geofences: click one to trigger on it'),
      loadGeofenceShapes(client),
    ])
      .then(([{ map, renderer }, shapes]) => {
        if (cancelled) {
          map.remove();
          return;
        }
        destroy = () => map.remove();
        const names = new Map(shapes.map((s) => [s.id, s.name]));
        const shapesLayer = new GeofenceLayer(
          map,
          renderer,
          (id) => pick.current(id, names.get(id) ?? id),
          () => false,
        );
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
