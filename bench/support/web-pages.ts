/**
 * What bench:web runs inside the browser, as source text (the bench has no DOM types): frame-time
 * sampling, the marks of the sign-in-to-usable-map measurement, and the bare Leaflet reference page
 * (the same data drawn by Leaflet's canvas renderer with nothing else around it).
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** requestAnimationFrame deltas (ms) over `ms` milliseconds. */
export function frameDeltas(page: Page, ms: number): Promise<number[]> {
  return page.evaluate<number[]>(`new Promise((resolve) => {
    const deltas = [];
    let last;
    const end = performance.now() + ${ms};
    const tick = (now) => {
      if (last !== undefined) deltas.push(now - last);
      last = now;
      if (now < end) requestAnimationFrame(tick);
      else resolve(deltas);
    };
    requestAnimationFrame(tick);
  })`);
}

/**
 * Init script: stamps the first form submission and the moment the devices map container says it
 * is ready (`.map[data-ready="true"]`), both on the page's own clock. Sign-in navigates inside the
 * single-page app, so one document sees both.
 */
export const READY_MARKS = `(() => {
  const marks = { submitAt: null, readyAt: null };
  window.__benchMarks = marks;
  document.addEventListener('submit', () => { if (marks.submitAt === null) marks.submitAt = performance.now(); }, true);
  const check = () => {
    if (marks.readyAt === null && document.querySelector('.map[data-ready="true"]')) marks.readyAt = performance.now();
  };
  new MutationObserver(check).observe(document, {
    subtree: true, childList: true, attributes: true, attributeFilter: ['data-ready'],
  });
})();`;

export interface ReadyMarks {
  submitAt: number | null;
  readyAt: number | null;
}

export function readyMarks(page: Page): Promise<ReadyMarks> {
  return page.evaluate<ReadyMarks>('window.__benchMarks');
}

export interface BenchData {
  /** Device positions, [lng, lat]. */
  points: Array<[number, number]>;
  /** Geofence circles. */
  fences: Array<{ lng: number; lat: number; radius: number }>;
}

const leafletDir = path.dirname(
  createRequire(path.resolve(import.meta.dirname, '../../web/package.json')).resolve(
    'leaflet/dist/leaflet.js',
  ),
);

/**
 * A blank page with Leaflet and `data` in `window.__data`. The page has no CSP: it is not the
 * dashboard, only Leaflet doing the same drawing.
 */
export async function openBareLeaflet(page: Page, data: BenchData): Promise<void> {
  await page.setContent(
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Leaflet reference</title></head>' +
      '<body style="margin:0"><div id="map" style="width:100vw;height:100vh"></div></body></html>',
  );
  await page.addStyleTag({ path: path.join(leafletDir, 'leaflet.css') });
  await page.addScriptTag({ path: path.join(leafletDir, 'leaflet.js') });
  await page.evaluate(`window.__data = ${JSON.stringify(data)}`);
}

/**
 * Draws the geofences as circles and the points as circleMarkers on one canvas, fitted to the
 * points, and answers the milliseconds until that is painted (two frames).
 */
export function drawBareLeaflet(page: Page): Promise<number> {
  return page.evaluate<number>(`(() => {
    const t0 = performance.now();
    const { points, fences } = window.__data;
    const renderer = L.canvas({ padding: 0.5, tolerance: 4 });
    const map = L.map('map', { preferCanvas: true, renderer });
    map.fitBounds(L.latLngBounds(points.map(([lng, lat]) => [lat, lng])));
    for (const f of fences) L.circle([f.lat, f.lng], { radius: f.radius, renderer, weight: 1 }).addTo(map);
    window.__markers = points.map(([lng, lat]) => L.circleMarker([lat, lng], { radius: 4, renderer, weight: 1 }).addTo(map));
    return new Promise((resolve) =>
      requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0))),
    );
  })()`);
}

/** Moves the first `movers` markers of the bare page a little every second, as the live map would. */
export function moveBareLeafletMarkers(page: Page, movers: number): Promise<unknown> {
  return page.evaluate(`(() => {
    let step = 0;
    window.__moving = setInterval(() => {
      step++;
      const markers = window.__markers;
      for (let i = 0; i < ${movers} && i < markers.length; i++) {
        const [lng, lat] = window.__data.points[i];
        markers[i].setLatLng([lat + 0.0005 * Math.sin(step + i), lng + 0.0005 * Math.cos(step + i)]);
      }
    }, 1000);
  })()`);
}
