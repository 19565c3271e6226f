const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A timestamp of the API (ISO 8601 UTC) in the reader's locale and time zone. */
export function formatTime(iso: string): string {
  return timeFormat.format(new Date(iso));
}

/** A position `[lng, lat]` for a message: 7 decimals (about 1 cm), without floating-point noise. */
export function formatPosition(position: readonly number[]): string {
  return position.map((n) => String(Number(n.toFixed(7)))).join(', ');
}
