/**
 * Geofences: the list and the form in the side panel, every geofence on the map. The map view
 * (`view=lat,lng,zoom`), the list's filters and the selected geofence live in the address, so a view
 * is a shareable link. The map is imperative (Leaflet + Geoman): React holds the form, not the shapes.
 */
import type L from 'leaflet';
import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { useForgetDeleted, useInvalidate } from '../../api/queries.ts';
import { setQuery, useLocation } from '../../app/router.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { createBaseMap } from '../../map/baseMap.ts';
import type { DrawTools, GeometryChange } from '../../map/drawTools.ts';
import { type GeofenceGeometry, geometryText, parseGeometry } from '../../map/geofenceGeometry.ts';
import { GeofenceLayer } from '../../map/geofenceLayer.ts';
import { Notice } from '../../ui/forms.tsx';
import { GeofenceDevices, INSIDE_OFFSET } from './GeofenceDevices.tsx';
import { GeofenceForm } from './GeofenceForm.tsx';
import { GeofenceList } from './GeofenceList.tsx';
import { type Geofence, geofenceKeys, geofenceShape, getGeofence, loadAllShapes } from './geofenceApi.ts';
import { ImportExport } from './ImportExport.tsx';
import { formatView, parseView } from './mapView.ts';

interface MapTools {
  map: L.Map;
  shapes: GeofenceLayer;
  draw: DrawTools;
}

/** What the form shows: a new geofence, or an existing one; `key` starts a fresh form. */
type Editor = { geofence: Geofence | null; key: number };

export default function GeofencesPage() {
  const { me } = useAuth();
  const workspace = me?.workspace_id ?? '';
  const shown = useRef(workspace);
  // Another workspace is another set of geofences: its own page, without the last one's selection.
  useEffect(() => {
    if (shown.current === workspace) return;
    shown.current = workspace;
    setQuery({ selected: null, page: null });
  }, [workspace]);
  return <WorkspaceGeofences key={workspace} />;
}

function WorkspaceGeofences() {
  const { query } = useLocation();
  const filters = {
    q: query.get('q') ?? '',
    enabled: query.get('enabled') ?? '',
    page: Math.max(1, Number.parseInt(query.get('page') ?? '1', 10) || 1),
  };
  const view = query.get('view');

  const container = useRef<HTMLDivElement>(null);
  const tools = useRef<MapTools | null>(null);
  /** The view this page last wrote to the address: another value there came from outside (back, a link). */
  const writtenView = useRef<string | null>(null);
  const [mapReady, setMapReady] = useState(false);
  const [mapError, setMapError] = useState<string | null>(null);
  const [shapesVersion, setShapesVersion] = useState(0);
  const invalidate = useInvalidate();
  const forgetDeleted = useForgetDeleted();
  const [editor, setEditor] = useState<Editor | null>(null);
  const [text, setText] = useState('');
  const [geometryProblem, setGeometryProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const editorKey = useRef(0);

  const openEditor = useCallback((geofence: Geofence | null) => {
    editorKey.current += 1;
    setEditor({ geofence, key: editorKey.current });
    setQuery({ selected: geofence?.id ?? null, [INSIDE_OFFSET]: null });
  }, []);

  const setExitBuffer = useCallback((metres: number | null) => {
    tools.current?.draw.setExitBuffer(metres);
  }, []);

  /** Selects an existing geofence: highlighted, editable on the map, in the form. */
  const select = useCallback(
    (geofence: Geofence, fit: boolean) => {
      const t = tools.current;
      if (t) {
        t.shapes.hide(geofence.id);
        t.draw.edit(geofence.geometry as GeofenceGeometry, { fit, exitBufferM: geofence.exit_buffer_m });
      }
      setText(geometryText(geofence.geometry as GeofenceGeometry));
      setGeometryProblem(null);
      setNotice(null);
      setProblem(null);
      openEditor(geofence);
    },
    [openEditor],
  );

  const selectById = useCallback(
    async (id: string, fit: boolean) => {
      const { data, error } = await getGeofence(id);
      if (data) select(data, fit);
      else setProblem(errorMessage(error));
    },
    [select],
  );

  const close = useCallback(() => {
    tools.current?.draw.edit(null);
    tools.current?.shapes.hide(null);
    setEditor(null);
    setText('');
    setGeometryProblem(null);
    setQuery({ selected: null, [INSIDE_OFFSET]: null });
  }, []);

  // The map, once: Leaflet and Geoman outlive every render of the panel.
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    let cancelled = false;
    let created: MapTools | null = null;
    // Geoman (the drawing tools) is the larger half of this page: fetched beside the map, not before it.
    const drawing = import('../../map/drawTools.ts');
    void Promise.all([createBaseMap(element, 'Geofence map', { goTo: true }), drawing]).then(
      ([{ map, renderer }, { DrawTools }]) => {
        if (cancelled) {
          map.remove();
          return;
        }
        const onGeometry = (change: GeometryChange): void => {
          if ('geometry' in change) {
            setText(geometryText(change.geometry));
            setGeometryProblem(null);
          } else setGeometryProblem(change.problem);
        };
        const draw = new DrawTools(map, renderer, {
          onDrawn: (change) => {
            // A new shape starts a new geofence; the one selected before goes back to the map.
            created?.shapes.hide(null);
            setNotice(null);
            onGeometry(change);
            openEditor(null);
          },
          onEdited: onGeometry,
        });
        const shapes = new GeofenceLayer(
          map,
          renderer,
          (id) => void selectById(id, false),
          () => draw.busy(),
        );
        created = { map, shapes, draw };
        tools.current = created;
        const given = new URLSearchParams(window.location.search).get('view');
        const initial = parseView(given);
        if (initial) {
          map.setView([initial.lat, initial.lng], initial.zoom, { animate: false });
          writtenView.current = given;
        }
        map.on('moveend', () => {
          const next = formatView(map);
          writtenView.current = next;
          setQuery({ view: next });
        });
        setMapReady(true);
      },
    );
    return () => {
      cancelled = true;
      // Listeners first: remove() ends a running pan with a moveend on a map already taken apart.
      created?.map.off();
      created?.map.remove();
      tools.current = null;
    };
  }, [openEditor, selectById]);

  // A view put in the address from outside (Back, a link to this page) moves the map there.
  useEffect(() => {
    const map = tools.current?.map;
    if (!map || !view || view === writtenView.current) return;
    const target = parseView(view);
    if (target) map.setView([target.lat, target.lng], target.zoom, { animate: false });
  }, [view]);

  // Every geofence on the map (again after an import), fitted while the address has no view.
  const firstLoad = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new `shapesVersion` asks for the shapes again.
  useEffect(() => {
    if (!mapReady) return;
    let live = true;
    loadAllShapes()
      .then((all) => {
        const t = tools.current;
        if (!live || !t) return;
        t.shapes.setAll(all);
        setMapError(null);
        const params = new URLSearchParams(window.location.search);
        const hasView = parseView(params.get('view')) !== null;
        const selected = firstLoad.current ? params.get('selected') : null;
        firstLoad.current = false;
        if (selected) void selectById(selected, !hasView);
        else if (!hasView) {
          // No view yet (none given, and the map was not moved since): show them all. After an
          // import into an empty workspace this is the first time there is anything to show.
          const bounds = t.shapes.bounds();
          if (bounds) t.map.fitBounds(bounds, { padding: [24, 24], maxZoom: 16, animate: false });
        }
      })
      .catch(
        (failure: Error) => live && setMapError(`The map could not load the geofences: ${failure.message}`),
      );
    return () => {
      live = false;
    };
  }, [mapReady, shapesVersion, selectById]);

  const applyGeometry = (fit: boolean): boolean => {
    if (text.trim() === '') {
      setGeometryProblem('Type a geometry first.');
      return false;
    }
    const parsed = parseGeometry(text);
    if ('problem' in parsed) {
      setGeometryProblem(parsed.problem);
      return false;
    }
    setGeometryProblem(null);
    tools.current?.draw.edit(parsed.geometry, { fit });
    return true;
  };

  const saved = (geofence: Geofence, created: boolean): void => {
    const t = tools.current;
    if (t) {
      t.shapes.upsert(geofenceShape(geofence));
      t.shapes.hide(geofence.id);
      t.draw.edit(geofence.geometry as GeofenceGeometry, { exitBufferM: geofence.exit_buffer_m });
    }
    setText(geometryText(geofence.geometry as GeofenceGeometry));
    setNotice(created ? `Created “${geofence.name}”.` : `Saved “${geofence.name}”.`);
    invalidate(geofenceKeys.all);
    if (created) openEditor(geofence);
    else setEditor((e) => (e ? { ...e, geofence } : e));
  };

  const deleted = (geofence: Geofence): void => {
    tools.current?.shapes.remove(geofence.id);
    close();
    setNotice(`Deleted “${geofence.name}”.`);
    // Its own panel (devices inside) is closing: only the list is read again now.
    forgetDeleted(geofenceKeys.all);
    invalidate(geofenceKeys.lists);
  };

  const startNew = (): void => {
    tools.current?.draw.edit(null);
    tools.current?.shapes.hide(null);
    setText('');
    setGeometryProblem(null);
    setNotice(null);
    openEditor(null);
  };

  return (
    <main id="main" className="map-page geofences-page">
      <div className="panel">
        <div className="panel-head">
          <h1>Geofences</h1>
          <button type="button" className="primary" onClick={startNew}>
            New geofence
          </button>
        </div>
        <Notice kind="success">{notice}</Notice>
        <Notice kind="error">{problem ?? mapError}</Notice>
        {editor ? (
          <GeofenceForm
            key={editor.key}
            geofence={editor.geofence}
            geometryText={text}
            geometryProblem={geometryProblem}
            onGeometryText={(value) => {
              setText(value);
              setGeometryProblem(null);
              tools.current?.draw.clearProblem();
            }}
            onApplyGeometry={applyGeometry}
            onSaved={saved}
            onDeleted={deleted}
            onClose={close}
            onGeometryError={(location, message) => {
              if (location) tools.current?.draw.showProblem(location, message);
            }}
            onExitBuffer={setExitBuffer}
          />
        ) : null}
        {editor?.geofence ? <GeofenceDevices geofence={editor.geofence} /> : null}
        <GeofenceList
          filters={filters}
          selectedId={editor?.geofence?.id ?? null}
          onSelect={(g) => select(g, true)}
        />
        <ImportExport
          onImported={() => {
            setShapesVersion((v) => v + 1);
            invalidate(geofenceKeys.all);
          }}
        />
      </div>
      <div ref={container} className="map" />
    </main>
  );
}
