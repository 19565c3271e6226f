/**
 * /workflows/{id}/runs/{run_id}: one run with every attempt of every action (time, duration,
 * outcome, error or what the target answered). Refreshed every few seconds while it is pending;
 * a failed run offers "Retry failed actions".
 */
import { useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { failureMessage } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { ScrollRegion } from '../../ui/ScrollRegion.tsx';
import { StatusBadge } from '../../ui/StatusBadge.tsx';
import { specOf } from './actionTypes.ts';
import { formatDuration } from './runStatus.tsx';
import { retryWorkflowRun, testWorkflow, useWorkflow, useWorkflowRun } from './workflowApi.ts';

type ActionRun = Schemas['WorkflowRunDetail']['actions'][number];

export default function RunPage({ workflowId, runId }: { workflowId: string; runId: string }) {
  const [problem, setProblem] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const workflow = useWorkflow(workflowId);
  const run = useWorkflowRun(workflowId, runId);
  const pending = run.data?.status === 'pending';
  const reload = (): void => void run.refetch();

  const retry = async (): Promise<void> => {
    setBusy(true);
    const { data, error } = await retryWorkflowRun(workflowId, runId);
    setBusy(false);
    if (data) {
      setProblem(null);
      setNotice('The failed actions are queued again.');
      reload();
    } else setProblem(errorMessage(error));
  };

  const test = async (): Promise<void> => {
    const { data, error } = await testWorkflow(workflowId);
    if (data) {
      setNotice(null);
      navigate(`/workflows/${workflowId}/runs/${data.run_id}`);
    } else setProblem(errorMessage(error));
  };

  const name = workflow.data?.name ?? 'Workflow';
  const data = run.data;
  return (
    <main id="main" className="page workflows-page">
      <p className="breadcrumbs">
        <Link href="/workflows">Workflows</Link> › <Link href={`/workflows/${workflowId}`}>{name}</Link> ›{' '}
        <Link href={`/workflows/${workflowId}/runs`}>Runs</Link>
      </p>
      <h1>Run of {name}</h1>
      <Notice kind="error">{problem ?? failureMessage(run.error)}</Notice>
      <Notice kind="success">{notice}</Notice>
      {data === undefined ? (
        run.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <dl className="run-facts">
            <dt>Status</dt>
            <dd data-testid="run-status">
              <StatusBadge status={data.status} />
              {pending ? <span className="hint"> (refreshing)</span> : null}
            </dd>
            <dt>Event</dt>
            <dd>
              {data.event_type}
              {data.test ? <span className="badge badge-test">test</span> : null}
            </dd>
            <dt>Event id</dt>
            <dd>
              <code>{data.event_id}</code>
            </dd>
            <dt>Started</dt>
            <dd>
              <time dateTime={data.created_at}>{formatTime(data.created_at)}</time>
            </dd>
            <dt>Finished</dt>
            <dd>{data.finished_at ? formatTime(data.finished_at) : '—'}</dd>
          </dl>
          <div className="button-row">
            {data.status === 'failed' ? (
              <button type="button" className="primary" disabled={busy} onClick={() => void retry()}>
                Retry failed actions
              </button>
            ) : null}
            <button type="button" onClick={() => void test()}>
              Test
            </button>
            <button type="button" onClick={reload}>
              Refresh
            </button>
          </div>
          {data.actions.map((action) => (
            <ActionSection key={action.position} action={action} />
          ))}
        </>
      )}
    </main>
  );
}

function ActionSection({ action }: { action: ActionRun }) {
  const title = `Action ${action.position + 1}: ${specOf(action.type).label}`;
  const headingId = `action-${action.position}`;
  return (
    <section className="run-action" aria-labelledby={headingId}>
      <h2 id={headingId}>
        {title} <StatusBadge status={action.status} />
      </h2>
      <p className="hint">
        {action.attempt_count} {action.attempt_count === 1 ? 'attempt' : 'attempts'}
        {action.next_retry_at ? ` · next attempt ${formatTime(action.next_retry_at)}` : ''}
        {action.finished_at ? ` · finished ${formatTime(action.finished_at)}` : ''}
        {action.delivery_id ? ` · delivery ${action.delivery_id}` : ''}
      </p>
      {action.error_message ? <p className="run-error">{action.error_message}</p> : null}
      {action.attempts.length === 0 ? (
        <p>No attempt yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="attempts-table">
            <caption className="visually-hidden">Attempts of {title}</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Time</th>
                <th scope="col">Duration</th>
                <th scope="col">Outcome</th>
                <th scope="col">Error or answer</th>
              </tr>
            </thead>
            <tbody>
              {action.attempts.map((attempt) => (
                <tr key={attempt.n}>
                  <th scope="row">{attempt.n}</th>
                  <td>
                    <time dateTime={attempt.started_at}>{formatTime(attempt.started_at)}</time>
                  </td>
                  <td>{formatDuration(attempt.duration_ms)}</td>
                  <td>
                    {attempt.error_message ? 'failed' : 'ok'}
                    {attempt.response_status_code !== null ? ` (HTTP ${attempt.response_status_code})` : ''}
                  </td>
                  <td className="excerpt">
                    {attempt.error_message ? <p className="run-error">{attempt.error_message}</p> : null}
                    {attempt.response_excerpt ? (
                      <ScrollRegion label={`Answer to attempt ${attempt.n}`} className="excerpt-box">
                        {attempt.response_excerpt}
                      </ScrollRegion>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
