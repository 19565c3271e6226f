/**
 * The map every page shares: Leaflet with canvas rendering (thousands of shapes without thousands
 * of DOM nodes), the graticule underneath, and tiles from `MAP_TILE_URL` when the server sets one.
 */
import 'leaflet/dist/leaflet.css';
import L from 'leaflet';
import { dashboardConfig } from '../app/config.ts';
import { graticuleLayer } from './graticule.ts';

export interface BaseMap {
  map: L.Map;
  /** The canvas renderer shared by vector layers (one canvas instead of one per layer). */
  renderer: L.Canvas;
}

export async function createBaseMap(container: HTMLElement, label: string): Promise<BaseMap> {
  const renderer = L.canvas({ padding: 0.5, tolerance: 4 });
  const map = L.map(container, {
    preferCanvas: true,
    renderer,
    worldCopyJump: true,
    zoomControl: true,
    attributionControl: true,
    keyboard: true,
  }).setView([20, 0], 2);
  // Leaflet makes the container focusable for its keyboard panning; name it for screen readers.
  container.setAttribute('role', 'application');
  container.setAttribute('aria-label', label);
  map.attributionControl.setPrefix(false);
  graticuleLayer().addTo(map);
  const config = await dashboardConfig();
  if (config.map_tile_url) {
    L.tileLayer(config.map_tile_url, {
      maxZoom: 19,
      attribution: config.map_tile_attribution ?? '',
      zIndex: 1,
    }).addTo(map);
  }
  return { map, renderer };
}
