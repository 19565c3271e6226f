/**
 * bench:ingest's tracker phase: the tracker routes of contract §4.6 against the JSON routes they
 * stand beside, on the running server, at 64 connections (target: server CPU per location at most
 * 1.2 × the JSON route's in the same run).
 *  - OsmAnd: `GET /ingest/osmand?id=…&lat=…&lon=…&timestamp=<epoch s>&speed=<knots>&…&token=…`, one
 *    location a request, against `POST /devices/{id}/locations` carrying the same fields (the
 *    device token as `Authorization: Bearer`), so that the two differ only in the format; and, for
 *    the record, the same JSON route with the workspace's one API key, which stays in the
 *    authenticator's cache where 10,000 devices' tokens, each used every few seconds, mostly do not;
 *  - Overland: `POST /ingest/overland` with 100 GeoJSON points of one device a request, against
 *    `POST /locations/batch` with the same 100 points (same token, as Bearer on both).
 * Every device of the workspace gets a device token of its own, and requests go round the devices
 * in turn, so one device's requests are far apart and arrive in order. Each device's timestamps
 * rise by one second a location, starting after its last stored one (so nothing is out of order and
 * every location is evaluated), and the points come one after the other from INGEST-10K's points
 * (devices jump across the region, as in the batch phase), so both routes of a pair produce about
 * as many events: the events per location are counted (`GET /events` totals) to show it, and the
 * newest locations of a few devices are checked for `out_of_order`.
 *
 * After a warm-up pass of each route, rounds of one pass of each route, a pair's passes back to
 * back and their order swapped every round (so a slow drift, the database growing, weighs on both alike). Per pass:
 * locations/s end to end and server CPU (user + system, all threads, from /proc) per location.
 * The ratio is the median over rounds of the tracker pass's CPU per location ÷ the JSON pass's.
 */
import autocannon from 'autocannon';
import { type Auth, api, pool } from './ingest-api.ts';
import { median, processCpuMs } from './load.ts';

export const TRACKER_CPU_TARGET = 1.2;
const CONNECTIONS = 64;
const BATCH_SIZE = 100;
/** One knot in metres per second: OsmAnd sends knots, the JSON routes take m/s. */
const KNOT = 1852 / 3600;
/** The fields every location carries, in each client's units. */
const SPEED_KNOTS = 4;
const HEADING = 90;
const ACCURACY_M = 10;
const ALTITUDE_M = 12;
const BATTERY = 0.8;
/** Timestamps start no earlier than this before the phase (well inside the stored history's month). */
const START_BEFORE_S = 30 * 60;
/** The service refuses timestamps more than 10 minutes ahead of its clock (contract §4.2). */
const MAX_LEAD_S = 9 * 60;

export interface TrackerOptions {
  base: string;
  serverPid: number | undefined;
  /** An API key of the workspace: lists its devices, makes their tokens, counts events. */
  auth: Auth;
  points: ReadonlyArray<[number, number]>;
  seconds: number;
  rounds: number;
}

/** `json_single_api_key`: the JSON single route with the workspace's API key instead, for the record. */
type Route = 'json_single' | 'osmand' | 'json_single_api_key' | 'json_batch' | 'overland';
const ROUTES: readonly Route[] = ['json_single', 'osmand', 'json_single_api_key', 'json_batch', 'overland'];

export interface PassFigures {
  locations_per_s: number;
  cpu_us_per_location: number;
  events_per_location: number;
}

export interface RouteFigures extends PassFigures {
  /** Medians over the timed passes (above); every pass below. */
  passes: PassFigures[];
  non_2xx: number;
}

export interface TrackerFigures {
  connections: number;
  batch_size: number;
  devices: number;
  rounds: number;
  json_single: RouteFigures;
  osmand: RouteFigures;
  json_single_api_key: RouteFigures;
  json_batch: RouteFigures;
  overland: RouteFigures;
  /** Median over rounds of OsmAnd's server CPU per location ÷ the JSON single route's. */
  osmand_vs_json_cpu_ratio: number;
  /** Median over rounds of Overland's server CPU per location ÷ the JSON batch route's. */
  overland_vs_batch_cpu_ratio: number;
  /**
   * For the record, not judged: OsmAnd against the JSON single route authenticated by the one API
   * key (cached across requests) rather than by each device's token (looked up again once its
   * device's last request is older than the authenticator's cache).
   */
  osmand_vs_json_api_key_cpu_ratio: number;
  target: number;
  met: boolean;
  /** The newest locations of a few devices, and how many of them were stored out of order (0 expected). */
  sampled_locations: number;
  sampled_out_of_order: number;
}

interface BenchDevice {
  id: string;
  externalId: string;
  token: string;
  /** Epoch seconds of its latest location so far. */
  last: number;
}

interface DeviceRow {
  id: string;
  external_id: string | null;
  last_location: { timestamp: string } | null;
}

/** Where the next request goes, when it says it is, and where it is: shared by every pass. */
class Feed {
  private nextDevice = 0;
  private nextPoint = 0;
  private readonly devices: readonly BenchDevice[];
  private readonly points: ReadonlyArray<[number, number]>;
  maxLeadS = 0;

  constructor(devices: readonly BenchDevice[], points: ReadonlyArray<[number, number]>) {
    this.devices = devices;
    this.points = points;
  }

  device(): BenchDevice {
    return this.devices[this.nextDevice++ % this.devices.length] as BenchDevice;
  }

  /** The device's next timestamp, one second after its last. */
  tick(device: BenchDevice): number {
    device.last += 1;
    this.maxLeadS = Math.max(this.maxLeadS, device.last - Date.now() / 1000);
    return device.last;
  }

  point(): [number, number] {
    return this.points[this.nextPoint++ % this.points.length] as [number, number];
  }
}

const iso = (epochS: number) => new Date(epochS * 1000).toISOString();

/** The next request of `route`, and the locations it carries. */
function nextRequest(route: Route, feed: Feed, apiKey: Auth): autocannon.Request {
  const device = feed.device();
  const bearer = { authorization: `Bearer ${device.token}` };
  const json = { 'content-type': 'application/json', ...bearer };
  if (route === 'osmand') {
    const [lng, lat] = feed.point();
    const query = new URLSearchParams({
      id: device.externalId,
      lat: String(lat),
      lon: String(lng),
      timestamp: String(feed.tick(device)),
      speed: String(SPEED_KNOTS),
      bearing: String(HEADING),
      accuracy: String(ACCURACY_M),
      batt: String(BATTERY * 100),
      token: device.token,
    });
    return { method: 'GET', path: `/api/v1/ingest/osmand?${query}`, headers: {} };
  }
  if (route === 'json_single' || route === 'json_single_api_key') {
    const [lng, lat] = feed.point();
    const body = {
      coordinates: [lng, lat],
      timestamp: iso(feed.tick(device)),
      speed: SPEED_KNOTS * KNOT,
      heading: HEADING,
      accuracy: ACCURACY_M,
      metadata: { batt: BATTERY * 100 },
    };
    return {
      method: 'POST',
      path: `/api/v1/devices/${device.id}/locations`,
      headers: route === 'json_single' ? json : { 'content-type': 'application/json', ...apiKey },
      body: JSON.stringify(body),
    };
  }
  const fixes = Array.from({ length: BATCH_SIZE }, () => ({ at: feed.tick(device), point: feed.point() }));
  if (route === 'overland') {
    const locations = fixes.map(({ at, point }) => ({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: point },
      properties: {
        timestamp: iso(at),
        speed: SPEED_KNOTS * KNOT,
        course: HEADING,
        horizontal_accuracy: ACCURACY_M,
        altitude: ALTITUDE_M,
        battery_level: BATTERY,
        device_id: device.externalId,
      },
    }));
    return {
      method: 'POST',
      path: '/api/v1/ingest/overland',
      headers: json,
      body: JSON.stringify({ locations }),
    };
  }
  // The batch items store what Overland's do: its extra properties become metadata.
  const locations = fixes.map(({ at, point }) => ({
    device_id: device.id,
    coordinates: point,
    timestamp: iso(at),
    speed: SPEED_KNOTS * KNOT,
    heading: HEADING,
    accuracy: ACCURACY_M,
    altitude: ALTITUDE_M,
    metadata: { battery_level: BATTERY, device_id: device.externalId },
  }));
  return {
    method: 'POST',
    path: '/api/v1/locations/batch',
    headers: json,
    body: JSON.stringify({ locations }),
  };
}

const perRequest = (route: Route) => (route === 'json_batch' || route === 'overland' ? BATCH_SIZE : 1);

async function eventsTotal(options: TrackerOptions): Promise<number> {
  const page = await api(options.base, 'GET', '/events?limit=1', undefined, options.auth);
  return Number((page.pagination as { total: number }).total);
}

interface Pass extends PassFigures {
  non2xx: number;
}

async function runPass(options: TrackerOptions, feed: Feed, route: Route, seconds: number): Promise<Pass> {
  const eventsBefore = await eventsTotal(options);
  const cpuBefore = processCpuMs(options.serverPid) ?? 0;
  const result = await autocannon({
    url: options.base,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ setupRequest: (request) => ({ ...request, ...nextRequest(route, feed, options.auth) }) }],
  });
  const cpuMs = (processCpuMs(options.serverPid) ?? 0) - cpuBefore;
  const events = (await eventsTotal(options)) - eventsBefore;
  const locations = result['2xx'] * perRequest(route);
  return {
    locations_per_s: Math.round(locations / seconds),
    cpu_us_per_location: locations > 0 ? Math.round(((cpuMs * 1000) / locations) * 10) / 10 : 0,
    events_per_location: locations > 0 ? Math.round((events / locations) * 1000) / 1000 : 0,
    non2xx: result.non2xx + result.errors,
  };
}

/** Every device of the workspace, each with a fresh device token. */
async function benchDevices(options: TrackerOptions): Promise<BenchDevice[]> {
  const rows: DeviceRow[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await api(
      options.base,
      'GET',
      `/devices?limit=200&offset=${offset}`,
      undefined,
      options.auth,
    );
    rows.push(...(page.results as DeviceRow[]));
    if (!(page.pagination as { has_more: boolean }).has_more) break;
  }
  const earliest = Math.floor(Date.now() / 1000) - START_BEFORE_S;
  const devices: BenchDevice[] = [];
  await pool(rows, 8, async (row) => {
    const answer = await api(
      options.base,
      'POST',
      `/devices/${row.id}/tokens`,
      { name: 'bench' },
      options.auth,
    );
    const stored = row.last_location ? Math.ceil(Date.parse(row.last_location.timestamp) / 1000) : 0;
    devices.push({
      id: row.id,
      externalId: row.external_id ?? row.id,
      token: String(answer.token),
      last: Math.max(stored, earliest),
    });
  });
  return devices;
}

/** One request of each route, its answer checked, before any timing. */
async function checkRoutes(options: TrackerOptions, feed: Feed): Promise<void> {
  for (const route of ROUTES) {
    const request = nextRequest(route, feed, options.auth);
    const res = await fetch(`${options.base}${request.path}`, {
      method: request.method as string,
      headers: request.headers as Record<string, string>,
      ...(request.body === undefined ? {} : { body: request.body as string }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`tracker phase: ${route} → ${res.status} ${text.slice(0, 300)}`);
    if (route === 'json_batch' && (JSON.parse(text) as { accepted: number }).accepted !== BATCH_SIZE) {
      throw new Error(`tracker phase: the batch was not stored whole: ${text.slice(0, 300)}`);
    }
  }
}

async function outOfOrderSample(options: TrackerOptions, devices: readonly BenchDevice[]) {
  let sampled = 0;
  let outOfOrder = 0;
  for (const device of devices.slice(0, 5)) {
    const page = await api(
      options.base,
      'GET',
      `/devices/${device.id}/locations?limit=200`,
      undefined,
      options.auth,
    );
    const rows = page.results as Array<{ out_of_order: boolean }>;
    sampled += rows.length;
    outOfOrder += rows.filter((row) => row.out_of_order).length;
  }
  return { sampled, outOfOrder };
}

function summary(passes: Pass[]): RouteFigures {
  const figures = passes.map(({ non2xx: _, ...figures }) => figures);
  return {
    locations_per_s: Math.round(median(figures.map((p) => p.locations_per_s))),
    cpu_us_per_location: Math.round(median(figures.map((p) => p.cpu_us_per_location)) * 10) / 10,
    events_per_location: Math.round(median(figures.map((p) => p.events_per_location)) * 1000) / 1000,
    passes: figures,
    non_2xx: passes.reduce((n, p) => n + p.non2xx, 0),
  };
}

/** Each group's passes run back to back, in its order on even rounds and reversed on odd ones. */
const GROUPS: ReadonlyArray<readonly Route[]> = [
  ['json_single', 'osmand', 'json_single_api_key'],
  ['json_batch', 'overland'],
];

export async function measureTrackers(options: TrackerOptions): Promise<TrackerFigures> {
  const devices = await benchDevices(options);
  const feed = new Feed(devices, options.points);
  await checkRoutes(options, feed);
  // Warm-up: the tracker routes have not run yet on this server.
  for (const route of ROUTES) await runPass(options, feed, route, Math.min(2, options.seconds));

  const rounds: Array<Map<Route, Pass>> = [];
  for (let round = 0; round < options.rounds; round++) {
    const got = new Map<Route, Pass>();
    for (const group of GROUPS) {
      const order = round % 2 === 0 ? group : [...group].reverse();
      for (const route of order) got.set(route, await runPass(options, feed, route, options.seconds));
    }
    rounds.push(got);
  }
  if (feed.maxLeadS > MAX_LEAD_S) {
    console.warn(
      `tracker phase: timestamps ran ${Math.round(feed.maxLeadS)} s ahead of the clock; use more devices or shorter passes`,
    );
  }
  const sample = await outOfOrderSample(options, devices);
  const of = (route: Route) => summary(rounds.map((got) => got.get(route) as Pass));
  /** Median over rounds of `a`'s CPU per location ÷ `b`'s in the same round. */
  const ratio = (a: Route, b: Route) =>
    Math.round(
      median(
        rounds.map(
          (got) =>
            (got.get(a) as Pass).cpu_us_per_location /
            Math.max(0.1, (got.get(b) as Pass).cpu_us_per_location),
        ),
      ) * 100,
    ) / 100;
  const osmandRatio = ratio('osmand', 'json_single');
  const overlandRatio = ratio('overland', 'json_batch');
  return {
    connections: CONNECTIONS,
    batch_size: BATCH_SIZE,
    devices: devices.length,
    rounds: options.rounds,
    json_single: of('json_single'),
    osmand: of('osmand'),
    json_single_api_key: of('json_single_api_key'),
    json_batch: of('json_batch'),
    overland: of('overland'),
    osmand_vs_json_cpu_ratio: osmandRatio,
    overland_vs_batch_cpu_ratio: overlandRatio,
    osmand_vs_json_api_key_cpu_ratio: ratio('osmand', 'json_single_api_key'),
    target: TRACKER_CPU_TARGET,
    met: osmandRatio <= TRACKER_CPU_TARGET && overlandRatio <= TRACKER_CPU_TARGET,
    sampled_locations: sample.sampled,
    sampled_out_of_order: sample.outOfOrder,
  };
}

/** The phase's lines for the report. */
export function describeTrackers(database: string, t: TrackerFigures): string[] {
  const line = (name: string, r: RouteFigures) =>
    `${name.padEnd(34)} ${r.locations_per_s} locations/s, server CPU ${r.cpu_us_per_location} µs per location, ${r.events_per_location} events per location` +
    (r.non_2xx > 0 ? `, ${r.non_2xx} requests not 2xx` : '');
  const mark = (ratio: number) => (ratio <= t.target ? 'met' : 'NOT met');
  return [
    `${database}: trackers at ${t.connections} connections, ${t.devices} devices with a device token each, medians of ${t.rounds} rounds:`,
    `  ${line('JSON single POST (device token)', t.json_single)}`,
    `  ${line('OsmAnd GET (?token=)', t.osmand)}`,
    `  ${line('JSON single POST (API key)', t.json_single_api_key)}`,
    `  OsmAnd ÷ JSON single: server CPU per location ${t.osmand_vs_json_cpu_ratio} × ≤ ${t.target}: ${mark(t.osmand_vs_json_cpu_ratio)} ` +
      `(÷ the API-key JSON POST, for the record: ${t.osmand_vs_json_api_key_cpu_ratio} ×)`,
    `  ${line(`JSON batch of ${t.batch_size} (device token)`, t.json_batch)}`,
    `  ${line(`Overland of ${t.batch_size} (device token)`, t.overland)}`,
    `  Overland ÷ JSON batch: server CPU per location ${t.overland_vs_batch_cpu_ratio} × ≤ ${t.target}: ${mark(t.overland_vs_batch_cpu_ratio)}`,
    `  out of order among the newest locations of 5 devices: ${t.sampled_out_of_order} of ${t.sampled_locations}`,
  ];
}
