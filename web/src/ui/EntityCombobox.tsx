/**
 * A searchable picker for one device or geofence among thousands: the typed text is sent to the
 * API's `q` search (debounced) and the first matches are offered in a listbox — the ARIA combobox
 * pattern, usable with the keyboard alone (arrows, Enter, Escape) and announced by screen readers.
 */
import { type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';

export interface EntityOption {
  id: string;
  label: string;
  /** A second, quieter line (external id, …). */
  detail?: string | null;
}

interface Props {
  label: string;
  /** The chosen id (e.g. from the URL), or null. */
  value: string | null;
  onChange(id: string | null, option: EntityOption | null): void;
  search(q: string, signal: AbortSignal): Promise<EntityOption[]>;
  /** The option of an id chosen before (to show its name); null when it does not exist. */
  resolve(id: string, signal: AbortSignal): Promise<EntityOption | null>;
  placeholder?: string;
  hint?: string;
  /** The accessible name of the clear button, starting with its visible "Clear" (default "Clear <label>"). */
  clearText?: string;
}

const DEBOUNCE_MS = 200;

export function EntityCombobox({
  label,
  value,
  onChange,
  search,
  resolve,
  placeholder,
  hint,
  clearText,
}: Props) {
  const id = useId();
  const listId = `${id}-list`;
  const [text, setText] = useState('');
  const [chosen, setChosen] = useState<EntityOption | null>(null);
  const [options, setOptions] = useState<EntityOption[] | null>(null);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [query, setQuery] = useState<string | null>(null);
  const searchRef = useRef(search);
  const resolveRef = useRef(resolve);
  useEffect(() => {
    searchRef.current = search;
    resolveRef.current = resolve;
  });

  // The name of the chosen id: known when picked here, looked up when it came from the URL.
  useEffect(() => {
    if (value === null) {
      setChosen(null);
      setText('');
      return;
    }
    if (chosen?.id === value) return;
    const abort = new AbortController();
    void resolveRef.current(value, abort.signal).then((option) => {
      if (abort.signal.aborted) return;
      const shown = option ?? { id: value, label: value };
      setChosen(shown);
      setText(shown.label);
    });
    return () => abort.abort();
  }, [value, chosen]);

  useEffect(() => {
    if (query === null) return;
    const abort = new AbortController();
    const timer = setTimeout(() => {
      void searchRef.current(query, abort.signal).then(
        (found) => {
          if (abort.signal.aborted) return;
          setOptions(found);
          setActive(found.length > 0 ? 0 : -1);
        },
        () => undefined,
      );
    }, DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [query]);

  const choose = (option: EntityOption | null): void => {
    setChosen(option);
    setText(option?.label ?? '');
    setOpen(false);
    setQuery(null);
    onChange(option?.id ?? null, option);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>): void => {
    const count = options?.length ?? 0;
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      if (!open) {
        setOpen(true);
        setQuery(text === chosen?.label ? '' : text);
      } else if (count > 0) setActive((a) => (a + 1) % count);
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      if (open && count > 0) setActive((a) => (a <= 0 ? count - 1 : a - 1));
    } else if (event.key === 'Enter') {
      if (open && options && active >= 0 && options[active]) {
        event.preventDefault();
        choose(options[active]);
      }
    } else if (event.key === 'Escape') {
      if (open) {
        event.preventDefault();
        setOpen(false);
        setText(chosen?.label ?? '');
      }
    }
  };

  const onBlur = (): void => {
    setOpen(false);
    setQuery(null);
    if (text.trim() === '') {
      if (value !== null) choose(null);
    } else setText(chosen?.label ?? '');
  };

  const activeId = open && active >= 0 ? `${id}-opt-${active}` : undefined;
  return (
    <div className="field combobox">
      <label htmlFor={id}>{label}</label>
      <div className="combobox-row">
        <input
          id={id}
          className="combobox-input"
          type="text"
          role="combobox"
          autoComplete="off"
          aria-autocomplete="list"
          aria-expanded={open}
          aria-controls={listId}
          aria-activedescendant={activeId}
          aria-describedby={hint ? `${id}-hint` : undefined}
          placeholder={placeholder}
          value={text}
          onChange={(event) => {
            setText(event.target.value);
            setOpen(true);
            setQuery(event.target.value);
          }}
          onFocus={() => {
            if (!open) setQuery(text === chosen?.label ? '' : text);
            setOpen(true);
          }}
          onKeyDown={onKeyDown}
          onBlur={onBlur}
        />
        {value !== null ? (
          <button
            type="button"
            className="combobox-clear"
            aria-label={clearText ?? `Clear ${label.toLowerCase()}`}
            onClick={() => choose(null)}
          >
            Clear
          </button>
        ) : null}
      </div>
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      <div className="combobox-popup" hidden={!open}>
        <div id={listId} role="listbox" aria-label={label}>
          {(options ?? []).map((option, index) => (
            <div
              key={option.id}
              id={`${id}-opt-${index}`}
              role="option"
              tabIndex={-1}
              aria-selected={index === active}
              className={index === active ? 'combobox-option active' : 'combobox-option'}
              // mousedown, not click: choosing must happen before the input's blur closes the list.
              onMouseDown={(event) => {
                event.preventDefault();
                choose(option);
              }}
            >
              <span>{option.label}</span>
              {option.detail ? <small>{option.detail}</small> : null}
            </div>
          ))}
        </div>
        {options === null ? <p className="combobox-empty">Searching…</p> : null}
        {options?.length === 0 ? <p className="combobox-empty">No matches</p> : null}
      </div>
    </div>
  );
}
