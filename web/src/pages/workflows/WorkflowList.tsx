/** /workflows: the workspace's workflows, newest first, paged, filtered by state (in the URL). */
import { useId } from 'react';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { setQuery, useLocation } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { useGeofenceNames } from '../events/entities.ts';
import { specOf } from './actionTypes.ts';
import { useWorkflows } from './workflowApi.ts';

export default function WorkflowList() {
  const id = useId();
  const { query } = useLocation();
  const enabledText = query.get('enabled');
  const enabled = enabledText === 'true' ? true : enabledText === 'false' ? false : undefined;
  const offset = offsetOf(query);
  const list = useWorkflows(enabled, offset);
  useLastPageWhenPastEnd(list.data?.pagination, list.data?.results.length ?? 0);
  const names = useGeofenceNames((list.data?.results ?? []).map((w) => w.trigger.geofence_id));
  return (
    <main id="main" className="page workflows-page">
      <div className="page-head">
        <h1>Workflows</h1>
        <Link className="button-link primary" href="/workflows/new">
          New workflow
        </Link>
      </div>
      <p className="lead">
        When a device enters, leaves or stays in a geofence, a workflow sends messages: Slack, Teams, Discord,
        e-mail, SMS, a webhook, AWS Lambda or SNS, or a row in your PostgreSQL database.
      </p>
      <form className="filters" aria-label="Filter workflows" onSubmit={(event) => event.preventDefault()}>
        <div className="field">
          <label htmlFor={`${id}-enabled`}>State</label>
          <select
            id={`${id}-enabled`}
            value={enabledText ?? ''}
            onChange={(event) => setQuery({ enabled: event.target.value || null, offset: null })}
          >
            <option value="">All workflows</option>
            <option value="true">Enabled</option>
            <option value="false">Disabled</option>
          </select>
        </div>
      </form>
      <Notice kind="error">{failureMessage(list.error)}</Notice>
      {list.data === undefined ? (
        list.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : list.data.results.length === 0 ? (
        <p>
          {enabled === undefined ? 'No workflows yet.' : 'No workflows match this filter.'}{' '}
          <Link href="/workflows/new">Create one</Link>.
        </p>
      ) : (
        <div className="table-wrap">
          <table className="workflows-table">
            <caption className="visually-hidden">Workflows, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Trigger</th>
                <th scope="col">Actions</th>
                <th scope="col">State</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span className="visually-hidden">Runs</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.results.map((w) => (
                <tr key={w.id}>
                  <th scope="row">
                    <Link href={`/workflows/${w.id}`}>{w.name}</Link>
                  </th>
                  <td>
                    {w.trigger.event_types.join(', ')} ·{' '}
                    {names.get(w.trigger.geofence_id) ?? `${w.trigger.geofence_id.slice(0, 8)}…`}
                  </td>
                  <td>{w.actions.map((a) => specOf(a.type).label).join(', ')}</td>
                  <td>{w.enabled ? 'Enabled' : 'Disabled'}</td>
                  <td>
                    <time dateTime={w.updated_at}>{formatTime(w.updated_at)}</time>
                  </td>
                  <td>
                    <Link href={`/workflows/${w.id}/runs`}>
                      Runs<span className="visually-hidden"> of {w.name}</span>
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data ? (
        <Pager pagination={list.data.pagination} shown={list.data.results.length} noun="workflows" />
      ) : null}
    </main>
  );
}
