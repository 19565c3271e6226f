/** One action of the builder: its type's form, and buttons to move it or take it out. */
import { useEffect, useId, useRef } from 'react';
import type { Schemas } from '../../api/client.ts';
import { firstField } from '../../ui/focus.ts';
import { type FieldSpec, specOf } from './actionTypes.ts';
import type { DraftAction, FieldProblems } from './draft.ts';
import { SecretField, TemplateField, TextField } from './fields.tsx';
import { previewText, type TemplateContext } from './preview.ts';

interface Props {
  action: DraftAction;
  index: number;
  count: number;
  problems: FieldProblems;
  /** The sample event's context, once the trigger geofence is known. */
  context: TemplateContext | null;
  webhooks: Schemas['Webhook'][] | null;
  /** A newly added action: its first field takes the focus when the form appears. */
  focusFirstField?: boolean;
  onChange(action: DraftAction): void;
  onMove(delta: -1 | 1): void;
  onRemove(): void;
}

export function ActionEditor({
  action,
  index,
  count,
  problems,
  context,
  webhooks,
  focusFirstField = false,
  onChange,
  onMove,
  onRemove,
}: Props) {
  const card = useRef<HTMLFieldSetElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, when the new action's form appears
  useEffect(() => {
    if (focusFirstField) firstField(card.current)?.focus();
  }, []);
  const spec = specOf(action.type);
  const n = index + 1;
  const set = (field: string, value: string): void =>
    onChange({ ...action, values: { ...action.values, [field]: value } });
  const general = [problems.type, problems.config, problems[''], problemsOutsideFields(problems, spec.fields)]
    .filter(Boolean)
    .join('; ');
  return (
    <fieldset className="action-card" ref={card}>
      <legend>
        Action {n}: {spec.label}
      </legend>
      {general ? (
        <p className="field-error" role="alert">
          {general}
        </p>
      ) : null}
      {spec.fields.map((field) => {
        const value = action.values[field.name] ?? '';
        const problem = fieldProblem(problems, field.name);
        if (field.kind === 'secret')
          return (
            <SecretField
              key={field.name}
              spec={field}
              value={value}
              mask={action.masked[field.name]}
              problem={problem}
              onChange={(v) => set(field.name, v)}
            />
          );
        if (field.kind === 'template')
          return (
            <TemplateField
              key={field.name}
              spec={field}
              value={value}
              problem={problem}
              preview={
                context
                  ? previewText(action.type, field.name, value, context, field.escaping ?? 'text')
                  : null
              }
              onChange={(v) => set(field.name, v)}
            />
          );
        if (field.kind === 'webhook')
          return (
            <WebhookSelect
              key={field.name}
              spec={field}
              value={value}
              problem={problem}
              webhooks={webhooks}
              onChange={(v) => set(field.name, v)}
            />
          );
        return (
          <TextField
            key={field.name}
            spec={field}
            value={value}
            problem={problem}
            onChange={(v) => set(field.name, v)}
          />
        );
      })}
      <div className="button-row action-buttons">
        <button type="button" disabled={index === 0} onClick={() => onMove(-1)}>
          Move up<span className="visually-hidden"> action {n}</span>
        </button>
        <button type="button" disabled={index === count - 1} onClick={() => onMove(1)}>
          Move down<span className="visually-hidden"> action {n}</span>
        </button>
        <button type="button" className="danger" onClick={onRemove}>
          Remove<span className="visually-hidden"> action {n}</span>
        </button>
      </div>
    </fieldset>
  );
}

/** The problems of one field, including those of its items (`config.to.1` of an e-mail list). */
function fieldProblem(problems: FieldProblems, name: string): string | undefined {
  const found = Object.entries(problems)
    .filter(([key]) => key === `config.${name}` || key.startsWith(`config.${name}.`))
    .map(([, message]) => message);
  return found.length > 0 ? found.join('; ') : undefined;
}

/** Problems of this action that name no field of its form (e.g. an unknown property). */
function problemsOutsideFields(problems: FieldProblems, fields: readonly FieldSpec[]): string {
  const known = new Set(['type', 'config', '', ...fields.map((f) => `config.${f.name}`)]);
  return Object.entries(problems)
    .filter(([key]) => !known.has(key) && !fields.some((f) => key.startsWith(`config.${f.name}.`)))
    .map(([key, message]) => `${key}: ${message}`)
    .join('; ');
}

function WebhookSelect({
  spec,
  value,
  problem,
  webhooks,
  onChange,
}: {
  spec: FieldSpec;
  value: string;
  problem?: string | undefined;
  webhooks: Schemas['Webhook'][] | null;
  onChange(value: string): void;
}) {
  const id = useId();
  const listed = webhooks?.some((w) => w.id === value) ?? false;
  return (
    <div className="field">
      <label htmlFor={id}>{spec.label}</label>
      <select
        id={id}
        value={value}
        aria-invalid={problem ? true : undefined}
        aria-describedby={`${id}-hint`}
        onChange={(event) => onChange(event.target.value)}
      >
        <option value="">{webhooks === null ? 'Loading webhooks…' : 'Choose a webhook'}</option>
        {value && !listed ? <option value={value}>{value}</option> : null}
        {(webhooks ?? []).map((w) => (
          <option key={w.id} value={w.id}>
            {w.name} — {w.url}
          </option>
        ))}
      </select>
      <small id={`${id}-hint`} className="hint">
        {spec.hint}
        {webhooks?.length === 0 ? ' This workspace has no webhooks yet.' : ''}
      </small>
      {problem ? (
        <p className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
    </div>
  );
}
