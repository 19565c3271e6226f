const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A timestamp of the API (ISO 8601 UTC) in the reader's locale and time zone. */
export function formatTime(iso: string): string {
  return timeFormat.format(new Date(iso));
}
