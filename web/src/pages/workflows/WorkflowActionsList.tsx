/**
 * The actions part of the workflow builder: each action's form in order, and a type picker with
 * "Add action" (up to MAX_ACTIONS). It moves the focus where a keyboard reader expects it: into a
 * new action's first field, and to "Add action" when the Remove button pressed goes away.
 */
import { useId, useRef, useState } from 'react';
import type { Schemas } from '../../api/client.ts';
import { ActionEditor } from './ActionEditor.tsx';
import { ACTION_SPECS, type ActionType } from './actionTypes.ts';
import { type DraftAction, type FieldProblems, newAction, problemsUnder } from './draft.ts';
import type { TemplateContext } from './preview.ts';
import { MAX_ACTIONS, movedAction } from './workflowBuilderState.ts';

export function WorkflowActionsList({
  actions,
  problems,
  context,
  webhooks,
  onChange,
  onPositionsChanged,
}: {
  actions: DraftAction[];
  problems: FieldProblems;
  /** The sample event's context for template previews, once the trigger geofence is known. */
  context: TemplateContext | null;
  webhooks: Schemas['Webhook'][] | null;
  onChange(actions: DraftAction[]): void;
  /** An action moved or went: problems name positions, so they would point at the wrong action. */
  onPositionsChanged(): void;
}) {
  const id = useId();
  const [addType, setAddType] = useState<ActionType>('slack');
  /** The action just added: its form takes the focus (its first field) when it appears. */
  const [added, setAdded] = useState<number | null>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  return (
    <section className="workflow-section" aria-labelledby={`${id}-actions`}>
      <h2 id={`${id}-actions`}>Actions</h2>
      <p className="hint">
        Every action runs once per event, independently of the others, and is retried on failure.
        {context ? '' : ' Choose the geofence to see template previews.'}
      </p>
      {problems.actions ? <p className="field-error">{problems.actions}</p> : null}
      {actions.map((action, index) => (
        <ActionEditor
          key={action.key}
          focusFirstField={action.key === added}
          action={action}
          index={index}
          count={actions.length}
          problems={problemsUnder(problems, `actions.${index}.`)}
          context={context}
          webhooks={webhooks}
          onChange={(changed) => onChange(actions.map((a) => (a.key === changed.key ? changed : a)))}
          onMove={(delta) => {
            const moved = movedAction(actions, index, delta);
            if (!moved) return;
            onChange(moved);
            onPositionsChanged();
          }}
          onRemove={() => {
            onChange(actions.filter((a) => a.key !== action.key));
            onPositionsChanged();
            // Its Remove button goes with it: the reader goes on at "Add action".
            addButton.current?.focus();
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
          ref={addButton}
          type="button"
          disabled={actions.length >= MAX_ACTIONS}
          onClick={() => {
            const action = newAction(addType);
            setAdded(action.key);
            onChange([...actions, action]);
          }}
        >
          Add action
        </button>
        {actions.length >= MAX_ACTIONS ? (
          <span className="hint">A workflow has at most {MAX_ACTIONS} actions.</span>
        ) : null}
      </div>
    </section>
  );
}
