/** Names of the devices of some events (an event carries only the device id), looked up once each. */
import { useEffect, useState } from 'react';
import type { Schemas } from '../../api/client.ts';
import { resolveDevice } from './entities.ts';

export function useDeviceNames(events: readonly Schemas['Event'][]): ReadonlyMap<string, string> {
  const [names, setNames] = useState<ReadonlyMap<string, string>>(new Map());
  const missing = [...new Set(events.map((e) => e.device_id))].filter((id) => !names.has(id));
  const key = missing.join(',');
  useEffect(() => {
    if (!key) return;
    let live = true;
    void Promise.all(key.split(',').map((id) => resolveDevice(id))).then((options) => {
      if (!live) return;
      setNames((previous) => {
        const next = new Map(previous);
        for (const option of options) if (option) next.set(option.id, option.label);
        return next;
      });
    });
    return () => {
      live = false;
    };
  }, [key]);
  return names;
}
