/** The server's settings for the dashboard (`GET /config.json`), fetched once. */
export interface DashboardConfig {
  /** A tile URL template (`{z}/{x}/{y}`), or null: the map then draws a graticule on a plain background. */
  map_tile_url: string | null;
  map_tile_attribution: string | null;
}

let loaded: Promise<DashboardConfig> | null = null;

export function dashboardConfig(): Promise<DashboardConfig> {
  loaded ??= fetch('/config.json')
    .then((r) =>
      r.ok ? (r.json() as Promise<DashboardConfig>) : Promise.reject(new Error(String(r.status))),
    )
    .catch(() => ({ map_tile_url: null, map_tile_attribution: null }));
  return loaded;
}
