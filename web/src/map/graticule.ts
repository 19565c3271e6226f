/**
 * A graticule: lines of latitude and longitude at a spacing that suits the zoom, drawn on canvas
 * tiles, with their degree labels along the map's edges (graticuleLabels.ts). It sits under the
 * tile layer, so with no tile URL, or tiles that fail to load (no network), the map still has a
 * frame of reference.
 */
import L from 'leaflet';
import { GraticuleLabels } from './graticuleLabels.ts';

const STEPS = [30, 10, 5, 2, 1, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001];

/** The largest step that draws about one line per 256-pixel tile at this zoom. */
export function graticuleStep(zoom: number): number {
  const degreesPerTile = 360 / 2 ** zoom;
  return STEPS.find((s) => s <= degreesPerTile) ?? 0.001;
}

/** The lines on tiles; the labels beside them, since a label drawn on a tile is cut off at its edge. */
class Graticule extends L.GridLayer {
  readonly #labels = new GraticuleLabels(graticuleStep);

  override onAdd(map: L.Map): this {
    super.onAdd(map);
    this.#labels.addTo(map);
    return this;
  }

  override onRemove(map: L.Map): this {
    this.#labels.remove();
    super.onRemove(map);
    return this;
  }

  protected override createTile(coords: L.Coords): HTMLElement {
    const tile = document.createElement('canvas');
    tile.width = 256;
    tile.height = 256;
    const ctx = tile.getContext('2d');
    if (!ctx) return tile;
    const map = this._map;
    const nw = map.unproject(L.point(coords.x * 256, coords.y * 256), coords.z);
    const se = map.unproject(L.point((coords.x + 1) * 256, (coords.y + 1) * 256), coords.z);
    const step = graticuleStep(coords.z);
    const origin = L.point(coords.x * 256, coords.y * 256);
    const toPixel = (lat: number, lng: number): L.Point =>
      map.project(L.latLng(lat, lng), coords.z).subtract(origin);
    ctx.fillStyle = '#eef2f5';
    ctx.fillRect(0, 0, 256, 256);
    ctx.strokeStyle = '#c4ccd4';
    ctx.lineWidth = 1;
    for (let lng = Math.ceil(nw.lng / step) * step; lng <= se.lng; lng += step) {
      const x = Math.round(toPixel(0, lng).x) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, 256);
      ctx.stroke();
    }
    for (let lat = Math.ceil(se.lat / step) * step; lat <= nw.lat; lat += step) {
      const y = Math.round(toPixel(lat, nw.lng).y) + 0.5;
      ctx.beginPath();
      ctx.moveTo(0, y);
      ctx.lineTo(256, y);
      ctx.stroke();
    }
    return tile;
  }
}

export function graticuleLayer(): L.GridLayer {
  return new Graticule({ tileSize: 256, pane: 'tilePane', zIndex: 0 });
}
