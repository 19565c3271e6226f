/** The main-thread side of the clustering worker: posts positions and views, hands back answers. */
import type { ClusterRequest, ClusterResponse } from './clusterProtocol.ts';

export interface ClusterAnswer {
  zoom: number;
  /** Which index the cluster ids refer to (for `expansionZoom`). */
  build: number;
  items: Float64Array;
}

export class ClusterClient {
  #worker = new Worker(new URL('./clusterWorker.ts', import.meta.url), { type: 'module' });
  #seq = 0;
  #viewSeq = 0;
  #expansions = new Map<number, (zoom: number | null) => void>();

  constructor(onAnswer: (answer: ClusterAnswer) => void) {
    this.#worker.onmessage = ({ data }: MessageEvent<ClusterResponse>) => {
      if (data.t === 'clusters') {
        // An answer for a view that has since changed is dropped: the newer one is on its way.
        if (data.seq === this.#viewSeq) onAnswer({ zoom: data.zoom, build: data.build, items: data.items });
      } else {
        this.#expansions.get(data.seq)?.(data.zoom);
        this.#expansions.delete(data.seq);
      }
    };
  }

  /** Replaces every position (copies: the caller keeps its arrays). */
  set(size: number, lng: Float64Array, lat: Float64Array, inside: Uint8Array): void {
    this.#post({ t: 'set', lng: lng.slice(0, size), lat: lat.slice(0, size), inside: inside.slice(0, size) });
  }

  /** Moves or adds devices; the arrays are handed over (transferred), not copied. */
  patch(idx: Int32Array, lng: Float64Array, lat: Float64Array, inside: Uint8Array): void {
    this.#post({ t: 'patch', idx, lng, lat, inside }, [idx.buffer, lng.buffer, lat.buffer, inside.buffer]);
  }

  view(bbox: [number, number, number, number], zoom: number): void {
    this.#viewSeq = ++this.#seq;
    this.#post({ t: 'view', bbox, zoom, seq: this.#viewSeq });
  }

  expansionZoom(build: number, id: number): Promise<number | null> {
    const seq = ++this.#seq;
    return new Promise((resolve) => {
      this.#expansions.set(seq, resolve);
      this.#post({ t: 'expand', build, id, seq });
    });
  }

  destroy(): void {
    this.#worker.terminate();
    for (const resolve of this.#expansions.values()) resolve(null);
    this.#expansions.clear();
  }

  #post(message: ClusterRequest, transfer: Transferable[] = []): void {
    this.#worker.postMessage(message, transfer);
  }
}
