/**
 * What the workflow builder says above its fields after a save that did not go through: that
 * someone else saved meanwhile (HTTP 412, with a way to load their version), or the problems to
 * fix, each named as the form names its field.
 */
import type { DraftAction, FieldProblems } from './draft.ts';
import { describeKey } from './workflowBuilderState.ts';

export function StaleNotice({ onReload }: { onReload(): void }) {
  return (
    <div className="notice notice-error" role="alert">
      <p>
        Someone else saved this workflow after you opened it, so your changes are not saved.{' '}
        <button type="button" onClick={onReload}>
          Load their version
        </button>{' '}
        (your edits on this page will be replaced; copy what you want to keep first).
      </p>
    </div>
  );
}

export function ProblemSummary({
  general,
  problems,
  actions,
}: {
  /** Problems of no field (or of a field the form does not show). */
  general: string[];
  problems: FieldProblems;
  /** The draft's actions, to name an action's field by its label. */
  actions: readonly DraftAction[];
}) {
  const problemCount = Object.keys(problems).length + general.length;
  if (problemCount === 0) return null;
  return (
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
            {describeKey(key, actions)}: {text}
          </li>
        ))}
      </ul>
    </div>
  );
}
