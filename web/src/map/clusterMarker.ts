/**
 * A circle on the shared canvas renderer that can carry a short label (a cluster's count): the text
 * is painted into the same canvas, right after the circle, so a cluster costs no DOM node.
 * It reaches into Leaflet's canvas renderer (`_updateCircle`, `_ctx`, `_drawing`): the same
 * internals every canvas layer of Leaflet 1.x uses to draw itself.
 */
import L from 'leaflet';

interface CanvasInternals {
  _drawing: boolean;
  _ctx: CanvasRenderingContext2D;
  _updateCircle(layer: L.CircleMarker): void;
}

interface MarkerInternals {
  _renderer: CanvasInternals;
  _point: L.Point;
  _empty(): boolean;
}

export class LabelledCircle extends L.CircleMarker {
  label = '';
  /** The style last applied (setStyle costs a redraw; skipped when nothing changed). */
  styleKey = '';

  /** Leaflet calls this to paint the layer while its renderer draws. */
  _updatePath(): void {
    const self = this as unknown as MarkerInternals;
    const renderer = self._renderer;
    renderer._updateCircle(this);
    if (!this.label || !renderer._drawing || self._empty()) return;
    const ctx = renderer._ctx;
    ctx.globalAlpha = 1;
    ctx.fillStyle = '#ffffff';
    ctx.font = '600 12px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(this.label, self._point.x, self._point.y + 0.5);
  }
}

/** A cluster's count in at most four characters: 7, 342, 1.2k, 12k. */
export function countLabel(count: number): string {
  if (count < 1000) return String(count);
  if (count < 10_000) return `${(count / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  return `${Math.round(count / 1000)}k`;
}

/** Radius in pixels: grows with the number of digits, so big clusters read as big. */
export function clusterRadius(count: number): number {
  return 12 + 3 * Math.min(4, Math.floor(Math.log10(Math.max(1, count))));
}
