/**
 * Usage of this period against every limit (GET /subscriptions/usage): one meter per limit, its
 * numbers written out beside the bar, and the daily series of events and API requests as a chart
 * with the same numbers in a table for readers who cannot see it. The chart's module (uPlot) is
 * fetched only when this section shows it.
 */
import { lazy, Suspense, useId } from 'react';
import { formatDay, formatPeriod, type Usage } from './billingFormat.ts';

const UsageChart = lazy(() => import('./UsageChart.tsx'));

interface Meter {
  label: string;
  used: number;
  limit: number | null;
  /** What the limit counts over, said after the numbers. */
  per?: string;
}

function metersOf(usage: Usage): Meter[] {
  return [
    { label: 'Events', used: usage.events.used, limit: usage.events.quota, per: 'this period' },
    {
      label: 'API requests',
      used: usage.api_requests.used_this_hour,
      limit: usage.api_requests.limit,
      per: 'in the last hour (the limit is per key)',
    },
    { label: 'Geofences', used: usage.geofences.count, limit: usage.geofences.limit },
    { label: 'Webhooks', used: usage.webhooks.count, limit: usage.webhooks.limit },
    { label: 'Devices', used: usage.devices.count, limit: usage.devices.limit },
  ];
}

export function UsageSection({ usage }: { usage: Usage }) {
  return (
    <section aria-labelledby="usage-title" className="billing-section">
      <h2 id="usage-title">Usage</h2>
      <p className="hint">
        Period {formatPeriod(usage.period_start, usage.period_end)} (UTC). Events beyond 120 % of the quota
        slow location ingestion down; beyond 150 % it stops until the period ends or the plan changes.
      </p>
      <ul className="meters">
        {metersOf(usage).map((meter) => (
          <li key={meter.label}>
            <UsageMeter meter={meter} />
          </li>
        ))}
      </ul>
      <h3 id="daily-title" className="billing-subtitle">
        Daily events and API requests
      </h3>
      {usage.daily.length === 0 ? (
        <p>No days in this period yet.</p>
      ) : (
        <>
          <Suspense fallback={<p role="status">Loading the chart…</p>}>
            <UsageChart daily={usage.daily} />
          </Suspense>
          <details className="chart-data">
            <summary className="chart-data-summary">The chart's numbers as a table</summary>
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: scrolled on small screens, reachable by keyboard */}
            <section className="table-wrap" aria-label="Daily usage table" tabIndex={0}>
              <table>
                <caption>Daily usage of this period</caption>
                <thead>
                  <tr>
                    <th scope="col">Day (UTC)</th>
                    <th scope="col">Events</th>
                    <th scope="col">API requests</th>
                  </tr>
                </thead>
                <tbody>
                  {usage.daily.map((day) => (
                    <tr key={day.date}>
                      <th scope="row">
                        <time dateTime={day.date}>{formatDay(day.date)}</time>
                      </th>
                      <td>{day.events.toLocaleString()}</td>
                      <td>{day.api_requests.toLocaleString()}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          </details>
        </>
      )}
    </section>
  );
}

/**
 * A bar with its numbers as text. The bar is a `progressbar` with a value text, so a screen reader
 * reads "Events: 1,200 of 10,000 (12 %)"; a use over the limit fills the bar and says by how much.
 */
function UsageMeter({ meter }: { meter: Meter }) {
  const id = useId();
  const { used, limit } = meter;
  const percent = limit === null ? null : limit === 0 ? (used > 0 ? Infinity : 0) : (used / limit) * 100;
  const text =
    limit === null
      ? `${used.toLocaleString()} (no limit)`
      : `${used.toLocaleString()} of ${limit.toLocaleString()}${
          percent !== null && Number.isFinite(percent) ? ` (${formatPercent(percent)})` : ''
        }`;
  // At the limit a count is full (the next create is refused); only a use beyond it is "over".
  const level =
    percent === null || limit === null ? 'none' : used > limit ? 'over' : percent >= 80 ? 'high' : 'ok';
  return (
    <div className={`meter meter-${level}`}>
      <div className="meter-head">
        <span id={`${id}-label`} className="meter-label">
          {meter.label}
        </span>
        <span className="meter-text">
          {text}
          {meter.per ? <span className="hint"> {meter.per}</span> : null}
        </span>
      </div>
      {limit === null ? null : (
        <div
          className="meter-bar"
          role="progressbar"
          aria-labelledby={`${id}-label`}
          aria-valuemin={0}
          aria-valuemax={limit}
          aria-valuenow={Math.min(used, limit)}
          aria-valuetext={level === 'over' ? `${text}, over the limit` : text}
        >
          <div className="meter-fill" style={{ width: `${Math.min(percent ?? 0, 100)}%` }} />
        </div>
      )}
      {level === 'over' ? <p className="meter-warning">Over the limit of the plan.</p> : null}
    </div>
  );
}

function formatPercent(percent: number): string {
  return `${percent < 10 ? percent.toFixed(1) : Math.round(percent).toLocaleString()} %`;
}
