/**
 * The builder (/workflows/new, /workflows/{id}): name, trigger (event types and a geofence picked
 * by name or on the map) and 1..10 actions, each with its type's form. Templates preview live
 * against the sample event of a test run; problems found before saving and the server's 422
 * issues are shown next to their field.
 */
import { lazy, Suspense, useEffect, useId, useMemo, useState } from 'react';
import { api, errorMessage, type Schemas } from '../../api/client.ts';
import { Link } from '../../app/Link.tsx';
import { navigate } from '../../app/router.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { EntityCombobox } from '../../ui/EntityCombobox.tsx';
import { Notice } from '../../ui/forms.tsx';
import { ActionEditor } from './ActionEditor.tsx';
import { ACTION_SPECS, type ActionType } from './actionTypes.ts';
import {
  type Draft,
  draftOf,
  EVENT_TYPES,
  emptyDraft,
  type FieldProblems,
  newAction,
  problemsOfError,
  problemsUnder,
  toRequest,
  type Workflow,
} from './draft.ts';
import { type PreviewGeofence, sampleContext } from './preview.ts';
import { loadGeofence, loadWebhooks, resolveGeofence, searchGeofences } from './workflowApi.ts';

const TriggerMap = lazy(() => import('./TriggerMap.tsx'));
const MAX_ACTIONS = 10;

const EVENT_LABELS = { enter: 'Enter', exit: 'Exit', dwell: 'Dwell' } as const;

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
    void api
      .GET('/api/v1/workflows/{workflow_id}', {
        params: { path: { workflow_id: workflowId } },
        signal: abort.signal,
      })
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
        <BuilderForm
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

function BuilderForm({
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
  const id = useId();
  const [draft, setDraft] = useState(initial);
  const [problems, setProblems] = useState<FieldProblems>({});
  const [general, setGeneral] = useState<string[]>([]);
  const [notice, setNotice] = useState(initialNotice);
  const [busy, setBusy] = useState(false);
  // Someone else saved the workflow after this draft was made from it (HTTP 412).
  const [stale, setStale] = useState(false);
  const [mapOpen, setMapOpen] = useState(false);
  const [geofence, setGeofence] = useState<PreviewGeofence | null>(null);
  const [webhooks, setWebhooks] = useState<Schemas['Webhook'][] | null>(null);
  const [addType, setAddType] = useState<ActionType>('slack');
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
    const answer = workflowId
      ? await api.PATCH('/api/v1/workflows/{workflow_id}', {
          params: {
            path: { workflow_id: workflowId },
            ...(version === null ? {} : { header: { 'if-match': `"${version}"` } }),
          },
          body: request.body,
        })
      : await api.POST('/api/v1/workflows', { body: request.body });
    setBusy(false);
    if (answer.response.status === 412) {
      setProblems({});
      setGeneral([]);
      setStale(true);
      return;
    }
    if (answer.data) {
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
    const { data, error } = await api.POST('/api/v1/workflows/{workflow_id}/test', {
      params: { path: { workflow_id: workflowId } },
    });
    if (data) navigate(`/workflows/${workflowId}/runs/${data.run_id}`);
    else setGeneral([errorMessage(error)]);
  };

  const remove = async (): Promise<void> => {
    if (!workflowId) return;
    const { error } = await api.DELETE('/api/v1/workflows/{workflow_id}', {
      params: { path: { workflow_id: workflowId } },
    });
    if (error) setGeneral([errorMessage(error)]);
    else navigate('/workflows');
  };

  const moveAction = (index: number, delta: -1 | 1): void => {
    const actions = [...draft.actions];
    const [moved] = actions.splice(index, 1);
    if (!moved) return;
    actions.splice(index + delta, 0, moved);
    update({ actions });
    // Issues name positions: after a move they would point at the wrong action.
    setProblems({});
  };

  const problemCount = Object.keys(problems).length + general.length;
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
      {stale ? (
        <div className="notice notice-error" role="alert">
          <p>
            Someone else saved this workflow after you opened it, so your changes are not saved.{' '}
            <button type="button" onClick={onReload}>
              Load their version
            </button>{' '}
            (your edits on this page will be replaced; copy what you want to keep first).
          </p>
        </div>
      ) : null}
      {problemCount > 0 ? (
        <div className="notice notice-error" role="alert">
          <p>
            <strong>
              {problemCount === 1 ? 'One thing to fix' : `${problemCount} things to fix`} before saving:
            </strong>
          </p>
          <ul>
            {general.map((text) => (
              <li key={text}>{text}</li>
            ))}
            {Object.entries(problems).map(([key, text]) => (
              <li key={key}>
                {describeKey(key)}: {text}
              </li>
            ))}
          </ul>
        </div>
      ) : null}

      <section className="workflow-section" aria-labelledby={`${id}-trigger`}>
        <h2 id={`${id}-trigger`}>Trigger</h2>
        <div className="field">
          <label htmlFor={`${id}-name`}>Name</label>
          <input
            id={`${id}-name`}
            value={draft.name}
            maxLength={255}
            required
            aria-invalid={problems.name ? true : undefined}
            aria-describedby={problems.name ? `${id}-name-problem` : undefined}
            onChange={(event) => update({ name: event.target.value })}
          />
          {problems.name ? (
            <p id={`${id}-name-problem`} className="field-error">
              {problems.name}
            </p>
          ) : null}
        </div>
        <div className="field">
          <label htmlFor={`${id}-description`}>Description (optional)</label>
          <textarea
            id={`${id}-description`}
            rows={2}
            maxLength={2000}
            value={draft.description}
            onChange={(event) => update({ description: event.target.value })}
          />
        </div>
        <label className="check">
          <input
            type="checkbox"
            checked={draft.enabled}
            onChange={(event) => update({ enabled: event.target.checked })}
          />{' '}
          Enabled
        </label>
        <fieldset className="event-types" aria-describedby={`${id}-events-hint`}>
          <legend>When a device…</legend>
          {EVENT_TYPES.map((type) => (
            <label key={type} className="check">
              <input
                type="checkbox"
                checked={draft.eventTypes.includes(type)}
                onChange={(event) =>
                  update({
                    eventTypes: event.target.checked
                      ? EVENT_TYPES.filter((t) => t === type || draft.eventTypes.includes(t))
                      : draft.eventTypes.filter((t) => t !== type),
                  })
                }
              />{' '}
              {EVENT_LABELS[type]}
            </label>
          ))}
          <small id={`${id}-events-hint`} className="hint">
            Dwell fires once per visit, after the geofence’s dwell time. A test run uses the first one ticked.
          </small>
          {problems['trigger.event_types'] ? (
            <p className="field-error">{problems['trigger.event_types']}</p>
          ) : null}
        </fieldset>
        <EntityCombobox
          label="Geofence"
          placeholder="Search geofences by name"
          value={draft.geofenceId}
          onChange={(geofenceId) => update({ geofenceId })}
          search={searchGeofences}
          resolve={resolveGeofence}
          hint={problems['trigger.geofence_id'] ?? 'The geofence whose events start the workflow.'}
        />
        <button type="button" aria-expanded={mapOpen} onClick={() => setMapOpen((open) => !open)}>
          {mapOpen ? 'Hide the map' : 'Pick on a map'}
        </button>
        {mapOpen ? (
          <Suspense fallback={<p role="status">Loading the map…</p>}>
            <TriggerMap selected={draft.geofenceId} onPick={(geofenceId) => update({ geofenceId })} />
          </Suspense>
        ) : null}
      </section>

      <section className="workflow-section" aria-labelledby={`${id}-actions`}>
        <h2 id={`${id}-actions`}>Actions</h2>
        <p className="hint">
          Every action runs once per event, independently of the others, and is retried on failure.
          {context ? '' : ' Choose the geofence to see template previews.'}
        </p>
        {problems.actions ? <p className="field-error">{problems.actions}</p> : null}
        {draft.actions.map((action, index) => (
          <ActionEditor
            key={action.key}
            action={action}
            index={index}
            count={draft.actions.length}
            problems={problemsUnder(problems, `actions.${index}.`)}
            context={context}
            webhooks={webhooks}
            onChange={(changed) =>
              update({ actions: draft.actions.map((a) => (a.key === changed.key ? changed : a)) })
            }
            onMove={(delta) => moveAction(index, delta)}
            onRemove={() => {
              update({ actions: draft.actions.filter((a) => a.key !== action.key) });
              setProblems({});
            }}
          />
        ))}
        <div className="add-action">
          <div className="field">
            <label htmlFor={`${id}-add`}>New action type</label>
            <select
              id={`${id}-add`}
              value={addType}
              onChange={(event) => setAddType(event.target.value as ActionType)}
            >
              {ACTION_SPECS.map((spec) => (
                <option key={spec.type} value={spec.type}>
                  {spec.label}
                </option>
              ))}
            </select>
          </div>
          <button
            type="button"
            disabled={draft.actions.length >= MAX_ACTIONS}
            onClick={() => update({ actions: [...draft.actions, newAction(addType)] })}
          >
            Add action
          </button>
          {draft.actions.length >= MAX_ACTIONS ? (
            <span className="hint">A workflow has at most {MAX_ACTIONS} actions.</span>
          ) : null}
        </div>
      </section>

      <div className="button-row">
        <button type="submit" className="primary" disabled={busy}>
          {workflowId ? 'Save changes' : 'Create workflow'}
        </button>
      </div>
    </form>
  );
}

/** A field key (`actions.1.config.webhook_url`) as a reader would say it. */
function describeKey(key: string): string {
  const parts = key.split('.');
  if (parts[0] === 'actions' && parts[1] !== undefined) {
    const rest = parts.slice(2).filter((p) => p !== 'config');
    return `Action ${Number(parts[1]) + 1}${rest.length > 0 ? ` (${rest.join('.')})` : ''}`;
  }
  if (key === 'trigger.geofence_id') return 'Geofence';
  if (key === 'trigger.event_types') return 'Event types';
  return key.charAt(0).toUpperCase() + key.slice(1);
}
