import { longU16 } from './long-lived.ts';

/**
 * Arena of Uint16 blocks (the polygons' cell grids), in chunks: a block is addressed by a global offset
 * `chunk << ARENA_CHUNK_BITS | local` and never straddles two chunks. The first chunk grows by doubling up to
 * the full chunk size (unless a larger capacity is given up front); then new full chunks are added, so growing never copies more than one chunk's worth
 * and never leaves more than one chunk partly unused (grids are built lazily, during lookups: a doubling
 * array would copy up to its whole size in the middle of a lookup and leave up to half of it unused).
 */
export const ARENA_CHUNK_BITS = 20;
/** Words per full chunk (2 MB). */
export const ARENA_CHUNK_WORDS = 1 << ARENA_CHUNK_BITS;
export const ARENA_CHUNK_MASK = ARENA_CHUNK_WORDS - 1;

export class U16Arena {
  /** Chunks; the last one is being filled. */
  readonly chunks: Uint16Array[];
  #current = 0;
  /** Words used in the current chunk. */
  used = 0;

  /**
   * `capacity` words: the first chunk's initial size, up to a full chunk. Further chunks are allocated when
   * the previous one is full, not up front: the payload arrays schedule no GC (long-lived.ts), and a
   * background compaction, which knows its total, must not zero ~85 MB in one step.
   */
  constructor(capacity = 1024) {
    this.chunks = [longU16(Math.min(ARENA_CHUNK_WORDS, Math.max(16, capacity)))];
  }

  /**
   * Room for a block of `n` ≤ ARENA_CHUNK_WORDS words starting at a multiple of 4 words (so that the 4- and
   * 8-byte records inside never straddle a cache line); returns its global offset. The words are zero only
   * if never used before (blocks are written in full by their builder).
   */
  alloc(n: number): number {
    let chunk = this.chunks[this.#current] as Uint16Array;
    let at = (this.used + 3) & ~3;
    if (at + n > chunk.length) {
      if (chunk.length < ARENA_CHUNK_WORDS && this.#current === 0) {
        const next = longU16(Math.min(ARENA_CHUNK_WORDS, Math.max(2 * chunk.length, at + n)));
        next.set(chunk.subarray(0, this.used));
        this.chunks[0] = next;
        chunk = next;
      }
      if (at + n > chunk.length) {
        this.#current++;
        if (this.#current === this.chunks.length) this.chunks.push(longU16(ARENA_CHUNK_WORDS));
        at = 0;
      }
    }
    this.used = at + n;
    return this.#current * ARENA_CHUNK_WORDS + at;
  }

  /** The chunk holding global offset `at`. */
  chunk(at: number): Uint16Array {
    return this.chunks[at >>> ARENA_CHUNK_BITS] as Uint16Array;
  }

  get byteLength(): number {
    let bytes = 0;
    for (const c of this.chunks) bytes += c.byteLength;
    return bytes;
  }
}
