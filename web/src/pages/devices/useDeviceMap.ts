/**
 * The device page's map: the devices map (map/devicesMap.ts) holding this one device, selected,
 * moved by the live stream, so its trail, follow mode and keyboard marker work as on the live map.
 */
import { type RefObject, useEffect, useRef, useState } from 'react';
import type { Schemas } from '../../api/client.ts';
import { useStreamTopic } from '../../live/useStream.ts';
import { createBaseMap } from '../../map/baseMap.ts';
import { type DeviceState, DevicesMap } from '../../map/devicesMap.ts';
import { fromDevice, fromStream } from './devicesData.ts';

export function useDeviceMap(
  element: RefObject<HTMLDivElement | null>,
  device: Schemas['Device'] | null,
): { map: DevicesMap | null; live: DeviceState | undefined } {
  const [map, setMap] = useState<DevicesMap | null>(null);
  const [live, setLive] = useState<DeviceState | undefined>(undefined);
  const mapRef = useRef<DevicesMap | null>(null);
  const ready = device !== null;
  const deviceRef = useRef(device);
  deviceRef.current = device;

  // Created once the device is known (its position is the first view), once per page visit.
  useEffect(() => {
    const container = element.current;
    const first = deviceRef.current;
    if (!container || !ready || !first) return;
    let created: DevicesMap | null = null;
    let cancelled = false;
    void createBaseMap(container, `Map of ${first.name}`).then((base) => {
      if (cancelled) {
        base.map.remove();
        return;
      }
      created = new DevicesMap(base, {
        onDeviceClick: () => undefined,
        onSimulateClick: () => undefined,
        onSelectedChange: (state) => setLive(state ? { ...state } : undefined),
        onCountChange: () => undefined,
        onDrawn: () => undefined,
      });
      created.setDevices(first.last_location ? [fromDevice(first)] : [], true);
      created.select(first.id);
      created.focus(first.id, 14);
      mapRef.current = created;
      setMap(created);
    });
    return () => {
      cancelled = true;
      created?.destroy();
      created?.map.remove();
      mapRef.current = null;
    };
  }, [element, ready]);

  useStreamTopic('locations', (message) => {
    if (message.device_id === deviceRef.current?.id) mapRef.current?.queue(fromStream(message));
  });

  return { map, live };
}
