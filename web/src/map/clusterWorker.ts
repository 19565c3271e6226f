/**
 * Clustering off the main thread: the worker keeps every device position and a supercluster index
 * of them, and answers "what is in this view at this zoom". Building the index for 10,000 points
 * takes tens of milliseconds — more than a frame — so it happens here, at most every
 * REBUILD_EVERY_MS while positions keep changing, and the page never waits for it.
 */
import Supercluster, { type ClusterProperties, type PointFeature as Feature } from 'supercluster';
import { type ClusterRequest, type ClusterResponse, ITEM_STRIDE } from './clusterProtocol.ts';

interface PointProps {
  i: number;
  inside: number;
}
interface ClusterProps {
  inside: number;
}
type Index = Supercluster<PointProps, ClusterProps>;
type PointFeature = Feature<PointProps>;

const REBUILD_EVERY_MS = 250;
/** Indexes kept after a rebuild, so a click on a cluster drawn from an older one still expands. */
const KEPT_BUILDS = 3;

const scope = self as unknown as {
  postMessage(message: ClusterResponse, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<ClusterRequest>) => void) | null;
};

/** One feature object per device, updated in place (no garbage per rebuild). */
const points: PointFeature[] = [];
const builds = new Map<number, Index>();
let build = 0;
let builtAt = 0;
let dirty = false;
let timer: ReturnType<typeof setTimeout> | undefined;
let view: { bbox: [number, number, number, number]; zoom: number; seq: number } | null = null;

function setPoint(i: number, lng: number, lat: number, inside: number): void {
  const point = points[i];
  if (point) {
    point.geometry.coordinates[0] = lng;
    point.geometry.coordinates[1] = lat;
    point.properties.inside = inside;
  } else {
    points[i] = {
      type: 'Feature',
      properties: { i, inside },
      geometry: { type: 'Point', coordinates: [lng, lat] },
    };
  }
}

function rebuild(): void {
  clearTimeout(timer);
  timer = undefined;
  const index: Index = new Supercluster<PointProps, ClusterProps>({
    radius: 60,
    maxZoom: 16,
    minPoints: 2,
    map: (props) => ({ inside: props.inside }),
    reduce: (total, props) => {
      total.inside += props.inside;
    },
  });
  index.load(points);
  build += 1;
  builds.set(build, index);
  builds.delete(build - KEPT_BUILDS);
  builtAt = performance.now();
  dirty = false;
}

function answer(): void {
  const index = builds.get(build);
  if (!view || !index) return;
  const features = index.getClusters(view.bbox, view.zoom);
  const items = new Float64Array(features.length * ITEM_STRIDE);
  features.forEach((feature, k) => {
    const o = k * ITEM_STRIDE;
    const props = feature.properties as Partial<ClusterProperties> & Partial<PointProps>;
    items[o] = feature.geometry.coordinates[0] ?? 0;
    items[o + 1] = feature.geometry.coordinates[1] ?? 0;
    if (props.cluster) {
      items[o + 2] = props.point_count ?? 0;
      items[o + 3] = props.cluster_id ?? 0;
    } else {
      items[o + 2] = 1;
      items[o + 3] = props.i ?? 0;
    }
    items[o + 4] = props.inside ?? 0;
  });
  scope.postMessage({ t: 'clusters', seq: view.seq, zoom: view.zoom, build, items }, [items.buffer]);
}

function scheduleRebuild(): void {
  dirty = true;
  if (timer !== undefined) return;
  const wait = Math.max(0, builtAt + REBUILD_EVERY_MS - performance.now());
  timer = setTimeout(() => {
    rebuild();
    answer();
  }, wait);
}

scope.onmessage = ({ data: message }) => {
  switch (message.t) {
    case 'set': {
      points.length = 0;
      for (let i = 0; i < message.lng.length; i++)
        setPoint(i, message.lng[i] ?? 0, message.lat[i] ?? 0, message.inside[i] ?? 0);
      rebuild();
      answer();
      break;
    }
    case 'patch': {
      for (let k = 0; k < message.idx.length; k++)
        setPoint(message.idx[k] ?? 0, message.lng[k] ?? 0, message.lat[k] ?? 0, message.inside[k] ?? 0);
      scheduleRebuild();
      break;
    }
    case 'view': {
      view = { bbox: message.bbox, zoom: message.zoom, seq: message.seq };
      if (dirty && performance.now() - builtAt >= REBUILD_EVERY_MS) rebuild();
      answer();
      break;
    }
    case 'expand': {
      let zoom: number | null = null;
      try {
        zoom = builds.get(message.build)?.getClusterExpansionZoom(message.id) ?? null;
      } catch {
        zoom = null;
      }
      scope.postMessage({ t: 'expand', seq: message.seq, zoom });
      break;
    }
  }
};
