/**
 * The dashboard's Content-Security-Policy: scripts, styles and API calls from this origin only,
 * images also from the map tile server, and fetches also to the geocoder (GEOCODER_URL) when one is
 * set, which the browser asks directly. No inline script is ever allowed, so an injected string
 * cannot run even if it reached the page.
 */
export interface PolicySources {
  mapTileUrl: string | undefined;
  geocoderUrl: string | undefined;
}

export function contentSecurityPolicy({ mapTileUrl, geocoderUrl }: PolicySources): string {
  const tiles = mapTileUrl ? ` ${tileOrigin(mapTileUrl)}` : '';
  // Exactly the geocoder's origin: the page can reach no other host with fetch.
  const geocoder = geocoderUrl ? ` ${new URL(geocoderUrl).origin}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${tiles}`,
    `connect-src 'self'${geocoder}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The origin of a tile template; a `{s}` subdomain placeholder becomes a wildcard. */
export function tileOrigin(template: string): string {
  const match = /^(https?):\/\/([^/]+)/.exec(template);
  if (!match) return '';
  return `${match[1]}://${(match[2] ?? '').replace(/\{s\}/g, '*')}`;
}
