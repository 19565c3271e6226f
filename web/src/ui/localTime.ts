/**
 * Times in filter forms: ISO 8601 UTC in the URL and the API, the reader's local time in
 * `datetime-local` inputs (which have minutes only).
 */

/** ISO UTC → the value of a `datetime-local` input in the reader's time zone. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (local time) → ISO UTC; null when empty or incomplete. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** The input has minutes only: "to 12:30" includes the whole minute. */
export function endOfMinute(iso: string | null): string | null {
  return iso ? new Date(Date.parse(iso) + 59_999).toISOString() : null;
}

/** A time read from the URL, as ISO UTC; null when missing or not a time. */
export function isoOrNull(value: string | null): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
