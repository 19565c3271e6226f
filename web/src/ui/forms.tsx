/** Form pieces with a visible label tied to every input and errors announced to screen readers. */
import { type InputHTMLAttributes, type ReactNode, useEffect, useId, useRef } from 'react';
import { focusIsLost } from './focus.ts';

export function Field({
  label,
  hint,
  ...input
}: InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: string }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/**
 * An error (role=alert: read out at once) or a confirmation (role=status). An error or a
 * confirmation that answers an action takes the focus the action lost (its button disabled while
 * it worked, its row removed), so Tab goes on from the answer rather than from the page's top.
 */
export function Notice({ kind, children }: { kind: 'error' | 'success' | 'info'; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  // A new message, not every render: a text, or the moment any other content appears.
  const message = typeof children === 'string' ? children : Boolean(children);
  useEffect(() => {
    if (message && kind !== 'info' && focusIsLost()) box.current?.focus();
  }, [message, kind]);
  if (!children) return null;
  return (
    <div
      ref={box}
      tabIndex={-1}
      className={`notice notice-${kind}`}
      role={kind === 'error' ? 'alert' : 'status'}
    >
      {children}
    </div>
  );
}

export function formValue(form: HTMLFormElement, name: string): string {
  const value = new FormData(form).get(name);
  return typeof value === 'string' ? value : '';
}
