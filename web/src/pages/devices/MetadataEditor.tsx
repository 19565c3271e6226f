/**
 * A device's metadata as key/value rows: add, edit, remove, then save the whole object (the API's
 * PATCH replaces metadata whole). Each value has a kind (text, number, yes/no, JSON), and every row
 * is checked as the API would check it (metadata.ts), with the reason beside the row at fault.
 */
import { type FormEvent, useState } from 'react';
import { errorMessage, type Schemas, thrownMessage } from '../../api/client.ts';
import { Notice } from '../../ui/forms.tsx';
import { updateDevice } from './devicesApi.ts';
import {
  type MetadataRow,
  metadataOf,
  metadataRow,
  type RowProblem,
  rowsOf,
  type ValueKind,
} from './metadata.ts';

const KINDS: Array<{ value: ValueKind; label: string }> = [
  { value: 'text', label: 'Text' },
  { value: 'number', label: 'Number' },
  { value: 'boolean', label: 'Yes/no' },
  { value: 'json', label: 'JSON' },
];

export function MetadataEditor({
  device,
  onSaved,
}: {
  device: Schemas['Device'];
  onSaved(device: Schemas['Device']): void;
}) {
  const [rows, setRows] = useState<MetadataRow[]>(() => rowsOf(device.metadata));
  const [problems, setProblems] = useState<RowProblem[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const update = (id: number, change: Partial<MetadataRow>): void => {
    setSaved(null);
    setRows((all) => all.map((row) => (row.id === id ? { ...row, ...change } : row)));
  };

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    setSaved(null);
    setError(null);
    const result = metadataOf(rows);
    if ('problems' in result) {
      setProblems(result.problems);
      return;
    }
    setProblems([]);
    setBusy(true);
    try {
      const { data, error: failure } = await updateDevice(device.id, { metadata: result.metadata });
      if (!data) {
        setError(errorMessage(failure));
        return;
      }
      setRows(rowsOf(data.metadata));
      setSaved('Metadata saved.');
      onSaved(data);
    } catch (thrown) {
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="metadata-editor"
      aria-labelledby="metadata-title"
      onSubmit={(event) => void submit(event)}
    >
      <h2 id="metadata-title">Metadata</h2>
      <p className="hint">
        Your own facts about the device (a plate number, a driver, a model). They are kept as you type them
        and sent with its events.
      </p>
      {rows.length === 0 ? <p>No metadata.</p> : null}
      {rows.map((row, index) => {
        const n = index + 1;
        const keyProblem = problems.find((p) => p.rowId === row.id && p.field === 'key');
        const valueProblem = problems.find((p) => p.rowId === row.id && p.field === 'value');
        const problemId = `metadata-${row.id}-problem`;
        return (
          <div className="metadata-row" key={row.id}>
            <input
              aria-label={`Key ${n}`}
              placeholder="Key"
              value={row.key}
              aria-invalid={keyProblem ? true : undefined}
              aria-describedby={keyProblem ? problemId : undefined}
              onChange={(event) => update(row.id, { key: event.target.value })}
            />
            <select
              aria-label={`Kind of value ${n}`}
              value={row.kind}
              onChange={(event) => {
                const kind = event.target.value as ValueKind;
                update(row.id, { kind, value: kind === 'boolean' ? 'true' : row.value });
              }}
            >
              {KINDS.map((k) => (
                <option key={k.value} value={k.value}>
                  {k.label}
                </option>
              ))}
            </select>
            {row.kind === 'boolean' ? (
              <select
                aria-label={`Value ${n}`}
                value={row.value}
                onChange={(event) => update(row.id, { value: event.target.value })}
              >
                <option value="true">Yes (true)</option>
                <option value="false">No (false)</option>
              </select>
            ) : (
              <input
                aria-label={`Value ${n}`}
                placeholder={row.kind === 'json' ? '{"a": 1} or [1, 2]' : 'Value'}
                inputMode={row.kind === 'number' ? 'decimal' : undefined}
                value={row.value}
                aria-invalid={valueProblem ? true : undefined}
                aria-describedby={valueProblem ? problemId : undefined}
                onChange={(event) => update(row.id, { value: event.target.value })}
              />
            )}
            <button type="button" onClick={() => setRows((all) => all.filter((r) => r.id !== row.id))}>
              Remove<span className="visually-hidden"> key {n}</span>
            </button>
            {keyProblem || valueProblem ? (
              <span id={problemId} className="field-error metadata-problem">
                {(keyProblem ?? valueProblem)?.message}
              </span>
            ) : null}
          </div>
        );
      })}
      <div className="button-row">
        <button type="button" onClick={() => setRows((all) => [...all, metadataRow()])}>
          Add a key
        </button>
        <button type="submit" className="primary" disabled={busy}>
          Save metadata
        </button>
      </div>
      {problems.length > 0 ? (
        <Notice kind="error">
          {problems.length === 1 ? 'One row needs fixing' : `${problems.length} rows need fixing`} before the
          metadata can be saved.
        </Notice>
      ) : null}
      <Notice kind="error">{error}</Notice>
      <Notice kind="success">{saved}</Notice>
    </form>
  );
}
