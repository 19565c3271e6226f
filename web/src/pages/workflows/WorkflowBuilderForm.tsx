/**
 * The builder's form for one draft: its state, the save (new, or If-Match on the version the draft
 * was made from), the test run and the deletion. The trigger and actions parts, the notices and
 * the decisions (workflowBuilderState.ts) live beside it.
 */
import { useEffect, useMemo, useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { useForgetDeleted, useInvalidate } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { Notice } from '../../ui/forms.tsx';
import { type Draft, type FieldProblems, problemsOfError, toRequest, type Workflow } from './draft.ts';
import { type PreviewGeofence, sampleContext } from './preview.ts';
import { WorkflowActionsList } from './WorkflowActionsList.tsx';
import { ProblemSummary, StaleNotice } from './WorkflowBuilderNotices.tsx';
import { WorkflowTriggerFields } from './WorkflowTriggerFields.tsx';
import {
  deleteWorkflow,
  loadGeofence,
  loadWebhooks,
  saveWorkflow,
  testWorkflow,
  workflowKeys,
} from './workflowApi.ts';

export function WorkflowBuilderForm({
  workflowId,
  version,
  onReload,
  initial,
  initialNotice,
  onSaved,
}: {
  workflowId: string | null;
  /** The version the draft was made from: a save applies only to it (If-Match). */
  version: number | null;
  /** Reads the workflow again, replacing this draft. */
  onReload(): void;
  initial: Draft;
  initialNotice: string | null;
  onSaved(workflow: Workflow): void;
}) {
  const [draft, setDraft] = useState(initial);
  const [problems, setProblems] = useState<FieldProblems>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [notice, setNotice] = useState(initialNotice);
  const [busy, setBusy] = useState(false);
  const invalidate = useInvalidate();
  const forgetDeleted = useForgetDeleted();
  // Someone else saved the workflow after this draft was made from it (HTTP 412).
  const [stale, setStale] = useState(false);
  const [geofence, setGeofence] = useState<PreviewGeofence | null>(null);
  const [webhooks, setWebhooks] = useState<Schemas['Webhook'][] | null>(null);
  const dirty = JSON.stringify(draft) !== JSON.stringify(initial);

  const update = (change: Partial<Draft>): void => {
    setDraft((d) => ({ ...d, ...change }));
    setNotice(null);
  };

  // The trigger geofence's name, metadata and bounding box make the preview's sample event.
  useEffect(() => {
    if (!draft.geofenceId) {
      setGeofence(null);
      return;
    }
    const abort = new AbortController();
    void loadGeofence(draft.geofenceId, abort.signal)
      .then((found) => !abort.signal.aborted && setGeofence(found))
      .catch(() => undefined);
    return () => abort.abort();
  }, [draft.geofenceId]);

  const needsWebhooks = draft.actions.some((a) => a.type === 'webhook');
  useEffect(() => {
    if (!needsWebhooks || webhooks !== null) return;
    void loadWebhooks()
      .then(setWebhooks)
      .catch((failure: Error) => setGeneral([`The webhooks could not be listed: ${failure.message}`]));
  }, [needsWebhooks, webhooks]);

  const context = useMemo(
    () =>
      geofence
        ? sampleContext(geofence, draft.eventTypes, { id: workflowId ?? '', name: draft.name }, new Date())
        : null,
    [geofence, draft.eventTypes, draft.name, workflowId],
  );

  const save = async (): Promise<void> => {
    setNotice(null);
    const request = toRequest(draft);
    if ('problems' in request) {
      setProblems(request.problems);
      setGeneral([]);
      return;
    }
    setBusy(true);
    // Secrets left out are kept from the action at the same position of the version the save applies
    // to: it must be the version this draft was made from, or one action could get another's secret.
    const answer = await saveWorkflow(workflowId, version, request.body);
    setBusy(false);
    if (answer.response.status === 412) {
      setProblems({});
      setGeneral([]);
      setStale(true);
      return;
    }
    if (answer.data) {
      invalidate(workflowKeys.all);
      setProblems({});
      setGeneral([]);
      onSaved(answer.data);
      return;
    }
    const found = problemsOfError(answer.error);
    setProblems(found.fields);
    setGeneral(found.general);
  };

  const test = async (): Promise<void> => {
    if (!workflowId) return;
    const { data, error } = await testWorkflow(workflowId);
    if (data) navigate(`/workflows/${workflowId}/runs/${data.run_id}`);
    else setGeneral([errorMessage(error)]);
  };

  const remove = async (): Promise<void> => {
    if (!workflowId) return;
    const { error } = await deleteWorkflow(workflowId);
    if (error) setGeneral([errorMessage(error)]);
    else {
      forgetDeleted(workflowKeys.all);
      navigate('/workflows');
    }
  };

  return (
    <form
      className="workflow-form"
      aria-label="Workflow"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      {workflowId ? (
        <div className="button-row workflow-tools">
          <Link className="button-link" href={`/workflows/${workflowId}/runs`}>
            Runs
          </Link>
          <button type="button" onClick={() => void test()} disabled={dirty}>
            Test
          </button>
          <ConfirmButton danger question="Delete this workflow and its runs?" onConfirm={remove}>
            Delete workflow
          </ConfirmButton>
          {dirty ? <span className="hint">Save first: a test runs the saved workflow.</span> : null}
        </div>
      ) : null}
      <Notice kind="success">{notice}</Notice>
      {stale ? <StaleNotice onReload={onReload} /> : null}
      <ProblemSummary general={general} problems={problems} actions={draft.actions} />

      <WorkflowTriggerFields draft={draft} problems={problems} onChange={update} />

      <WorkflowActionsList
        actions={draft.actions}
        problems={problems}
        context={context}
        webhooks={webhooks}
        onChange={(actions) => update({ actions })}
        onPositionsChanged={() => setProblems({})}
      />

      <div className="button-row">
        <button type="submit" className="primary" disabled={busy}>
          {workflowId ? 'Save changes' : 'Create workflow'}
        </button>
      </div>
    </form>
  );
}
