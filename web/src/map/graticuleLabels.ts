/**
 * The graticule's degree labels, as elements along the map's edges: longitudes along the bottom,
 * latitudes along the right (the corners with fewer controls). A label that would stick out of
 * the map, or sit under a control or another label, is left out rather than shown in part: every
 * label shown is whole. They lie between the graticule and the tile layer, so map tiles cover them
 * as they cover the lines, and are redrawn as the map moves (a few dozen elements).
 */
import L from 'leaflet';
import './mapTools.css';

/** Space between a label and the map's edge or its line, in pixels. */
const GAP = 3;

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

export class GraticuleLabels extends L.Layer {
  #box: HTMLElement | null = null;
  /** Controls added, or filled in, after the labels were placed may cover some: place them again. */
  #corners = new ResizeObserver(() => this.draw());

  constructor(private readonly stepFor: (zoom: number) => number) {
    super();
  }

  override onAdd(map: L.Map): this {
    // Inside the tile pane, after the graticule's own container: above its lines, below the tiles.
    this.#box = L.DomUtil.create('div', 'graticule-labels', map.getPane('tilePane'));
    this.#box.setAttribute('aria-hidden', 'true');
    for (const corner of map.getContainer().querySelectorAll('.leaflet-control-container > div')) {
      this.#corners.observe(corner);
    }
    this.draw();
    return this;
  }

  override onRemove(): this {
    this.#corners.disconnect();
    this.#box?.remove();
    this.#box = null;
    return this;
  }

  override getEvents(): Record<string, L.LeafletEventHandlerFn> {
    return { move: this.draw, zoomend: this.draw, resize: this.draw, viewreset: this.draw };
  }

  private draw(): void {
    const map = this._map;
    const box = this.#box;
    if (!map || !box) return;
    const size = map.getSize();
    // The box covers the view: its labels are placed in the map container's pixels.
    L.DomUtil.setPosition(box, map.containerPointToLayerPoint([0, 0]));
    box.style.width = `${size.x}px`;
    box.style.height = `${size.y}px`;
    const zoom = map.getZoom();
    const step = this.stepFor(zoom);
    const digits = step < 1 ? Math.ceil(-Math.log10(step) - 1e-9) : 0;
    const bounds = map.getBounds();
    const centre = map.getCenter();
    const labels: HTMLElement[] = [];
    const west = Math.ceil(bounds.getWest() / step);
    const east = Math.floor(bounds.getEast() / step);
    for (let i = west; i <= east && labels.length < 200; i++) {
      const lng = i * step;
      const x = map.latLngToContainerPoint([centre.lat, lng]).x;
      labels.push(label(`${degrees(wrap(lng), digits)}°`, { left: `${x + GAP}px`, bottom: `${GAP}px` }));
    }
    const south = Math.ceil(Math.max(bounds.getSouth(), -85) / step);
    const north = Math.floor(Math.min(bounds.getNorth(), 85) / step);
    for (let i = south; i <= north && labels.length < 400; i++) {
      const lat = i * step;
      const y = map.latLngToContainerPoint([lat, centre.lng]).y;
      labels.push(label(`${degrees(lat, digits)}°`, { right: `${GAP}px`, bottom: `${size.y - y + 1}px` }));
    }
    box.replaceChildren(...labels);
    this.hideCovered(box, labels);
  }

  /** Leaves out every label not wholly inside the map, or under a control or a label before it. */
  private hideCovered(box: HTMLElement, labels: HTMLElement[]): void {
    const container = this._map.getContainer();
    const frame = container.getBoundingClientRect();
    const taken: Box[] = [...container.querySelectorAll('.leaflet-control')].map((c) =>
      c.getBoundingClientRect(),
    );
    const boxes = labels.map((l) => l.getBoundingClientRect());
    labels.forEach((l, index) => {
      const b = boxes[index];
      const inside =
        b !== undefined &&
        b.width > 0 &&
        b.left >= frame.left &&
        b.top >= frame.top &&
        b.right <= frame.right &&
        b.bottom <= frame.bottom;
      if (!inside || taken.some((t) => overlaps(b, t))) l.hidden = true;
      else taken.push(b);
    });
    box.dataset.shown = String(labels.filter((l) => !l.hidden).length);
  }
}

function label(text: string, position: Partial<Record<'left' | 'right' | 'bottom', string>>): HTMLElement {
  const span = document.createElement('span');
  span.className = 'graticule-label';
  span.textContent = text;
  Object.assign(span.style, position);
  return span;
}

function overlaps(a: Box, b: Box): boolean {
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
}

/** A longitude on a copy of the world (beyond ±180°, `worldCopyJump`) named as on the first: -180° < it ≤ 180°. */
function wrap(lng: number): number {
  const wrapped = ((((lng + 180) % 360) + 360) % 360) - 180;
  return wrapped === -180 ? 180 : wrapped;
}

/** Degrees with the step's decimals, and never "-0". */
function degrees(value: number, digits: number): string {
  const text = value.toFixed(digits);
  return Number(text) === 0 ? (0).toFixed(digits) : text;
}
