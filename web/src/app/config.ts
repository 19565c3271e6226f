/** The server's settings for the dashboard (`GET /config.json`), fetched once. */
export interface DashboardConfig {
  /** A tile URL template (`{z}/{x}/{y}`), or null: the map then draws a graticule on a plain background. */
  map_tile_url: string | null;
  map_tile_attribution: string | null;
  /** A Nominatim-compatible search URL the map's "Go to" box asks for places, or null: no place search. */
  geocoder_url: string | null;
}

const NONE: DashboardConfig = { map_tile_url: null, map_tile_attribution: null, geocoder_url: null };

let loaded: Promise<DashboardConfig> | null = null;

export function dashboardConfig(): Promise<DashboardConfig> {
  loaded ??= fetch('/config.json')
    .then((r) =>
      r.ok ? (r.json() as Promise<DashboardConfig>) : Promise.reject(new Error(String(r.status))),
    )
    .then((config) => ({ ...NONE, ...config }))
    .catch(() => NONE);
  return loaded;
}
