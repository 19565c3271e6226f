/**
 * The map every page shares: Leaflet with canvas rendering (thousands of shapes without thousands
 * of DOM nodes), the graticule underneath, and tiles from `MAP_TILE_URL` when the server sets one.
 */
import 'leaflet/dist/leaflet.css';
import L from 'leaflet';
import { dashboardConfig } from '../app/config.ts';
import { GoToControl } from './goToControl.tsx';
import { graticuleLayer } from './graticule.ts';
import { scaleBar } from './scaleBar.ts';

export interface BaseMap {
  map: L.Map;
  /** The canvas renderer shared by vector layers (one canvas instead of one per layer). */
  renderer: L.Canvas;
}

export interface BaseMapOptions {
  /** A "Go to" box on the map (coordinates, geofences, devices, places): for the pages that are a map. */
  goTo?: boolean;
}

export async function createBaseMap(
  container: HTMLElement,
  label: string,
  options: BaseMapOptions = {},
): Promise<BaseMap> {
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
  // Leaflet ends a zoom animation (the +/− buttons) on a 250 ms timer, which still fires when the
  // map is removed first (the page left at once) and then moves panes that are gone: a TypeError
  // reading '_leaflet_pos'. Removal ends the animation, so that timer finds nothing to finish.
  // (On remove() itself, not on its 'unload' event: pages call off() first, dropping listeners.)
  const remove = map.remove.bind(map);
  map.remove = () => {
    (map as unknown as { _animatingZoom: boolean })._animatingZoom = false;
    return remove();
  };
  graticuleLayer().addTo(map);
  scaleBar().addTo(map);
  const config = await dashboardConfig();
  if (options.goTo) new GoToControl(config.geocoder_url).addTo(map);
  if (config.map_tile_url) {
    L.tileLayer(config.map_tile_url, {
      maxZoom: 19,
      attribution: config.map_tile_attribution ?? '',
      zIndex: 1,
    }).addTo(map);
  }
  return { map, renderer };
}
