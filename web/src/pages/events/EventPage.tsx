/**
 * /events/{id}: one geofence event — where it happened on a map, the payload its receivers got, and
 * every webhook delivery and workflow run it caused, each leading to its own page.
 */
import './events.css';
import type { UseQueryResult } from '@tanstack/react-query';
import { lazy, type ReactNode, Suspense, useMemo } from 'react';
import type { Schemas } from '../../api/client.ts';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { formatPosition, formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { ScrollRegion } from '../../ui/ScrollRegion.tsx';
import { StatusBadge } from '../../ui/StatusBadge.tsx';
import { ORIGIN_LABELS } from '../webhooks/types.ts';
import { useWebhookNames } from '../webhooks/webhooksApi.ts';
import { useDeviceNames } from './entities.ts';
import { JOBS_SHOWN, useEvent, useEventDeliveries, useEventPayload, useEventRuns } from './eventApi.ts';

const EventMap = lazy(() => import('./EventMap.tsx'));

type Delivery = Schemas['Delivery'];
type Run = Schemas['EventWorkflowRun'];

export function EventPage({ id }: { id: string }) {
  const event = useEvent(id);
  const payload = useEventPayload(id);
  const deliveries = useEventDeliveries(id);
  const runs = useEventRuns(id);
  const e = event.data;
  const devices = useDeviceNames(e ? [e.device_id] : []);
  // Without names the links show the deliveries' URLs: a failure there is not worth a word.
  const hooks = useWebhookNames();
  const webhooks = useMemo(() => new Map([...hooks.values()].map((w) => [w.id, w.name])), [hooks]);

  if (e === undefined)
    return (
      <main id="main" className="page event-page">
        <BackLink />
        <h1>Event</h1>
        {event.error ? (
          <Notice kind="error">{failureMessage(event.error)}</Notice>
        ) : (
          <p role="status">Loading…</p>
        )}
      </main>
    );
  return (
    <main id="main" className="page event-page">
      <BackLink />
      <div className="page-head">
        <h1>
          <span className={`event-type event-${e.event_type}`}>{e.event_type}</span> {e.geofence_name}
        </h1>
      </div>
      <div className="event-overview">
        <dl className="facts">
          <dt>Time</dt>
          <dd>
            <time dateTime={e.occurred_at}>{formatTime(e.occurred_at)}</time>
          </dd>
          <dt>Device</dt>
          <dd>
            <Link href={`/devices?device=${encodeURIComponent(e.device_id)}`}>
              {devices.get(e.device_id) ?? e.device_id}
            </Link>{' '}
            (user <code>{e.user_id}</code>)
          </dd>
          <dt>Geofence</dt>
          <dd>
            <Link href={`/geofences?selected=${encodeURIComponent(e.geofence_id)}`}>{e.geofence_name}</Link>
          </dd>
          <dt>Point</dt>
          <dd className="coords">{formatPosition([...e.point.coordinates].reverse())} (lat, lng)</dd>
          <dt>Event id</dt>
          <dd>
            <code>{e.event_id}</code>
          </dd>
          <dt>Recorded</dt>
          <dd>{formatTime(e.created_at)}</dd>
        </dl>
        <Suspense fallback={<p role="status">Loading the map…</p>}>
          <EventMap point={e.point.coordinates} geofenceId={e.geofence_id} geofenceName={e.geofence_name} />
        </Suspense>
      </div>

      <section aria-labelledby="payload-title">
        <h2 id="payload-title">Payload</h2>
        <p className="hint">
          The body this event's webhook deliveries send; each adds its own <code>id</code>, its idempotency
          key.
        </p>
        {payload.data === undefined ? (
          payload.error ? (
            <Notice kind="error">{failureMessage(payload.error)}</Notice>
          ) : (
            <p role="status">Loading…</p>
          )
        ) : (
          <ScrollRegion label="Payload of this event" className="payload-box">
            {JSON.stringify(payload.data, null, 2)}
          </ScrollRegion>
        )}
      </section>

      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Webhook deliveries</h2>
        <JobList resource={deliveries} none="No webhook delivery was made for this event.">
          {(items) => <DeliveryTable deliveries={items} webhooks={webhooks} />}
        </JobList>
      </section>

      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Workflow runs</h2>
        <JobList resource={runs} none="No workflow ran for this event.">
          {(items) => <RunTable runs={items} />}
        </JobList>
      </section>
    </main>
  );
}

function BackLink() {
  return (
    <p className="back-link">
      <Link href="/events">← All events</Link>
    </p>
  );
}

/** A list section's states: loading, refused (e.g. a missing scope), empty, or its table. */
function JobList<T>({
  resource,
  none,
  children,
}: {
  resource: UseQueryResult<{ results: T[]; pagination: { total: number } }>;
  none: string;
  children: (items: T[]) => ReactNode;
}) {
  const page = resource.data;
  if (page === undefined)
    return resource.error ? (
      <Notice kind="error">{failureMessage(resource.error)}</Notice>
    ) : (
      <p role="status">Loading…</p>
    );
  if (page.results.length === 0) return <p>{none}</p>;
  return (
    <>
      {children(page.results)}
      {page.pagination.total > page.results.length ? (
        <p className="hint">
          The {JOBS_SHOWN} newest of {page.pagination.total.toLocaleString()}.
        </p>
      ) : null}
    </>
  );
}

function DeliveryTable({
  deliveries,
  webhooks,
}: {
  deliveries: Delivery[];
  webhooks: ReadonlyMap<string, string>;
}) {
  return (
    <div className="table-wrap">
      <table className="event-jobs">
        <caption className="visually-hidden">Webhook deliveries of this event, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Webhook</th>
            <th scope="col">Origin</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last response</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id}>
              <td>
                <Link href={`/webhooks/deliveries/${encodeURIComponent(d.id)}`}>
                  {d.webhook_id === null ? 'Deleted webhook' : (webhooks.get(d.webhook_id) ?? d.url)}
                </Link>
              </td>
              <td>{ORIGIN_LABELS[d.origin]}</td>
              <td>
                <StatusBadge status={d.status} />
              </td>
              <td>{d.attempt_count}</td>
              <td>{d.response_status_code ?? '—'}</td>
              <td>
                <time dateTime={d.created_at}>{formatTime(d.created_at)}</time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function RunTable({ runs }: { runs: Run[] }) {
  return (
    <div className="table-wrap">
      <table className="event-jobs">
        <caption className="visually-hidden">Workflow runs of this event, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Workflow</th>
            <th scope="col">Status</th>
            <th scope="col">Started</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id}>
              <td>
                <Link
                  href={`/workflows/${encodeURIComponent(r.workflow_id)}/runs/${encodeURIComponent(r.id)}`}
                >
                  {r.workflow_name}
                </Link>
              </td>
              <td>
                <StatusBadge status={r.status} />
              </td>
              <td>
                <time dateTime={r.created_at}>{formatTime(r.created_at)}</time>
              </td>
              <td>
                {r.finished_at ? <time dateTime={r.finished_at}>{formatTime(r.finished_at)}</time> : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
