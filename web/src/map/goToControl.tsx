/**
 * The map's "Go to" box, top right: coordinates, a geofence or device of the workspace, or a place
 * (when the server names a geocoder), offered in the dashboard's accessible combobox; choosing one
 * moves the map there.
 *
 * It is a layer that adds a control, not a control alone: `map.remove()` removes every layer (and
 * so unmounts the box) even after a page took all listeners off the map, while a control is only
 * removed through an `unload` listener.
 */
import L from 'leaflet';
import { useRef } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { EntityCombobox } from '../ui/EntityCombobox.tsx';
import { findTargets, type GoToTarget, goTo } from './goToTargets.ts';
import './mapTools.css';

export class GoToControl extends L.Layer {
  #control: L.Control | null = null;
  #root: Root | null = null;

  constructor(private readonly geocoderUrl: string | null) {
    super();
  }

  override onAdd(map: L.Map): this {
    const element = L.DomUtil.create('div', 'map-go-to');
    // Clicks, wheel turns and drags in the box are the box's, not the map's (nor Geoman's).
    L.DomEvent.disableClickPropagation(element);
    L.DomEvent.disableScrollPropagation(element);
    const control = new L.Control({ position: 'topright' });
    control.onAdd = () => element;
    control.addTo(map);
    this.#control = control;
    this.#root = createRoot(element);
    this.#root.render(<GoToBox map={map} geocoderUrl={this.geocoderUrl} />);
    return this;
  }

  override onRemove(): this {
    const root = this.#root;
    this.#root = null;
    this.#control?.remove();
    this.#control = null;
    // A page removes its map while React commits; unmounting a root in the middle of that is refused.
    if (root) queueMicrotask(() => root.unmount());
    return this;
  }
}

function GoToBox({ map, geocoderUrl }: { map: L.Map; geocoderUrl: string | null }) {
  const offered = useRef(new Map<string, GoToTarget>());
  return (
    <EntityCombobox
      label="Go to"
      placeholder={geocoderUrl ? 'Place, name or lat, lng' : 'Name or lat, lng'}
      value={null}
      onChange={(id) => {
        const target = id === null ? undefined : offered.current.get(id);
        if (target) goTo(map, target);
      }}
      search={async (text, signal) => {
        const targets = await findTargets(text, signal, geocoderUrl);
        // The box drops an answer it no longer waits for: so do the targets behind its options.
        if (!signal.aborted) offered.current = new Map(targets.map((t) => [t.option.id, t]));
        return targets.map((t) => t.option);
      }}
      resolve={() => Promise.resolve(null)}
    />
  );
}
