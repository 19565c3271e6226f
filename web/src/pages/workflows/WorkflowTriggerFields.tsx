/**
 * The trigger part of the workflow builder: name, description, enabled, the event types and the
 * geofence (picked by name, or on a map loaded only when asked for). Its own part so the builder
 * form keeps to state and saving.
 */
import { lazy, Suspense, useId, useState } from 'react';
import { EntityCombobox } from '../../ui/EntityCombobox.tsx';
import { type Draft, EVENT_TYPES, type FieldProblems } from './draft.ts';
import { resolveGeofence, searchGeofences } from './workflowApi.ts';
import { EVENT_LABELS, withEventType } from './workflowBuilderState.ts';

const TriggerMap = lazy(() => import('./TriggerMap.tsx'));

export function WorkflowTriggerFields({
  draft,
  problems,
  onChange,
}: {
  draft: Draft;
  problems: FieldProblems;
  onChange(change: Partial<Draft>): void;
}) {
  const id = useId();
  const [mapOpen, setMapOpen] = useState(false);
  return (
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
          onChange={(event) => onChange({ name: event.target.value })}
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
          onChange={(event) => onChange({ description: event.target.value })}
        />
      </div>
      <label className="check">
        <input
          type="checkbox"
          checked={draft.enabled}
          onChange={(event) => onChange({ enabled: event.target.checked })}
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
                onChange({ eventTypes: withEventType(draft.eventTypes, type, event.target.checked) })
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
        onChange={(geofenceId) => onChange({ geofenceId })}
        search={searchGeofences}
        resolve={resolveGeofence}
        hint={problems['trigger.geofence_id'] ?? 'The geofence whose events start the workflow.'}
      />
      <button type="button" aria-expanded={mapOpen} onClick={() => setMapOpen((open) => !open)}>
        {mapOpen ? 'Hide the map' : 'Pick on a map'}
      </button>
      {mapOpen ? (
        <Suspense fallback={<p role="status">Loading the map…</p>}>
          <TriggerMap selected={draft.geofenceId} onPick={(geofenceId) => onChange({ geofenceId })} />
        </Suspense>
      ) : null}
    </section>
  );
}
