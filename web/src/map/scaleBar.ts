/**
 * The scale bar every map shows, bottom left: metres and kilometres, with miles and feet beside
 * them where people measure roads in miles (the user's language names the region).
 */
import L from 'leaflet';

/** Regions whose roads are signed in miles. */
const MILES = new Set(['US', 'GB', 'LR', 'MM']);

export function scaleBar(languages: readonly string[] = navigator.languages): L.Control.Scale {
  return L.control.scale({ position: 'bottomleft', metric: true, imperial: usesMiles(languages[0]) });
}

function usesMiles(language: string | undefined): boolean {
  if (!language) return false;
  try {
    const region = new Intl.Locale(language).maximize().region;
    return region !== undefined && MILES.has(region);
  } catch {
    return false;
  }
}
