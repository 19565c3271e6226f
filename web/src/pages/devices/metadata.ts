/**
 * A device's metadata as rows of key, kind and value for the editor, and back — checked as the API
 * checks a free-form object (contract §1), so a save the API would refuse is refused here first,
 * beside the row at fault: text without NUL or lone surrogates (keys too, at any depth), finite
 * numbers, at most 16 levels of nesting (the metadata object is level 1), each key once, the whole
 * request under 1 MiB. Keys are kept exactly as typed (no trimming): the API keeps them so.
 */

export type ValueKind = 'text' | 'number' | 'boolean' | 'json';

export interface MetadataRow {
  /** A stable key for React while rows are added and removed. */
  id: number;
  key: string;
  kind: ValueKind;
  value: string;
}

/** The API's limit on nesting of a free-form object. */
const MAX_DEPTH = 16;
/** The API's body limit; the rest of the request is small. */
const MAX_BYTES = 1024 * 1024 - 1024;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text the API refuses: holding U+0000 or half of a surrogate pair. */
function badText(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

let nextId = 0;
export function metadataRow(key = '', kind: ValueKind = 'text', value = ''): MetadataRow {
  nextId += 1;
  return { id: nextId, key, kind, value };
}

/** The rows showing an object: strings as text, numbers, booleans, anything else as JSON. */
export function rowsOf(metadata: Record<string, unknown>): MetadataRow[] {
  return Object.entries(metadata).map(([key, value]) => {
    if (typeof value === 'string') return metadataRow(key, 'text', value);
    if (typeof value === 'number') return metadataRow(key, 'number', String(value));
    if (typeof value === 'boolean') return metadataRow(key, 'boolean', String(value));
    return metadataRow(key, 'json', JSON.stringify(value, null, 0));
  });
}

export interface RowProblem {
  rowId: number;
  field: 'key' | 'value';
  message: string;
}

/** The object the rows stand for, or the first problem of each faulty row. */
export function metadataOf(
  rows: readonly MetadataRow[],
): { metadata: Record<string, unknown> } | { problems: RowProblem[] } {
  const problems: RowProblem[] = [];
  const metadata: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const row of rows) {
    if (row.key === '' && row.value.trim() === '' && row.kind !== 'boolean') continue;
    const keyProblem = checkKey(row.key, seen);
    if (keyProblem) {
      problems.push({ rowId: row.id, field: 'key', message: keyProblem });
      continue;
    }
    seen.add(row.key);
    const parsed = parseValue(row);
    if ('problem' in parsed) problems.push({ rowId: row.id, field: 'value', message: parsed.problem });
    else metadata[row.key] = parsed.value;
  }
  if (problems.length > 0) return { problems };
  if (new TextEncoder().encode(JSON.stringify({ metadata })).length > MAX_BYTES) {
    const last = rows.at(-1);
    return {
      problems: [
        {
          rowId: last?.id ?? 0,
          field: 'value',
          message: 'The metadata is larger than the API takes (1 MiB).',
        },
      ],
    };
  }
  return { metadata };
}

function checkKey(key: string, seen: ReadonlySet<string>): string | null {
  if (key === '') return 'Give this value a key.';
  if (badText(key)) return 'A key cannot hold a NUL character or a lone surrogate.';
  if (seen.has(key)) return `The key “${key}” is used twice.`;
  return null;
}

function parseValue(row: MetadataRow): { value: unknown } | { problem: string } {
  switch (row.kind) {
    case 'text':
      return badText(row.value)
        ? { problem: 'Text cannot hold a NUL character or a lone surrogate.' }
        : { value: row.value };
    case 'number': {
      const n = row.value.trim() === '' ? Number.NaN : Number(row.value);
      return Number.isFinite(n) ? { value: n } : { problem: 'Enter a number, like 42 or -3.5.' };
    }
    case 'boolean':
      return { value: row.value === 'true' };
    case 'json': {
      let value: unknown;
      try {
        value = JSON.parse(row.value);
      } catch {
        return { problem: 'This is not valid JSON (text needs "double quotes").' };
      }
      const bad = badJson(value);
      return bad ? { problem: bad } : { value };
    }
  }
}

/** What the API would refuse in a JSON value placed at level 2 of the metadata; null when nothing. */
function badJson(value: unknown): string | null {
  let level: unknown[] = [value];
  for (let depth = 2; level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const item of level) {
      if (typeof item === 'string' && badText(item))
        return 'Text cannot hold a NUL character or a lone surrogate.';
      if (typeof item === 'number' && !Number.isFinite(item)) return 'Numbers must be finite (1e999 is not).';
      if (item === null || typeof item !== 'object') continue;
      if (depth > MAX_DEPTH) return `Metadata nests at most ${MAX_DEPTH} levels deep.`;
      for (const [key, child] of Object.entries(item)) {
        if (!Array.isArray(item) && badText(key))
          return 'A key cannot hold a NUL character or a lone surrogate.';
        next.push(child);
      }
    }
    level = next;
  }
  return null;
}
