/**
 * Drawing on the Geofences page with the mouse, in [lng, lat] (GeoJSON order), for browser tests.
 *
 * Where a position is on the screen comes from what the page already publishes, nothing added for
 * tests: the map view in its address (`view=lat,lng,zoom`, kept current on every move) and the map's
 * box on the page. Leaflet's Web Mercator puts the view's centre at the middle of that box, so any
 * position's pixel is the centre plus the difference of their projections at that zoom. Leaflet
 * rounds its pixel origin, so a drawn vertex lands within about a pixel of the position asked for:
 * compare with that tolerance (a pixel is 156,543 m × cos(lat) / 2^zoom, ~3 m at zoom 15 in Berlin). Open the page at a known view (`page.goto('/geofences?view=52.52,13.405,15')`, also through
 * sign-in, which keeps `next`) or move there with `showView`, and draw within what is visible.
 *
 * The toolbar buttons are Geoman's, named by the page (`TOOL_TITLES` in web/src/map/drawTools.ts):
 * "Draw polygon", "Draw rectangle", "Draw circle", "Edit vertices", "Move shape", "Cut a hole".
 * A polygon (or a hole) is finished by clicking its first vertex again; a circle by a second click
 * at the radius.
 *
 * The Devices page keeps its map's view in the address the same way: `pixelOf` and `clickMap` take
 * that map's locator for clicks there (the location simulator).
 *
 * The code that runs in the page is passed as strings: the tests run in Node, without DOM types.
 */
import type { Locator, Page } from 'playwright-core';

export type LngLat = readonly [number, number];
export interface MapView {
  lat: number;
  lng: number;
  zoom: number;
}

/** Leaflet's Earth radius (`L.CRS.Earth.R`): a radius drawn with the mouse is measured with it. */
const LEAFLET_EARTH_RADIUS = 6_371_000;
const MAX_LATITUDE = 85.0511287798;

export const TOOLS = {
  polygon: 'Draw polygon',
  rectangle: 'Draw rectangle',
  circle: 'Draw circle',
  edit: 'Edit vertices',
  move: 'Move shape',
  cut: 'Cut a hole',
} as const;

export function geofenceMap(page: Page): Locator {
  return page.getByRole('application', { name: 'Geofence map' });
}

export function tool(page: Page, title: (typeof TOOLS)[keyof typeof TOOLS]): Locator {
  return page.getByRole('button', { name: title, exact: true });
}

/** The view the page shows, from its address. */
export function currentView(page: Page): MapView {
  const raw = new URL(page.url()).searchParams.get('view');
  const [lat, lng, zoom] = (raw ?? '').split(',').map(Number);
  if (lat === undefined || lng === undefined || zoom === undefined || [lat, lng, zoom].some(Number.isNaN)) {
    throw new Error(`no map view in ${page.url()}: open the page with ?view=lat,lng,zoom first`);
  }
  return { lat, lng, zoom };
}

/** Moves the map the way Back/Forward would: a new address, then `popstate`, which the page follows. */
export async function showView(page: Page, view: MapView): Promise<void> {
  const url = new URL(page.url());
  url.searchParams.set('view', `${view.lat},${view.lng},${view.zoom}`);
  const target = url.pathname + url.search;
  await page.evaluate(
    `history.pushState(null, '', ${JSON.stringify(target)}); dispatchEvent(new PopStateEvent('popstate'))`,
  );
  // Polled from Node: the page's CSP forbids the string evaluation `waitForFunction` would need.
  await page.waitForURL((url) => {
    const [lat, lng, zoom] = (url.searchParams.get('view') ?? '').split(',').map(Number);
    return (
      lat !== undefined &&
      lng !== undefined &&
      Math.abs(lat - view.lat) < 1e-6 &&
      Math.abs(lng - view.lng) < 1e-6 &&
      zoom === view.zoom
    );
  });
}

function project([lng, lat]: LngLat, zoom: number): { x: number; y: number } {
  const size = 256 * 2 ** zoom;
  const clamped = Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, lat));
  const sin = Math.sin((clamped * Math.PI) / 180);
  return {
    x: ((lng + 180) / 360) * size,
    y: (0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * size,
  };
}

/**
 * Where a position is on the page (for `page.mouse`), in CSS pixels: on the Geofences page's map, or
 * on another page's map (`map`, e.g. the Devices page's) that keeps its view in the address the same way.
 */
export async function pixelOf(
  page: Page,
  position: LngLat,
  map: Locator = geofenceMap(page),
): Promise<{ x: number; y: number }> {
  const view = currentView(page);
  const box = await map.boundingBox();
  if (!box) throw new Error('the map is not on the page');
  const centre = project([view.lng, view.lat], view.zoom);
  const point = project(position, view.zoom);
  const x = box.x + box.width / 2 + (point.x - centre.x);
  const y = box.y + box.height / 2 + (point.y - centre.y);
  if (x < box.x || x > box.x + box.width || y < box.y || y > box.y + box.height) {
    throw new Error(`[${position.join(', ')}] is outside the map's view ${JSON.stringify(view)}`);
  }
  return { x, y };
}

/**
 * Leaflet's canvas renderer passes pointer moves on to the map at most once per 32 ms and drops the
 * rest (`_mouseHoverThrottled`), and Geoman places a vertex where its hint marker last followed the
 * pointer when that marker had snapped to something. A hand moves slowly enough; a test must pause
 * longer than that window between moves, or the last move is lost and the vertex lands where the
 * pointer was before.
 */
const CANVAS_MOVE_WINDOW_MS = 50;

async function pointAt(page: Page, x: number, y: number): Promise<void> {
  await page.mouse.move(x - 1, y - 1);
  await page.waitForTimeout(CANVAS_MOVE_WINDOW_MS);
  await page.mouse.move(x, y);
  await page.waitForTimeout(CANVAS_MOVE_WINDOW_MS);
}

/**
 * The pixel of a position the pointer can reach: on the map's panes, not under its controls. (An
 * active tool shows its "Finish"/"Cancel" actions beside its button; a click there ends the tool.)
 */
async function reachable(
  page: Page,
  position: LngLat,
  map: Locator = geofenceMap(page),
): Promise<{ x: number; y: number }> {
  // On a phone the map is above the panel and the page scrolls: bring the map back first.
  await map.scrollIntoViewIfNeeded();
  const { x, y } = await pixelOf(page, position, map);
  const over = await page.evaluate<string | null>(
    `(() => { const el = document.elementFromPoint(${x}, ${y});
      const control = el && el.closest('.leaflet-control-container .leaflet-control, .leaflet-popup');
      return control ? control.className : null; })()`,
  );
  if (over) throw new Error(`[${position.join(', ')}] is under a map control (${over}): draw elsewhere`);
  return { x, y };
}

async function clickAt(page: Page, position: LngLat, map: Locator = geofenceMap(page)): Promise<void> {
  const { x, y } = await reachable(page, position, map);
  await pointAt(page, x, y);
  await page.mouse.click(x, y);
}

/** Clicks a position on another page's map (`map`, whose view is in the address), e.g. the Devices page's. */
export async function clickMap(page: Page, map: Locator, position: LngLat): Promise<void> {
  await clickAt(page, position, map);
}

/** Clicks the vertices of a ring (not closed: the first position is not repeated), then the first again. */
async function clickRing(page: Page, ring: readonly LngLat[]): Promise<void> {
  const first = ring[0];
  if (!first || ring.length < 3) throw new Error('a ring needs at least three positions');
  for (const position of ring) await clickAt(page, position);
  await clickAt(page, first);
}

/** Draws a polygon: "Draw polygon", a click per vertex, a click on the first vertex to finish. */
export async function drawPolygon(page: Page, ring: readonly LngLat[]): Promise<void> {
  await tool(page, TOOLS.polygon).click();
  await clickRing(page, ring);
}

/** Draws a rectangle from one corner to the opposite one. */
export async function drawRectangle(page: Page, corner: LngLat, opposite: LngLat): Promise<void> {
  await tool(page, TOOLS.rectangle).click();
  await clickAt(page, corner);
  await clickAt(page, opposite);
}

/**
 * The position `metres` north of `centre` on Leaflet's sphere: a meridian is a great circle, so the
 * distance Leaflet measures between the two is exactly that.
 */
export function northOf([lng, lat]: LngLat, metres: number): LngLat {
  return [lng, lat + (metres / LEAFLET_EARTH_RADIUS) * (180 / Math.PI)];
}

/**
 * Draws a circle: "Draw circle", a click on the centre, a click `radiusM` north of it. The radius
 * lands within a pixel's worth of metres at the current zoom.
 */
export async function drawCircle(page: Page, centre: LngLat, radiusM: number): Promise<void> {
  await tool(page, TOOLS.circle).click();
  await clickAt(page, centre);
  await clickAt(page, northOf(centre, radiusM));
}

/** Cuts a hole in the selected or drawn polygon: "Cut a hole", then the hole's ring like a polygon. */
export async function cutHole(page: Page, ring: readonly LngLat[]): Promise<void> {
  await tool(page, TOOLS.cut).click();
  await clickRing(page, ring);
}

async function drag(page: Page, from: LngLat, to: LngLat): Promise<void> {
  const a = await reachable(page, from);
  const b = await reachable(page, to);
  await pointAt(page, a.x, a.y);
  await page.mouse.down();
  for (const t of [0.25, 0.5, 0.75, 1]) {
    await page.mouse.move(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t);
    await page.waitForTimeout(CANVAS_MOVE_WINDOW_MS);
  }
  await page.mouse.up();
}

/**
 * Drags one vertex of the shape being edited (or a circle's centre, or the handle on its edge) in
 * "Edit vertices" mode, then leaves the mode; the form's geometry follows.
 */
export async function moveVertex(page: Page, from: LngLat, to: LngLat): Promise<void> {
  await tool(page, TOOLS.edit).click();
  await drag(page, from, to);
  await tool(page, TOOLS.edit).click();
}

/** Moves the whole shape being edited by dragging it from one of its inner points to another place. */
export async function moveShape(page: Page, from: LngLat, to: LngLat): Promise<void> {
  await tool(page, TOOLS.move).click();
  await drag(page, from, to);
  await tool(page, TOOLS.move).click();
}

/** Clicks a geofence's shape on the map (with no tool on): it is selected in the list and the form. */
export async function clickShape(page: Page, inside: LngLat): Promise<void> {
  await clickAt(page, inside);
}
