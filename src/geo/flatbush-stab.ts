import type Flatbush from 'flatbush';

/**
 * Point ("stabbing") query over a finished Flatbush index, writing matching item indices into a reusable
 * buffer instead of allocating arrays: `Flatbush#search` allocates a result array and a JS-array queue per
 * call, which dominated the lookup cost in our measurements (docs/decisions/004-spatial-index.md).
 *
 * It walks Flatbush's packed Hilbert R-tree through the fields its type declarations expose
 * (`_boxes`, `_indices`, `_levelBounds`, `nodeSize`, `numItems`) with exactly the traversal of
 * `Flatbush#search` (flatbush 4.x, index.js); test/geo/flatbush-stab.test.ts checks it against
 * `search` so a layout change in a future flatbush version is caught.
 */
export class FlatbushStabber {
  readonly #index: Flatbush;
  #stack: Int32Array;
  /** Matching item indices of the last {@link stab} call are `hits[0 .. count)`. */
  hits: Int32Array;

  constructor(index: Flatbush) {
    this.#index = index;
    this.#stack = new Int32Array(64);
    this.hits = new Int32Array(64);
  }

  /** Items whose box contains (x, y) (boundary inclusive); returns their count, indices in `hits`. */
  stab(x: number, y: number): number {
    const index = this.#index;
    const boxes = index._boxes;
    const indices = index._indices;
    const levelBounds = index._levelBounds;
    const nodeSize = index.nodeSize;
    const numItems4 = index.numItems * 4;
    let stack = this.#stack;
    let hits = this.hits;
    let top = 0;
    let count = 0;
    let nodeIndex = boxes.length - 4;
    let level = levelBounds.length - 1;
    for (;;) {
      const end = Math.min(nodeIndex + nodeSize * 4, levelBounds[level] as number);
      if (nodeIndex >= numItems4) {
        for (let pos = nodeIndex; pos < end; pos += 4) {
          if (x < (boxes[pos] as number) || y < (boxes[pos + 1] as number)) continue;
          if (x > (boxes[pos + 2] as number) || y > (boxes[pos + 3] as number)) continue;
          if (top + 2 > stack.length) {
            const bigger = new Int32Array(stack.length * 2);
            bigger.set(stack);
            stack = bigger;
            this.#stack = stack;
          }
          stack[top++] = (indices[pos >> 2] as number) | 0;
          stack[top++] = level - 1;
        }
      } else {
        for (let pos = nodeIndex; pos < end; pos += 4) {
          if (x < (boxes[pos] as number) || y < (boxes[pos + 1] as number)) continue;
          if (x > (boxes[pos + 2] as number) || y > (boxes[pos + 3] as number)) continue;
          if (count === hits.length) {
            const bigger = new Int32Array(hits.length * 2);
            bigger.set(hits);
            hits = bigger;
            this.hits = hits;
          }
          hits[count++] = (indices[pos >> 2] as number) | 0;
        }
      }
      if (top === 0) return count;
      level = stack[--top] as number;
      nodeIndex = stack[--top] as number;
    }
  }
}
