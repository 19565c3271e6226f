/**
 * /devices, the live map: every device's last position (clustered when zoomed out), moving live; a
 * side panel to find a device, see where it is, which geofences it is in and its recent trail,
 * follow it, and simulate locations. The map view is in the URL (`view=lat,lng,zoom`), the selected
 * device too (`device=<id>`), and following it (`follow=1`). Map work happens in DevicesMap,
 * outside React: React renders the panel only.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { Link } from '../../app/Link.tsx';
import { setQuery, useLocation } from '../../app/router.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { LiveStatus } from '../../live/LiveStatus.tsx';
import { whenStreamCarries } from '../../live/stream.ts';
import { useStreamReady, useStreamTopic } from '../../live/useStream.ts';
import { createBaseMap } from '../../map/baseMap.ts';
import { type DeviceState, DevicesMap } from '../../map/devicesMap.ts';
import { EntityCombobox } from '../../ui/EntityCombobox.tsx';
import { Notice } from '../../ui/forms.tsx';
import { useDeviceNames, useEntityLookups } from '../events/entities.ts';
import { DeviceDetails } from './DeviceDetails.tsx';
import { fromStream, loadDevicePositions, loadGeofenceShapes, type Progress } from './devicesData.ts';
import { SimulatePanel } from './SimulatePanel.tsx';

/** Re-send the positions gathered so far to the map at most this often while paging through them. */
const PARTIAL_DRAW_MS = 400;
/** How long the first load waits for the stream, so no update falls between snapshot and stream. */
const STREAM_WAIT_MS = 1500;

interface LoadState {
  devices: Progress | null;
  geofences: Progress | null;
  done: boolean;
  truncated: boolean;
  error: string | null;
}

export function DevicesMapPage() {
  const { query } = useLocation();
  const selectedId = query.get('device') || null;
  const follow = query.get('follow') === '1';
  const { me } = useAuth();
  const workspaceId = me?.workspace_id ?? null;
  const mapElement = useRef<HTMLDivElement>(null);
  const [devicesMap, setDevicesMap] = useState<DevicesMap | null>(null);
  const mapRef = useRef<DevicesMap | null>(null);
  const [load, setLoad] = useState<LoadState>({
    devices: null,
    geofences: null,
    done: false,
    truncated: false,
    error: null,
  });
  const [count, setCount] = useState(0);
  const [selected, setSelected] = useState<DeviceState | undefined>(undefined);
  const [drawn, setDrawn] = useState(false);
  const [simulating, setSimulating] = useState(false);
  const simulateClick = useRef<(lat: number, lng: number) => void>(() => undefined);
  const finalDraw = useRef(false);

  // The map: created once per page visit.
  useEffect(() => {
    const element = mapElement.current;
    if (!element) return;
    let created: DevicesMap | null = null;
    let cancelled = false;
    void createBaseMap(element, 'Device map', { goTo: true }).then((base) => {
      if (cancelled) {
        base.map.remove();
        return;
      }
      const view = parseView(new URLSearchParams(window.location.search).get('view'));
      if (view) base.map.setView([view.lat, view.lng], view.zoom);
      created = new DevicesMap(base, {
        onDeviceClick: (id) => setQuery({ device: id }),
        onSimulateClick: (latlng) => simulateClick.current(latlng.lat, latlng.lng),
        onSelectedChange: (device) => setSelected(device ? { ...device } : undefined),
        onCountChange: setCount,
        onDrawn: () => {
          if (!finalDraw.current) return;
          finalDraw.current = false;
          performance.mark('devices-map-drawn');
          setDrawn(true);
        },
      });
      base.map.on('moveend', () => {
        const c = base.map.getCenter();
        setQuery({ view: `${c.lat.toFixed(5)},${c.lng.toFixed(5)},${base.map.getZoom()}` });
      });
      mapRef.current = created;
      setDevicesMap(created);
    });
    return () => {
      cancelled = true;
      created?.destroy();
      created?.map.remove();
      mapRef.current = null;
    };
  }, []);

  // Live positions go straight to the map (queued, drawn once per frame): no React render.
  useStreamTopic('locations', (message) => mapRef.current?.queue(fromStream(message)));

  const loadAll = useCallback(async (map: DevicesMap, signal: AbortSignal, first: boolean) => {
    setLoad((s) => ({ ...s, devices: null, geofences: null, done: false, error: null }));
    map.holdLiveUpdates();
    // Geofences do not move: they load at once, while the devices wait for the stream.
    if (first) map.geofences.clear();
    // Shapes go on the map in chunks while later pages load; all of them are on it before "drawn".
    const adding: Promise<void>[] = [];
    const geofences = first
      ? loadGeofenceShapes(signal, (shapes, progress) => {
          adding.push(map.addGeofences(shapes));
          setLoad((s) => ({ ...s, geofences: progress }));
        }).then(() => Promise.all(adding))
      : Promise.resolve();
    const gathered: DeviceState[] = [];
    let lastDraw = 0;
    const devices = (first ? whenStreamCarries('locations', STREAM_WAIT_MS) : Promise.resolve()).then(() =>
      loadDevicePositions(signal, (part, progress) => {
        gathered.push(...part);
        setLoad((s) => ({ ...s, devices: progress }));
        if (progress.loaded < progress.total && performance.now() - lastDraw > PARTIAL_DRAW_MS) {
          lastDraw = performance.now();
          map.setDevices(gathered, false);
        }
      }),
    );
    try {
      const [{ truncated }] = await Promise.all([devices, geofences]);
      if (signal.aborted) return;
      finalDraw.current = first;
      map.setDevices(gathered, true);
      const hasView = new URLSearchParams(window.location.search).has('view');
      const focusOn = new URLSearchParams(window.location.search).get('device');
      if (first && !hasView && !(focusOn && map.focus(focusOn))) map.fitAll();
      setLoad((s) => ({ ...s, done: true, truncated }));
    } catch {
      if (signal.aborted) return;
      // Show what did arrive, and keep it live.
      map.setDevices(gathered, true);
      setLoad((s) => ({ ...s, error: 'The devices could not all be loaded. Reload the page to try again.' }));
    }
  }, []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the workspace changes
  useEffect(() => {
    if (!devicesMap) return;
    const abort = new AbortController();
    setDrawn(false);
    void loadAll(devicesMap, abort.signal, true);
    return () => abort.abort();
  }, [devicesMap, loadAll, workspaceId]);

  // After a reconnection, positions may have been missed: take a fresh snapshot.
  const reload = useRef<AbortController | null>(null);
  useStreamReady((reconnected) => {
    const map = mapRef.current;
    if (!reconnected || !map || !load.done) return;
    reload.current?.abort();
    reload.current = new AbortController();
    void loadAll(map, reload.current.signal, false);
  });
  useEffect(() => () => reload.current?.abort(), []);

  useEffect(() => {
    devicesMap?.select(selectedId);
  }, [devicesMap, selectedId]);

  // Following needs a device on the map: it starts once the selected one has a position.
  const hasPosition = selected !== undefined;
  useEffect(() => {
    devicesMap?.setFollow(follow && hasPosition);
  }, [devicesMap, follow, hasPosition]);

  // The name of a selected device that is not on the map (no position yet), for the simulator.
  const lookups = useEntityLookups();
  const selectedName = useDeviceNames(selectedId ? [selectedId] : []).get(selectedId ?? '') ?? null;

  useEffect(() => {
    if (devicesMap) devicesMap.simulating = simulating;
  }, [devicesMap, simulating]);

  useEffect(() => {
    devicesMap?.highlightGeofences(selected?.inside_geofence_ids ?? []);
  }, [devicesMap, selected?.inside_geofence_ids]);

  const choose = (id: string | null): void => {
    setQuery({ device: id, ...(id ? {} : { follow: null }) });
    if (id) devicesMap?.focus(id);
  };

  return (
    <main id="main" className={`map-page devices-page${simulating ? ' simulating' : ''}`}>
      <section className="panel" aria-labelledby="devices-title">
        <div className="page-head">
          <h1 id="devices-title">Devices</h1>
          <LiveStatus />
        </div>
        <p className="hint">
          The live map. <Link href="/devices/list">All devices as a list</Link>: search, sort, create.
        </p>
        <LoadSummary load={load} count={count} geofences={devicesMap?.geofences.size ?? 0} drawn={drawn} />
        <Notice kind="error">{load.error}</Notice>
        <EntityCombobox
          label="Find a device"
          placeholder="Name or external id"
          clearText="Clear selected device"
          value={selectedId}
          onChange={(id) => choose(id)}
          search={lookups.searchDevices}
          resolve={lookups.resolveDevice}
        />
        <Legend />
        {selectedId ? (
          <DeviceDetails
            deviceId={selectedId}
            live={selected}
            map={devicesMap}
            geofenceNames={devicesMap?.geofences.names ?? null}
            follow={follow}
            onFollowChange={(on) => setQuery({ follow: on ? '1' : null })}
            onClose={() => setQuery({ device: null, follow: null })}
          />
        ) : (
          <p className="hint">
            Select a device on the map (or reach it with the Tab key and press Enter), or find it by name.
          </p>
        )}
        <SimulatePanel
          deviceId={selectedId}
          deviceName={selected?.name ?? selectedName}
          workspaceHasDevices={count > 0}
          simulating={simulating}
          onSimulatingChange={setSimulating}
          clickHandler={simulateClick}
          map={devicesMap}
          onCreated={(id) => setQuery({ device: id })}
        />
      </section>
      <div
        className="map"
        ref={mapElement}
        data-testid="devices-map"
        data-ready={drawn ? 'true' : 'false'}
        data-devices={count}
      />
    </main>
  );
}

function LoadSummary({
  load,
  count,
  geofences,
  drawn,
}: {
  load: LoadState;
  count: number;
  geofences: number;
  drawn: boolean;
}) {
  let text: string;
  if (!load.done) {
    const part = (label: string, p: Progress | null): string =>
      p ? `${p.loaded.toLocaleString()} of ${p.total.toLocaleString()} ${label}` : `${label}…`;
    text = `Loading ${part('devices', load.devices)}, ${part('geofences', load.geofences)}`;
  } else {
    text = `${count.toLocaleString()} ${count === 1 ? 'device' : 'devices'} on the map · ${geofences.toLocaleString()} geofences`;
    if (load.truncated) text += ' (the server sent only part of the devices)';
  }
  return (
    <p className="lead" role="status" aria-busy={!drawn && !load.error}>
      {text}
    </p>
  );
}

function Legend() {
  return (
    <ul className="map-legend" aria-label="Map legend">
      <li className="legend-item">
        <span className="swatch swatch-device" aria-hidden="true" /> Device
      </li>
      <li className="legend-item">
        <span className="swatch swatch-inside" aria-hidden="true" /> Device inside a geofence
      </li>
      <li className="legend-item">
        <span className="swatch swatch-cluster" aria-hidden="true" /> Group of devices (select to zoom in)
      </li>
      <li className="legend-item">
        <span className="swatch swatch-cluster swatch-cluster-inside" aria-hidden="true" /> Group with devices
        inside a geofence
      </li>
    </ul>
  );
}

function parseView(value: string | null): { lat: number; lng: number; zoom: number } | null {
  const [lat, lng, zoom] = (value ?? '').split(',').map(Number);
  if (lat === undefined || lng === undefined || zoom === undefined) return null;
  if (![lat, lng, zoom].every(Number.isFinite) || Math.abs(lat) > 90 || zoom < 0 || zoom > 22) return null;
  return { lat, lng, zoom };
}
