/**
 * The inputs of the action forms: plain text, secrets (a password input with a Show toggle that
 * keeps the API's mask until it is changed), and templates (variable chips and a live preview
 * rendered by the server's own template module).
 */
import { type ReactNode, useId, useRef, useState } from 'react';
import type { FieldSpec } from './actionTypes.ts';
import { type Preview, TEMPLATE_VARIABLES } from './preview.ts';

interface FieldProps {
  spec: FieldSpec;
  value: string;
  onChange(value: string): void;
  problem?: string | undefined;
  /** The masked secret as answered, while the input still holds it. */
  mask?: string | undefined;
}

function FieldFrame({
  id,
  label,
  hint,
  problem,
  children,
}: {
  id: string;
  label: string;
  hint?: string | undefined;
  problem?: string | undefined;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      {problem ? (
        <p id={`${id}-problem`} className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
    </div>
  );
}

function describedBy(id: string, hint: unknown, problem: unknown): string | undefined {
  const ids = [hint ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter(Boolean);
  return ids.length > 0 ? ids.join(' ') : undefined;
}

export function TextField({ spec, value, onChange, problem }: FieldProps) {
  const id = useId();
  return (
    <FieldFrame id={id} label={spec.label} hint={spec.hint} problem={problem}>
      <input
        id={id}
        type={spec.inputMode === 'email' ? 'text' : spec.inputMode === 'url' ? 'url' : 'text'}
        inputMode={spec.inputMode}
        value={value}
        placeholder={spec.placeholder}
        required={spec.required}
        aria-invalid={problem ? true : undefined}
        aria-describedby={describedBy(id, spec.hint, problem)}
        onChange={(event) => onChange(event.target.value)}
      />
    </FieldFrame>
  );
}

export function SecretField({ spec, value, onChange, problem, mask }: FieldProps) {
  const id = useId();
  const [shown, setShown] = useState(false);
  const unchanged = mask !== undefined && value === mask;
  const hint = unchanged
    ? `Stored encrypted; shown masked. Leave it to keep the stored value, or type a new one. ${spec.hint ?? ''}`
    : spec.hint;
  return (
    <FieldFrame id={id} label={spec.label} hint={hint} problem={problem}>
      <div className="secret-row">
        <input
          id={id}
          type={shown ? 'text' : 'password'}
          autoComplete="new-password"
          spellCheck={false}
          value={value}
          placeholder={spec.placeholder}
          required={spec.required}
          aria-invalid={problem ? true : undefined}
          aria-describedby={describedBy(id, hint, problem)}
          onChange={(event) => onChange(event.target.value)}
          onFocus={(event) => {
            // A mask is not worth editing: select it whole, so typing replaces it.
            if (unchanged) event.currentTarget.select();
          }}
        />
        <button
          type="button"
          aria-pressed={shown}
          aria-label={`Show ${spec.label.toLowerCase()}`}
          onClick={() => setShown((s) => !s)}
        >
          Show
        </button>
      </div>
    </FieldFrame>
  );
}

export function TemplateField({
  spec,
  value,
  onChange,
  problem,
  preview,
}: FieldProps & { preview: Preview | null }) {
  const id = useId();
  const input = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const insert = (variable: string): void => {
    const tag = `{{${variable.replace('<key>', 'key')}}}`;
    const element = input.current;
    const start = element?.selectionStart ?? value.length;
    const end = element?.selectionEnd ?? value.length;
    onChange(value.slice(0, start) + tag + value.slice(end));
    requestAnimationFrame(() => {
      element?.focus();
      element?.setSelectionRange(start + tag.length, start + tag.length);
    });
  };
  const shownProblem = problem ?? (preview && 'problem' in preview ? preview.problem : undefined);
  const unknown = preview && 'unknown' in preview ? preview.unknown : [];
  const hint = `Optional. Left empty: ${spec.defaultText ?? 'the default'}. Values are escaped for ${
    spec.escaping === 'slack' ? 'Slack (& < >)' : 'plain text'
  }.`;
  const common = {
    id,
    value,
    ref: input,
    spellCheck: false,
    'aria-invalid': shownProblem ? true : undefined,
    'aria-describedby':
      [describedBy(id, hint, shownProblem), unknown.length > 0 ? `${id}-unknown` : '']
        .filter(Boolean)
        .join(' ') || undefined,
    onChange: (event: { target: { value: string } }) => onChange(event.target.value),
  };
  return (
    <FieldFrame id={id} label={spec.label} hint={hint} problem={shownProblem}>
      {spec.multiline ? <textarea rows={3} {...common} /> : <input type="text" {...common} />}
      <details className="template-variables">
        <summary>Insert a variable</summary>
        {/* biome-ignore lint/a11y/useSemanticElements: a set of buttons, not form controls */}
        <div className="chips" role="group" aria-label={`Variables for ${spec.label.toLowerCase()}`}>
          {TEMPLATE_VARIABLES.map((variable) => (
            <button key={variable} type="button" className="chip" onClick={() => insert(variable)}>
              {`{{${variable}}}`}
            </button>
          ))}
        </div>
      </details>
      {preview && !('problem' in preview) ? (
        <div className="template-preview">
          <span className="template-preview-label" id={`${id}-preview-label`}>
            Preview with a sample event
          </span>
          {'text' in preview ? (
            <output
              className="template-preview-text"
              aria-live="off"
              aria-labelledby={`${id}-preview-label`}
              data-testid={`preview-${spec.name}`}
            >
              {preview.text}
            </output>
          ) : (
            <output
              className="template-preview-text hint"
              aria-live="off"
              aria-labelledby={`${id}-preview-label`}
            >
              Left empty: {spec.defaultText}.
            </output>
          )}
        </div>
      ) : null}
      {unknown.length > 0 ? (
        <p id={`${id}-unknown`} className="template-unknown" data-testid={`unknown-${spec.name}`}>
          {unknown.length === 1 ? 'Not a variable' : 'Not variables'}, so{' '}
          {unknown.length === 1 ? 'it renders' : 'they render'} empty:{' '}
          {unknown.map((name) => `{{${name}}}`).join(', ')}. The variables are under “Insert a variable”.
        </p>
      ) : null}
    </FieldFrame>
  );
}
