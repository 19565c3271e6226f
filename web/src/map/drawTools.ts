/**
 * Drawing and editing geofences with Geoman: draw a polygon, rectangle or circle, edit vertices
 * (and a circle's centre and radius), move the shape, cut a hole. Exactly one shape takes part at a
 * time (the draft, or the copy of the selected geofence): every other shape is `pmIgnore`, so the
 * edit and cut modes never walk thousands of layers. A server's geometry error is pinned where it
 * happened until the next edit.
 */
import L from 'leaflet';
import '@geoman-io/leaflet-geoman-free';
import '@geoman-io/leaflet-geoman-free/dist/leaflet-geoman.css';
import { showDrawSize } from './drawSize.ts';
import { type GeofenceGeometry, geometryBounds, geometryLayer, layerGeometry } from './geofenceGeometry.ts';
import { outwardBuffer } from './polygonBuffer.ts';

export type GeometryChange = { geometry: GeofenceGeometry } | { problem: string };

export interface DrawCallbacks {
  /** A new shape was drawn: the start of a new geofence. */
  onDrawn(change: GeometryChange): void;
  /** The shape being edited changed (vertices, radius, moved, cut). */
  onEdited(change: GeometryChange): void;
}

/**
 * The toolbar's names. Tests and screen readers find the buttons by these, so they say what the
 * tool does to a geofence rather than Geoman's generic "Layers".
 */
export const TOOL_TITLES = {
  drawPolyButton: 'Draw polygon',
  drawRectButton: 'Draw rectangle',
  drawCircleButton: 'Draw circle',
  editButton: 'Edit vertices',
  dragButton: 'Move shape',
  cutButton: 'Cut a hole',
} as const;

const EDITING: L.PathOptions = {
  color: '#d9480f',
  weight: 3,
  opacity: 1,
  fillOpacity: 0.2,
  dashArray: undefined,
};
const MAX_RADIUS_M = 100_000;
const BUFFER_STYLE: L.PathOptions = {
  color: '#d9480f',
  weight: 1.5,
  dashArray: '4 6',
  fill: false,
  interactive: false,
  className: 'exit-buffer',
};

export class DrawTools {
  private layer: L.Polygon | L.Circle | null = null;
  private problem: L.CircleMarker | null = null;
  private buffer: L.Circle | L.Polygon | null = null;
  /** The exit buffer (metres) of the geofence in the form: drawn around the shape as it changes. */
  private exitBufferM: number | null = null;
  /**
   * The buffer ring is one path: SVG, so it is a node of the page with its dash pattern (what a
   * test or a user's inspector can see), while the many geofences stay on the shared canvas.
   */
  private readonly bufferRenderer = L.svg({ padding: 0.5 });

  constructor(
    private readonly map: L.Map,
    private readonly renderer: L.Canvas,
    private readonly callbacks: DrawCallbacks,
  ) {
    // Geoman gives maps their `pm` when they are created; this one may be older than Geoman's module.
    if (!map.pm) L.PM.reInitLayer(map as unknown as L.Layer);
    const pm = map.pm;
    pm.setLang(
      'en',
      { buttonTitles: TOOL_TITLES, tooltips: { finishPoly: 'Click the first point to finish' } },
      'en',
    );
    pm.setGlobalOptions({
      pathOptions: { ...EDITING, renderer },
      templineStyle: { color: '#d9480f' },
      hintlineStyle: { color: '#d9480f', dashArray: '5 5' },
      // A crossing ring can be drawn: the server says where it crosses, which teaches more than a refusal.
      allowSelfIntersection: true,
      minRadiusCircle: 1,
      maxRadiusCircle: MAX_RADIUS_M,
      snappable: true,
      continueDrawing: false,
    });
    pm.addControls({
      position: 'topleft',
      drawMarker: false,
      drawCircleMarker: false,
      drawPolyline: false,
      drawText: false,
      drawPolygon: true,
      drawRectangle: true,
      drawCircle: true,
      editMode: true,
      dragMode: true,
      cutPolygon: true,
      removalMode: false,
      rotateMode: false,
    });
    this.nameButtons();
    showDrawSize(map);

    map.on('pm:create', (e) => {
      // Geoman added the layer to the map itself; it becomes the one shape in play.
      this.replaceLayer(e.layer as L.Polygon | L.Circle);
      this.drawBuffer();
      this.clearProblem();
      this.callbacks.onDrawn(this.current());
    });
    map.on('pm:cut', (e) => {
      if (e.originalLayer !== this.layer) return;
      this.replaceLayer(e.layer as L.Polygon | L.Circle, false);
      this.changed();
    });
    for (const event of [
      'pm:globaldrawmodetoggled',
      'pm:globaleditmodetoggled',
      'pm:globaldragmodetoggled',
      'pm:globalcutmodetoggled',
    ] as const) {
      map.on(event, () => this.syncPressed());
    }
  }

  /** True while a tool is active: clicks on the map belong to it. */
  busy(): boolean {
    const pm = this.map.pm;
    return (
      pm.globalDrawModeEnabled() ||
      pm.globalEditModeEnabled() ||
      pm.globalDragModeEnabled() ||
      pm.globalCutModeEnabled()
    );
  }

  /** Shows a geometry as the shape to edit (a selected geofence, or text applied from the form). */
  edit(
    geometry: GeofenceGeometry | null,
    options: { fit?: boolean; exitBufferM?: number | null } = {},
  ): void {
    this.clearProblem();
    // Left out (text applied from the form), the buffer stays what the form says.
    if (options.exitBufferM !== undefined) this.exitBufferM = options.exitBufferM;
    if (!geometry) {
      this.replaceLayer(null);
      return;
    }
    const layer = geometryLayer(geometry, { ...EDITING, renderer: this.renderer });
    layer.addTo(this.map);
    this.replaceLayer(layer);
    this.drawBuffer();
    if (options.fit) this.map.fitBounds(geometryBounds(geometry), { padding: [40, 40], maxZoom: 18 });
  }

  /** The exit buffer typed in the form (null or 0: none), redrawn around the shape at once. */
  setExitBuffer(metres: number | null): void {
    if (metres === this.exitBufferM) return;
    this.exitBufferM = metres;
    this.drawBuffer();
  }

  /** Pins a server's geometry error (e.g. where a ring crosses itself) on the map. */
  showProblem(location: [number, number], message: string): void {
    this.clearProblem();
    const [lng, lat] = location;
    const text = document.createElement('span');
    text.textContent = message;
    this.problem = L.circleMarker([lat, lng], {
      renderer: this.renderer,
      radius: 9,
      color: '#b42318',
      weight: 3,
      fillColor: '#ffffff',
      fillOpacity: 1,
      pmIgnore: true,
      snapIgnore: true,
      interactive: true,
    })
      .bindPopup(text, { className: 'geometry-problem', autoPan: true })
      .addTo(this.map);
    this.problem.openPopup();
  }

  clearProblem(): void {
    this.problem?.remove();
    this.problem = null;
  }

  private current(): GeometryChange {
    return this.layer ? layerGeometry(this.layer) : { problem: 'Nothing is drawn.' };
  }

  private changed(): void {
    this.clearProblem();
    this.drawBuffer();
    this.callbacks.onEdited(this.current());
  }

  private replaceLayer(layer: L.Polygon | L.Circle | null, removeOld = true): void {
    if (this.layer && this.layer !== layer) {
      this.layer.off('pm:edit', this.changed, this);
      if (removeOld) this.layer.remove();
    }
    this.buffer?.remove();
    this.buffer = null;
    this.layer = layer;
    if (!layer) return;
    layer.setStyle(EDITING);
    layer.on('pm:edit', this.changed, this);
    // A shape added while "Edit vertices" or "Move shape" is on takes part like the one before it.
    if (this.map.pm.globalEditModeEnabled()) layer.pm.enable();
    if (this.map.pm.globalDragModeEnabled()) layer.pm.enableLayerDrag();
  }

  /**
   * The exit buffer as a dashed ring around the shape in play: how far out a device that is inside
   * stays inside (contract §4.5). A circle's is a wider circle; a polygon's its outline grown by
   * the buffer (polygonBuffer.ts). Drawn from the layer as it is now, so it follows every edit.
   */
  private drawBuffer(): void {
    this.buffer?.remove();
    this.buffer = null;
    const metres = this.exitBufferM;
    if (!this.layer || !metres || metres <= 0) return;
    const change = layerGeometry(this.layer);
    if (!('geometry' in change)) return;
    const geometry = change.geometry;
    const style = { ...BUFFER_STYLE, renderer: this.bufferRenderer, pmIgnore: true, snapIgnore: true };
    if (geometry.type === 'Circle') {
      const [lng, lat] = geometry.coordinates;
      this.buffer = L.circle([lat, lng], { ...style, radius: geometry.radius + metres });
    } else {
      const rings = outwardBuffer(geometry.coordinates, metres);
      if (rings.length === 0) return;
      this.buffer = L.polygon(
        rings.map((ring) => ring.map(([lng, lat]) => L.latLng(lat, lng))),
        style,
      );
    }
    this.buffer.addTo(this.map);
  }

  /**
   * Geoman puts a button's title on its wrapper and leaves the `role=button` link itself unnamed:
   * give each link that name, and say which tool is on with aria-pressed.
   */
  private nameButtons(): void {
    for (const wrapper of this.map
      .getContainer()
      .querySelectorAll<HTMLElement>('.leaflet-pm-toolbar .button-container[title]')) {
      const button = wrapper.querySelector<HTMLElement>('.leaflet-buttons-control-button');
      button?.setAttribute('aria-label', wrapper.title);
    }
    this.syncPressed();
  }

  private syncPressed(): void {
    // Geoman marks the active tool (class `active` on the button's wrapper) after the toggle event:
    // read it once the DOM settled.
    requestAnimationFrame(() => {
      for (const button of this.map
        .getContainer()
        .querySelectorAll<HTMLElement>('.leaflet-pm-toolbar .leaflet-buttons-control-button')) {
        const on = button.parentElement?.classList.contains('active') ?? false;
        button.setAttribute('aria-pressed', String(on));
      }
    });
  }
}
