/** Messages between the devices map and its clustering worker (clusterWorker.ts). */

export type ClusterRequest =
  /** Replaces every position (index i = device i). */
  | { t: 'set'; lng: Float64Array; lat: Float64Array; inside: Uint8Array }
  /** Moves (or adds, at the next free index) some devices. */
  | { t: 'patch'; idx: Int32Array; lng: Float64Array; lat: Float64Array; inside: Uint8Array }
  /** The visible area: answered now, and again after each rebuild while it stays the view. */
  | { t: 'view'; bbox: [number, number, number, number]; zoom: number; seq: number }
  /** The zoom at which a cluster (of the index `build`) splits. */
  | { t: 'expand'; build: number; id: number; seq: number };

export type ClusterResponse =
  | { t: 'clusters'; seq: number; zoom: number; build: number; items: Float64Array }
  | { t: 'expand'; seq: number; zoom: number | null };

/** Numbers per item in `items`: lng, lat, count (1 = one device), cluster id or device index, inside. */
export const ITEM_STRIDE = 5;
