/**
 * A button for an action that cannot be undone: the first press asks, in place, and only
 * "Confirm" acts. No modal: the question stays next to what it is about, and Escape or
 * "Cancel" backs out. An action that throws (the network failed) is reported beside the button
 * rather than lost as an unhandled rejection.
 */
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { thrownMessage } from '../api/client.ts';
import { focusIsLost } from './focus.ts';

export function ConfirmButton({
  children,
  question,
  confirmLabel = 'Confirm',
  onConfirm,
  danger = false,
  disabled = false,
}: {
  children: ReactNode;
  question: string;
  confirmLabel?: string;
  onConfirm(): void | Promise<void>;
  danger?: boolean;
  disabled?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const triggerRef = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    // Back from the question (cancelled, or done and still here): focus returns to the button that
    // asked, which the question had replaced, unless the reader is elsewhere already.
    else if (asked.current && focusIsLost()) triggerRef.current?.focus();
    asked.current = asking;
  }, [asking]);

  if (!asking)
    return (
      <>
        <button
          ref={triggerRef}
          type="button"
          className={danger ? 'danger' : undefined}
          disabled={disabled}
          onClick={() => {
            setFailure(null);
            setAsking(true);
          }}
        >
          {children}
        </button>
        {failure ? (
          <span className="field-error" role="alert">
            {failure}
          </span>
        ) : null}
      </>
    );
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of two buttons with its question, not a form fieldset
    <span
      className="confirm"
      role="group"
      aria-label={question}
      onKeyDown={(event) => {
        if (event.key === 'Escape') setAsking(false);
      }}
    >
      <span className="confirm-question">{question}</span>
      <button
        ref={confirmRef}
        type="button"
        className={danger ? 'danger' : undefined}
        disabled={busy}
        onClick={() => {
          setBusy(true);
          void (async () => {
            try {
              await onConfirm();
            } catch (thrown) {
              setFailure(thrownMessage(thrown));
            } finally {
              setBusy(false);
              setAsking(false);
            }
          })();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
