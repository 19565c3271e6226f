/** /workflows/{id}/runs: the runs of one workflow, newest first, paged, filtered by status (in the URL). */
import { useId, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { navigate, setQuery, useLocation } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { StatusBadge } from '../../ui/StatusBadge.tsx';
import { specOf } from './actionTypes.ts';
import { testWorkflow, useWorkflow, useWorkflowRuns } from './workflowApi.ts';

const STATUSES = ['pending', 'success', 'failed'] as const;
type Status = (typeof STATUSES)[number];

export default function RunsPage({ workflowId }: { workflowId: string }) {
  const id = useId();
  const { query } = useLocation();
  const statusText = query.get('status');
  const status = STATUSES.find((s) => s === statusText) as Status | undefined;
  const offset = offsetOf(query);
  const [problem, setProblem] = useState<string | null>(null);
  const workflow = useWorkflow(workflowId);
  const runs = useWorkflowRuns(workflowId, status, offset);
  useLastPageWhenPastEnd(runs.data?.pagination, runs.data?.results.length ?? 0);

  const test = async (): Promise<void> => {
    const { data, error } = await testWorkflow(workflowId);
    if (data) navigate(`/workflows/${workflowId}/runs/${data.run_id}`);
    else setProblem(errorMessage(error));
  };

  const name = workflow.data?.name ?? 'Workflow';
  return (
    <main id="main" className="page workflows-page">
      <p className="breadcrumbs">
        <Link href="/workflows">Workflows</Link> › <Link href={`/workflows/${workflowId}`}>{name}</Link>
      </p>
      <div className="page-head">
        <h1>Runs of {name}</h1>
        <div className="button-row">
          <button type="button" onClick={() => void test()}>
            Test
          </button>
          <button type="button" onClick={() => void runs.refetch()}>
            Refresh
          </button>
        </div>
      </div>
      <Notice kind="error">{problem ?? failureMessage(workflow.error)}</Notice>
      <form className="filters" aria-label="Filter runs" onSubmit={(event) => event.preventDefault()}>
        <div className="field">
          <label htmlFor={`${id}-status`}>Status</label>
          <select
            id={`${id}-status`}
            value={status ?? ''}
            onChange={(event) => setQuery({ status: event.target.value || null, offset: null })}
          >
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
      </form>
      <Notice kind="error">{failureMessage(runs.error)}</Notice>
      {runs.data === undefined ? (
        runs.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : runs.data.results.length === 0 ? (
        <p>
          {status
            ? `No ${status} runs.`
            : 'No runs yet: they start when a trigger event happens, or with Test.'}
        </p>
      ) : (
        <div className="table-wrap">
          <table className="runs-table">
            <caption className="visually-hidden">Runs of {name}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Started</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Actions</th>
                <th scope="col">Finished</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.results.map((run) => (
                <tr key={run.id}>
                  <th scope="row">
                    <Link href={`/workflows/${workflowId}/runs/${run.id}`}>
                      <time dateTime={run.created_at}>{formatTime(run.created_at)}</time>
                    </Link>
                  </th>
                  <td>
                    {run.event_type}
                    {run.test ? <span className="badge badge-test">test</span> : null}
                  </td>
                  <td>
                    <StatusBadge status={run.status} />
                  </td>
                  <td>
                    <ul className="run-actions">
                      {run.actions.map((a) => (
                        <li key={a.position}>
                          {specOf(a.type).label}: {a.status}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>{run.finished_at ? formatTime(run.finished_at) : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {runs.data ? (
        <Pager pagination={runs.data.pagination} shown={runs.data.results.length} noun="runs" />
      ) : null}
    </main>
  );
}
