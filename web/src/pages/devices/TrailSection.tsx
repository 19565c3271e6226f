/**
 * The device page's trail controls: a time range (`from`/`to` in the URL, ISO UTC; the inputs show
 * local time), what is drawn, and follow mode (`follow=1`).
 */
import { type FormEvent, useId } from 'react';
import { setQuery } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { endOfMinute, fromLocalInput, toLocalInput } from '../../ui/localTime.ts';
import type { TrailRange } from './useTrailRange.ts';

interface Props {
  from: string | null;
  to: string | null;
  trail: TrailRange | null;
  error: boolean;
  follow: boolean;
  hasPosition: boolean;
}

export function TrailSection({ from, to, trail, error, follow, hasPosition }: Props) {
  const id = useId();
  const apply = (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const start = fromLocalInput(String(data.get('from') ?? ''));
    const end = endOfMinute(fromLocalInput(String(data.get('to') ?? '')));
    setQuery({ from: start, to: end });
  };
  const invalid = from !== null && to !== null && Date.parse(from) > Date.parse(to);
  return (
    <section className="device-trail" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Trail</h2>
      {/* Keyed by the range: the inputs show the URL's range again after it changes (back, reset). */}
      <form key={`${from}/${to}`} className="trail-range" aria-label="Trail time range" onSubmit={apply}>
        <div className="field">
          <label htmlFor={`${id}-from`}>From</label>
          <input id={`${id}-from`} name="from" type="datetime-local" defaultValue={toLocalInput(from)} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-to`}>To</label>
          <input id={`${id}-to`} name="to" type="datetime-local" defaultValue={toLocalInput(to)} />
        </div>
        <div className="button-row">
          <button type="submit">Show trail</button>
          <button type="button" disabled={!from && !to} onClick={() => setQuery({ from: null, to: null })}>
            Latest locations
          </button>
        </div>
      </form>
      <p className="hint" role="status" data-testid="device-trail">
        {trailText(from, to, trail, error, invalid)}
      </p>
      <label className="check">
        <input
          type="checkbox"
          checked={follow}
          onChange={(event) => setQuery({ follow: event.target.checked ? '1' : null })}
        />{' '}
        Follow the device (the map keeps it in view as it moves)
      </label>
      {follow && !hasPosition ? (
        <p className="hint">Following starts with the device’s first location.</p>
      ) : null}
    </section>
  );
}

function trailText(
  from: string | null,
  to: string | null,
  trail: TrailRange | null,
  error: boolean,
  invalid: boolean,
): string {
  if (invalid) return 'The start of the range is after its end: no location can be in it.';
  if (error) return 'The trail could not be loaded.';
  if (trail === null) return 'Loading the trail…';
  const range =
    from && to
      ? `between ${formatTime(from)} and ${formatTime(to)}`
      : from
        ? `since ${formatTime(from)}`
        : to
          ? `until ${formatTime(to)}`
          : null;
  const n = trail.points;
  const count = `${n.toLocaleString()} ${n === 1 ? 'location' : 'locations'}`;
  if (range === null)
    return n === 0
      ? 'No locations yet.'
      : `The latest ${count}${trail.more ? ' (older ones: pick a range)' : ''}.`;
  if (n === 0) return `No locations ${range}.`;
  return `${count} ${range}${trail.more ? ' (only the newest are drawn: narrow the range to see the rest)' : ''}.`;
}
