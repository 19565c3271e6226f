/**
 * /devices/list: every device of the workspace as a table, one page of the API at a time (a
 * workspace of 10,000 devices costs the browser 50 rows), searched by name or external id and
 * sorted by the API (`q`, `sort`), with the search, the order and the page in the URL. A device is
 * created here too, and opens on its own page.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { setQuery, useLocation } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { CreateDeviceForm } from './CreateDeviceForm.tsx';
import { type DeviceSort, useDeviceList } from './devicesApi.ts';

/** A search is sent this long after the last keystroke: typing a name costs one request, not one a letter. */
const SEARCH_DELAY_MS = 300;

const SORTS: Array<{ value: DeviceSort; label: string; caption: string }> = [
  { value: '-created_at', label: 'Newest first', caption: 'newest first' },
  { value: 'created_at', label: 'Oldest first', caption: 'oldest first' },
  { value: 'name', label: 'Name, A to Z', caption: 'by name, A to Z' },
  { value: '-name', label: 'Name, Z to A', caption: 'by name, Z to A' },
];

export function DeviceList() {
  const id = useId();
  const { query } = useLocation();
  const q = (query.get('q') ?? '').trim();
  const sort = SORTS.find((s) => s.value === query.get('sort')) ?? (SORTS[0] as (typeof SORTS)[number]);
  const offset = offsetOf(query);
  const list = useDeviceList(q || undefined, sort.value, offset);
  useLastPageWhenPastEnd(list.data?.pagination, list.data?.results.length ?? 0);

  // What is typed goes to the URL (and so to the API) once the typing pauses; a search changed
  // from elsewhere (back, a link) replaces what the box holds.
  const [typed, setTyped] = useState(q);
  const sent = useRef(q);
  useEffect(() => {
    if (q === sent.current) return;
    sent.current = q;
    setTyped(q);
  }, [q]);
  useEffect(() => {
    if (typed.trim() === q) return;
    const timer = setTimeout(() => {
      sent.current = typed.trim();
      setQuery({ q: typed.trim() || null, offset: null });
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [typed, q]);

  const rows = list.data?.results ?? [];
  return (
    <main id="main" className="page devices-list">
      <div className="page-head">
        <h1>Devices</h1>
        <Link className="button-link" href="/devices">
          Live map
        </Link>
      </div>
      <p className="lead">
        Every device of the workspace. Open one to rename it, edit its metadata, connect a tracker or see its
        trail.
      </p>
      <CreateDeviceForm />
      <search className="list-controls" aria-label="Find devices">
        <div className="field inline-field">
          <label htmlFor={`${id}-q`}>Search</label>
          <input
            id={`${id}-q`}
            type="search"
            placeholder="Name or external id"
            maxLength={255}
            value={typed}
            onChange={(event) => setTyped(event.target.value)}
          />
        </div>
        <div className="field inline-field">
          <label htmlFor={`${id}-sort`}>Sort</label>
          <select
            id={`${id}-sort`}
            value={sort.value}
            onChange={(event) =>
              setQuery({
                sort: event.target.value === '-created_at' ? null : event.target.value,
                offset: null,
              })
            }
          >
            {SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </div>
      </search>
      <Notice kind="error">{failureMessage(list.error)}</Notice>
      {list.data === undefined ? (
        list.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : rows.length === 0 ? (
        <p role="status">{q ? `No device’s name or external id contains “${q}”.` : 'No devices yet.'}</p>
      ) : (
        <>
          <div className="table-wrap">
            <table className="devices-table">
              <caption className="visually-hidden">
                Devices{q ? ` matching “${q}”` : ''}, {sort.caption}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">External id</th>
                  <th scope="col">Last seen</th>
                  <th scope="col">Inside</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((device) => (
                  <tr key={device.id}>
                    <td>
                      <Link href={`/devices/${device.id}`}>{device.name}</Link>
                    </td>
                    <td>{device.external_id ? <code>{device.external_id}</code> : '—'}</td>
                    <td>
                      {device.last_seen_at ? (
                        <time dateTime={device.last_seen_at}>{formatTime(device.last_seen_at)}</time>
                      ) : (
                        'Never'
                      )}
                    </td>
                    <td>{insideText(device.inside_geofence_ids.length)}</td>
                    <td>
                      <time dateTime={device.created_at}>{formatTime(device.created_at)}</time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pagination={list.data.pagination} shown={rows.length} noun="devices" />
        </>
      )}
    </main>
  );
}

function insideText(count: number): string {
  if (count === 0) return '—';
  return count === 1 ? '1 geofence' : `${count} geofences`;
}
