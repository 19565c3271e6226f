/** Custom headers of a webhook as name/value rows: add, edit, remove. */
export interface HeaderRow {
  /** A stable key for React while rows are added and removed. */
  key: number;
  name: string;
  value: string;
}

let nextKey = 0;
export function headerRow(name = '', value = ''): HeaderRow {
  nextKey += 1;
  return { key: nextKey, name, value };
}

export function HeadersEditor({ rows, onChange }: { rows: HeaderRow[]; onChange(rows: HeaderRow[]): void }) {
  const update = (key: number, change: Partial<HeaderRow>): void =>
    onChange(rows.map((row) => (row.key === key ? { ...row, ...change } : row)));
  return (
    <fieldset className="headers-editor">
      <legend>Custom headers</legend>
      <p className="hint">
        Added to every delivery, e.g. an <code>Authorization</code> header your receiver expects. The
        service's own headers (signature, content type, …) cannot be set.
      </p>
      {rows.length === 0 ? <p>No custom headers.</p> : null}
      {rows.map((row, index) => (
        <div className="header-row" key={row.key}>
          <input
            aria-label={`Header ${index + 1} name`}
            placeholder="Header name"
            value={row.name}
            maxLength={255}
            onChange={(event) => update(row.key, { name: event.target.value })}
          />
          <input
            aria-label={`Header ${index + 1} value`}
            placeholder="Value"
            value={row.value}
            maxLength={4096}
            onChange={(event) => update(row.key, { value: event.target.value })}
          />
          <button type="button" onClick={() => onChange(rows.filter((r) => r.key !== row.key))}>
            Remove<span className="visually-hidden"> header {index + 1}</span>
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, headerRow()])}>
        Add header
      </button>
    </fieldset>
  );
}

/** The rows as the API's object; an error text for an unnamed or repeated header. */
export function headersOf(rows: HeaderRow[]): { headers: Record<string, string> } | { problem: string } {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [index, row] of rows.entries()) {
    const name = row.name.trim();
    if (name === '' && row.value === '') continue;
    if (name === '') return { problem: `Header ${index + 1} needs a name.` };
    if (seen.has(name.toLowerCase())) return { problem: `The header “${name}” is listed twice.` };
    seen.add(name.toLowerCase());
    headers[name] = row.value;
  }
  return { headers };
}
