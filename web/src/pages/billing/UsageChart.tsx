/**
 * The daily series of this period as a uPlot chart: events on the left axis, API requests on the
 * right (they differ by orders of magnitude). Loaded lazily by the usage section, so uPlot is
 * fetched only by this page. The canvas is an image to assistive technology; the same numbers are
 * in the table under it.
 */
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Usage } from './billingFormat.ts';

const EVENTS_COLOUR = '#0b5cad';
const REQUESTS_COLOUR = '#b3400b';
const HEIGHT = 240;

/** Days are UTC dates: the axis says the date of the period, not the reader's local one. */
const utc = (seconds: number): Date => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC');

/** Counts start at zero; an empty series still gets a visible axis (0..1). */
const fromZero = (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, Math.max(max, 1)];

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
      scales: { x: { time: true }, events: { range: fromZero }, requests: { range: fromZero } },
      series: [
        {},
        {
          label: 'Events',
          scale: 'events',
          stroke: EVENTS_COLOUR,
          width: 2,
          fill: 'rgba(11, 92, 173, 0.08)',
          points: { show: true, size: 5 },
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
        { stroke: '#4a5663', grid: { stroke: '#e3e8ee' } },
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
        <span className="legend-events">Events (left axis)</span>
        <span className="legend-requests">API requests (right axis, dashed)</span>
      </figcaption>
    </figure>
  );
}
