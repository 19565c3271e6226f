/** /webhooks: the workspace's webhooks, paged, optionally only the enabled or disabled ones. */
import { useId } from 'react';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { setQuery, useLocation } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { useWebhooks } from './webhooksApi.ts';

export function WebhookList() {
  const id = useId();
  const { query } = useLocation();
  const enabled = query.get('enabled');
  const filter = enabled === 'true' || enabled === 'false' ? enabled : null;
  const offset = offsetOf(query);
  const list = useWebhooks(filter === null ? null : filter === 'true', offset);
  useLastPageWhenPastEnd(list.data?.pagination, list.data?.results.length ?? 0);

  return (
    <>
      <div className="page-head">
        <h1>Webhooks</h1>
        <Link className="button-link primary" href="/webhooks/new">
          New webhook
        </Link>
      </div>
      <p className="lead">
        Endpoints that receive your geofence events as signed HTTP requests, retried when they fail.
      </p>
      <div className="field inline-field">
        <label htmlFor={`${id}-enabled`}>Show</label>
        <select
          id={`${id}-enabled`}
          value={filter ?? ''}
          onChange={(event) => setQuery({ enabled: event.target.value || null, offset: null })}
        >
          <option value="">All webhooks</option>
          <option value="true">Enabled only</option>
          <option value="false">Disabled only</option>
        </select>
      </div>
      <Notice kind="error">{failureMessage(list.error)}</Notice>
      {list.data === undefined ? (
        list.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : list.data.results.length === 0 ? (
        <p>
          {filter === null
            ? 'No webhooks yet.'
            : `No ${filter === 'true' ? 'enabled' : 'disabled'} webhooks.`}
        </p>
      ) : (
        <>
          <div className="table-wrap">
            <table className="webhooks-table">
              <caption className="visually-hidden">Webhooks, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.data.results.map((hook) => (
                  <tr key={hook.id}>
                    <td>
                      <Link href={`/webhooks/${hook.id}`}>{hook.name}</Link>
                    </td>
                    <td className="url-cell">
                      <code>
                        {hook.method} {hook.url}
                      </code>
                    </td>
                    <td>{hook.events.map((e) => e.replace('geofence.', '')).join(', ')}</td>
                    <td>
                      <span className={`badge ${hook.enabled ? 'badge-success' : 'badge-off'}`}>
                        {hook.enabled ? 'Enabled' : 'Disabled'}
                      </span>
                    </td>
                    <td>
                      <time dateTime={hook.created_at}>{formatTime(hook.created_at)}</time>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pagination={list.data.pagination} shown={list.data.results.length} noun="webhooks" />
        </>
      )}
    </>
  );
}
