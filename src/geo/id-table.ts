/**
 * Slots by id: open addressing over an Int32Array with an FNV-1a hash of the id's characters, comparing
 * against the store's own id array (no second copy of the ids). Built during the bulk build anyway (to find
 * repeated ids) and kept as the index's id → slot map: filling a Map<string, number> with 100 000 fresh
 * strings would land on the first `has`/`upsert`/`remove` after a build, a pause proportional to the
 * fence count.
 * Entries are never deleted: a removed fence keeps its entry and the index checks the slot's tombstone.
 */
export class IdTable {
  #table: Int32Array;
  #count = 0;
  /** Id of each slot: the array the store builder fills and the store keeps. */
  readonly #ids: readonly string[];

  constructor(expected: number, ids: readonly string[]) {
    this.#table = new Int32Array(tableSize(expected)).fill(-1);
    this.#ids = ids;
  }

  /** Record `id` at `slot`; returns the slot it had before, or −1. */
  put(id: string, slot: number): number {
    if (2 * (this.#count + 1) > this.#table.length) this.#grow();
    const t = this.#table;
    const mask = t.length - 1;
    for (let h = hashId(id) & mask; ; h = (h + 1) & mask) {
      const at = t[h] as number;
      if (at < 0) {
        t[h] = slot;
        this.#count++;
        return -1;
      }
      if (this.#ids[at] === id) {
        t[h] = slot;
        return at;
      }
    }
  }

  /** The slot recorded for `id`, or −1. */
  get(id: string): number {
    const t = this.#table;
    const mask = t.length - 1;
    for (let h = hashId(id) & mask; ; h = (h + 1) & mask) {
      const at = t[h] as number;
      if (at < 0 || this.#ids[at] === id) return at;
    }
  }

  get byteLength(): number {
    return this.#table.byteLength;
  }

  #grow(): void {
    const old = this.#table;
    const t = new Int32Array(2 * old.length).fill(-1);
    const mask = t.length - 1;
    for (const at of old) {
      if (at < 0) continue;
      let h = hashId(this.#ids[at] as string) & mask;
      while ((t[h] as number) >= 0) h = (h + 1) & mask;
      t[h] = at;
    }
    this.#table = t;
  }
}

function tableSize(expected: number): number {
  let size = 16;
  while (size < 2 * expected) size *= 2;
  return size;
}

/** FNV-1a over the UTF-16 code units, with a final xor-shift. */
function hashId(id: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 15);
}
