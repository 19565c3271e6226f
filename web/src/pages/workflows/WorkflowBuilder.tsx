/**
 * The builder (/workflows/new, /workflows/{id}): name, trigger (event types and a geofence picked
 * by name or on the map) and 1..10 actions, each with its type's form. Templates preview live
 * against the sample event of a test run; problems found before saving and the server's 422
 * issues are shown next to their field. This page reads the workflow and holds the saved
 * version; the form and its parts (WorkflowBuilderForm.tsx and beside it) do the editing.
 */
import { useEffect, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { Notice } from '../../ui/forms.tsx';
import { type Draft, draftOf, emptyDraft, type Workflow } from './draft.ts';
import { WorkflowBuilderForm } from './WorkflowBuilderForm.tsx';
import { loadWorkflow } from './workflowApi.ts';

export default function WorkflowBuilder({ workflowId }: { workflowId: string | null }) {
  const [saved, setSaved] = useState<Workflow | null>(null);
  const [draft, setDraft] = useState<Draft | null>(workflowId ? null : emptyDraft());
  const [loadError, setLoadError] = useState<string | null>(null);
  // Set after a save (also across the move from /workflows/new to the new workflow's address).
  const [justSaved, setJustSaved] = useState(() => new URLSearchParams(window.location.search).has('saved'));

  // `reloads` counts "Load their version" clicks: each reads the workflow again.
  const [reloads, setReloads] = useState(0);
  useEffect(() => {
    if (!workflowId) return;
    void reloads;
    const abort = new AbortController();
    void loadWorkflow(workflowId, abort.signal)
      .then(({ data, error }) => {
        if (abort.signal.aborted) return;
        if (data) {
          setSaved(data);
          setDraft(draftOf(data));
        } else setLoadError(errorMessage(error));
      })
      .catch(() => undefined);
    return () => abort.abort();
  }, [workflowId, reloads]);

  const title = workflowId ? (saved?.name ?? 'Workflow') : 'New workflow';
  return (
    <main id="main" className="page workflows-page">
      <p className="breadcrumbs">
        <Link href="/workflows">Workflows</Link>
      </p>
      <h1>{title}</h1>
      {loadError ? <Notice kind="error">{loadError}</Notice> : null}
      {draft ? (
        <WorkflowBuilderForm
          key={saved ? `${saved.id}:${saved.version}` : 'new'}
          workflowId={workflowId}
          version={saved?.version ?? null}
          onReload={() => {
            setJustSaved(false);
            setReloads((n) => n + 1);
          }}
          initial={draft}
          initialNotice={justSaved ? 'Workflow saved.' : null}
          onSaved={(workflow) => {
            setJustSaved(true);
            setSaved(workflow);
            setDraft(draftOf(workflow));
            if (!workflowId) navigate(`/workflows/${workflow.id}?saved=1`, { replace: true });
          }}
        />
      ) : loadError ? null : (
        <p role="status">Loading…</p>
      )}
    </main>
  );
}
