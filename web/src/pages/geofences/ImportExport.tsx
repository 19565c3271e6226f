/**
 * Import a GeoJSON FeatureCollection (file picker or drop) through `POST /geofences/batch`, 1,000
 * features a request, and report each feature: created, updated (same `external_id`) or refused and
 * why. Export downloads every geofence as `geofences.geojson`, which imports back as it is.
 */

import { type DragEvent, useId, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import { formatPosition } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { downloadExport, type ImportItem, importItems } from './geofenceApi.ts';

type Outcome = 'created' | 'updated' | 'refused';
interface ReportRow {
  index: number;
  name: string;
  outcome: Outcome;
  why: string;
}

/** The file's items and which body form they go in, or why the file cannot be imported. */
function readImport(
  text: string,
): { form: 'features' | 'geofences'; items: ImportItem[] } | { problem: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    return { problem: `The file is not valid JSON: ${(error as Error).message}` };
  }
  const value = (doc ?? {}) as { type?: unknown; features?: unknown; geofences?: unknown };
  if (value.type === 'FeatureCollection' && Array.isArray(value.features)) {
    return { form: 'features', items: value.features as ImportItem[] };
  }
  if (value.type === 'Feature') return { form: 'features', items: [value as ImportItem] };
  if (Array.isArray(value.geofences)) return { form: 'geofences', items: value.geofences as ImportItem[] };
  return { problem: 'The file must hold a GeoJSON FeatureCollection (or {"geofences": [...]}).' };
}

function itemField(item: ImportItem, form: 'features' | 'geofences', field: string): unknown {
  const holder = form === 'features' ? (item.properties as Record<string, unknown> | undefined) : item;
  return holder?.[field];
}

export function ImportExport({ onImported }: { onImported: () => void }) {
  const [progress, setProgress] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [report, setReport] = useState<{ file: string; rows: ReportRow[] } | null>(null);
  const [onlyRefused, setOnlyRefused] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState(false);
  const fileId = useId();

  const importFile = async (file: File): Promise<void> => {
    setError(null);
    setReport(null);
    const parsed = readImport(await file.text());
    if ('problem' in parsed) {
      setError(parsed.problem);
      return;
    }
    const { form, items } = parsed;
    if (items.length === 0) {
      setError('The file holds no features.');
      return;
    }
    setBusy(true);
    setProgress(`Importing ${items.length.toLocaleString()} geofences…`);
    const outcomes = await importItems(form, items, (done) =>
      setProgress(`Imported ${done.toLocaleString()} of ${items.length.toLocaleString()}…`),
    );
    const rows: ReportRow[] = [];
    for (const chunk of outcomes) {
      const rejected = new Map((chunk.result?.rejected ?? []).map((r) => [r.index, r]));
      const updated = new Set((chunk.result?.updated ?? []).map((g) => g.external_id).filter(Boolean));
      chunk.items.forEach((item, i) => {
        const index = chunk.start + i;
        const rawName = itemField(item, form, 'name');
        const name = typeof rawName === 'string' ? rawName : '(no name)';
        if (chunk.failure) {
          rows.push({ index, name, outcome: 'refused', why: chunk.failure });
          return;
        }
        const rejection = rejected.get(i);
        if (rejection) {
          rows.push({ index, name, outcome: 'refused', why: rejectionText(rejection) });
          return;
        }
        const externalId = itemField(item, form, 'external_id');
        const wasUpdate = typeof externalId === 'string' && updated.has(externalId);
        rows.push({ index, name, outcome: wasUpdate ? 'updated' : 'created', why: '' });
      });
    }
    rows.sort((a, b) => a.index - b.index);
    setBusy(false);
    setProgress(null);
    setOnlyRefused(rows.length > 200);
    setReport({ file: file.name, rows });
    if (rows.some((r) => r.outcome !== 'refused')) onImported();
  };

  const onDrop = (event: DragEvent<HTMLDivElement>): void => {
    event.preventDefault();
    setDragging(false);
    const file = event.dataTransfer.files[0];
    if (file && !busy) void importFile(file);
  };

  const exportAll = async (): Promise<void> => {
    setError(null);
    try {
      await downloadExport();
    } catch (failure) {
      setError(`Export failed: ${(failure as Error).message}`);
    }
  };

  const counts = report
    ? {
        created: report.rows.filter((r) => r.outcome === 'created').length,
        updated: report.rows.filter((r) => r.outcome === 'updated').length,
        refused: report.rows.filter((r) => r.outcome === 'refused').length,
      }
    : null;
  const shown = report
    ? onlyRefused
      ? report.rows.filter((r) => r.outcome === 'refused')
      : report.rows
    : [];

  return (
    <section aria-labelledby="import-export-title" className="import-export">
      <h2 id="import-export-title">Import and export</h2>
      <button type="button" onClick={() => void exportAll()}>
        Export GeoJSON
      </button>
      <section
        aria-label="Drop zone for a GeoJSON file"
        className={`drop-zone${dragging ? ' dragging' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <label htmlFor={fileId}>Import a GeoJSON file</label>
        <input
          id={fileId}
          type="file"
          accept=".geojson,.json,application/geo+json,application/json"
          disabled={busy}
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) void importFile(file);
          }}
        />
        <small className="hint">
          …or drop it here. A FeatureCollection of Polygons and Circles, fields in <code>properties</code>; a
          feature whose <code>external_id</code> exists updates that geofence.
        </small>
      </section>
      {progress ? <p role="status">{progress}</p> : null}
      <Notice kind="error">{error}</Notice>
      {report && counts ? (
        <div className="import-report">
          <p role="status">
            {report.file}: {counts.created} created, {counts.updated} updated, {counts.refused} refused.
          </p>
          {counts.refused > 0 && counts.refused < report.rows.length ? (
            <label className="check">
              <input
                type="checkbox"
                checked={onlyRefused}
                onChange={(e) => setOnlyRefused(e.target.checked)}
              />{' '}
              Show only refused features
            </label>
          ) : null}
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Import report of {report.file}</caption>
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Name</th>
                  <th scope="col">Result</th>
                  <th scope="col">Why</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((row) => (
                  <tr key={row.index} className={`outcome-${row.outcome}`}>
                    <td>{row.index}</td>
                    <td>{row.name}</td>
                    <td>{row.outcome}</td>
                    <td>{row.why}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      ) : null}
    </section>
  );
}

/** A refusal in words: the server's message, and for a geometry error its reason and place. */
function rejectionText(rejection: {
  detail: unknown;
  error_code?: string;
  details?: Record<string, unknown>;
}): string {
  const message = Array.isArray(rejection.detail)
    ? issuesText(rejection.detail)
    : errorMessage({ detail: rejection.detail });
  if (rejection.error_code !== 'INVALID_GEOMETRY') return message;
  const reason = typeof rejection.details?.reason === 'string' ? rejection.details.reason : null;
  const location = rejection.details?.location;
  const where =
    Array.isArray(location) && location.length === 2 ? ` at ${formatPosition(location as number[])}` : '';
  return reason ? `${message} (${reason}${where})` : message;
}

/**
 * A 422 issue list of one item, its places relative to the item: `["body", "features", 3,
 * "properties", "name"]` reads `name` (the row already says which feature).
 */
function issuesText(issues: readonly { loc?: readonly (string | number)[]; msg?: string }[]): string {
  return issues
    .map((issue) => {
      const loc = (issue.loc ?? []).slice(3);
      if (loc[0] === 'properties') loc.shift();
      return loc.length > 0 ? `${loc.join('.')}: ${issue.msg ?? ''}` : (issue.msg ?? '');
    })
    .join('; ');
}
