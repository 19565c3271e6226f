/**
 * Workflows: the list (/workflows), the builder (/workflows/new, /workflows/{id}) and the runs
 * (/workflows/{id}/runs, /workflows/{id}/runs/{run_id}). The builder, with the template engine,
 * and the runs pages load on first use, so the list stays light.
 */
import { lazy, Suspense } from 'react';
import { useLocation } from '../../app/router.ts';
import WorkflowList from './WorkflowList.tsx';

const WorkflowBuilder = lazy(() => import('./WorkflowBuilder.tsx'));
const RunsPage = lazy(() => import('./RunsPage.tsx'));
const RunPage = lazy(() => import('./RunPage.tsx'));

export default function WorkflowsArea() {
  const { path } = useLocation();
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [, workflowId, section, runId] = parts;
  return <Suspense fallback={<p role="status">Loading…</p>}>{page(workflowId, section, runId)}</Suspense>;
}

function page(workflowId?: string, section?: string, runId?: string) {
  if (!workflowId) return <WorkflowList />;
  if (workflowId === 'new' && !section) return <WorkflowBuilder key="new" workflowId={null} />;
  if (!section) return <WorkflowBuilder key={workflowId} workflowId={workflowId} />;
  if (section === 'runs' && !runId) return <RunsPage key={workflowId} workflowId={workflowId} />;
  if (section === 'runs' && runId) return <RunPage key={runId} workflowId={workflowId} runId={runId} />;
  return (
    <main id="main" className="page">
      <h1>Not found</h1>
      <p>
        There is no such page. <a href="/workflows">Back to the workflows</a>.
      </p>
    </main>
  );
}
