/**
 * The daily series of this period as a uPlot chart: events as bars on the left axis, API requests
 * as a dashed line on the right (they differ by orders of magnitude). Each has its own scale, so
 * two lines of proportional counts would lie on top of each other and read as one: bars and a line
 * stay two. The time axis steps in whole days (uPlot would pick hours for a period a few days old).
 * Loaded lazily by the usage section, so uPlot is fetched only by this page. The canvas is an image
 * to assistive technology; the same numbers are in the table under it.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Usage } from './billingFormat.ts';

const EVENTS_COLOUR = '#0b5cad';
const REQUESTS_COLOUR = '#b3400b';
const HEIGHT = 240;
const DAY = 86_400;
/** Tick steps of the time axis: a day, or whole multiples of days when the days do not fit. */
const DAY_STEPS = [DAY, 2 * DAY, 7 * DAY, 14 * DAY];

const dayLabel = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** Days are UTC dates: the axis says the date of the period, not the reader's local one. */
const utc = (seconds: number): Date => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');

/** Counts start at zero; an empty series still gets a visible axis (0..1). */
const fromZero = (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, Math.max(max, 1)];

/** Half a day either side: the first and last days' bars are drawn whole. */
const wholeDays = (_u: uPlot, min: number, max: number): uPlot.Range.MinMax => [min - DAY / 2, max + DAY / 2];

/** Ticks on midnights (UTC) only, labelled with the date. */
const daySplits = (_u: uPlot, _axis: number, min: number, max: number, step: number): number[] => {
  const splits: number[] = [];
  for (let t = Math.ceil(min / DAY) * DAY; t <= max; t += step) splits.push(t);
  return splits;
};
const dayValues = (_u: uPlot, splits: number[]): string[] =>
  splits.map((t) => dayLabel.format(new Date(t * 1000)));

export default function UsageChart({ daily }: { daily: Usage['daily'] }) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const data: uPlot.AlignedData = [
      daily.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000),
      daily.map((d) => d.events),
      daily.map((d) => d.api_requests),
    ];
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height: HEIGHT,
      tzDate: utc,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: wholeDays },
        events: { range: fromZero },
        requests: { range: fromZero },
      },
      series: [
        {},
        {
          label: 'Events',
          scale: 'events',
          stroke: EVENTS_COLOUR,
          width: 1,
          fill: 'rgba(11, 92, 173, 0.35)',
          paths: uPlot.paths.bars?.({ size: [0.6, 48] }),
          points: { show: false },
        },
        {
          label: 'API requests',
          scale: 'requests',
          stroke: REQUESTS_COLOUR,
          width: 2,
          dash: [6, 4],
          points: { show: true, size: 5 },
        },
      ],
      axes: [
        {
          stroke: '#4a5663',
          grid: { stroke: '#e3e8ee' },
          space: 56,
          incrs: DAY_STEPS,
          splits: daySplits,
          values: dayValues,
        },
        { scale: 'events', stroke: EVENTS_COLOUR, grid: { stroke: '#e3e8ee' }, size: 60 },
        { scale: 'requests', side: 1, stroke: REQUESTS_COLOUR, grid: { show: false }, size: 60 },
      ],
    };
    const chart = new uPlot(options, data, element);
    // The panel narrows with the window (and to a phone's width): the chart follows it.
    const resize = new ResizeObserver(() => {
      const width = Math.max(element.clientWidth, 200);
      if (width !== chart.width) chart.setSize({ width, height: HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [daily]);

  const total = daily.reduce((sum, d) => sum + d.events, 0);
  const requests = daily.reduce((sum, d) => sum + d.api_requests, 0);
  return (
    <figure className="usage-chart">
      <div
        ref={box}
        className="usage-chart-canvas"
        role="img"
        aria-label={`Chart of daily events (${total.toLocaleString()} in all) and API requests (${requests.toLocaleString()} in all) over ${daily.length} days; the table below lists each day.`}
      />
      <figcaption className="chart-legend">
        <span className="legend-events">Events a day (bars, left axis)</span>
        <span className="legend-requests">API requests a day (dashed line, right axis)</span>
      </figcaption>
    </figure>
  );
}
