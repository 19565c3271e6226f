/**
 * A timestamp's ISO 8601 text as `Date.prototype.toISOString` prints it, without printing it when
 * the client already sent exactly that. Ingestion needs a location's time as text up to three times
 * (the stored row, the device's last location, its last evaluated time); most clients send the
 * canonical form, so reusing their text avoids printing it on the hot path (ADR 008, "Batch speed").
 */

// `YYYY-MM-DDTHH:mm:ss.sssZ`, the only form toISOString prints for years 0000–9999.
const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * `date.toISOString()`, where `date` was parsed from `text`. `text` itself is the answer when it is
 * canonical and parsing did not roll an out-of-range field over into the next one (V8 reads
 * `02-30` as March 2nd and `T24:00` as the next day's midnight): then every field of the text is
 * the date's own. A roll-over always changes the day of the month or the hour, which are compared.
 */
export function isoText(text: string, date: Date): string {
  if (
    text.length === 24 &&
    CANONICAL.test(text) &&
    date.getUTCDate() === Number(text.slice(8, 10)) &&
    date.getUTCHours() === Number(text.slice(11, 13)) &&
    date.getUTCMinutes() === Number(text.slice(14, 16))
  ) {
    return text;
  }
  return date.toISOString();
}
