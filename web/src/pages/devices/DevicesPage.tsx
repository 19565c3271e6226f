/**
 * Devices. The area gets every path under /devices and picks the sub-page here: /devices (the live
 * map, where the dashboard's links to a device land), /devices/list (every device, searched, sorted
 * and paged through the API) and /devices/{id} (one device: rename, metadata, tokens, tracking
 * session, trail).
 */
import { useLocation } from '../../app/router.ts';
import { DeviceList } from './DeviceList.tsx';
import { DevicePage } from './DevicePage.tsx';
import { DevicesMapPage } from './DevicesMapPage.tsx';

export default function DevicesArea() {
  const { path } = useLocation();
  const parts = path
    .replace(/^\/devices\/?/, '')
    .replace(/\/$/, '')
    .split('/');
  const [first = '', ...more] = parts;
  if (more.length > 0) return <NotFound />;
  if (first === '') return <DevicesMapPage />;
  if (first === 'list') return <DeviceList />;
  return <DevicePage key={first} id={decodeURIComponent(first)} />;
}

function NotFound() {
  return (
    <main id="main" className="page">
      <h1>Page not found</h1>
      <p>There is no devices page at this address.</p>
    </main>
  );
}
