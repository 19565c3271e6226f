import { randomFillSync } from 'node:crypto';

// Random bytes are drawn from a pool refilled 4 KiB at a time: one syscall per 256 ids instead of one each.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function random16(): Buffer {
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const bytes = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  return bytes;
}

let lastMs = 0;
let sequence = 0;

/**
 * UUID version 7 (RFC 9562): 48-bit Unix milliseconds, then randomness, so ids sort by creation
 * time and index well. A 12-bit counter in `rand_a` keeps ids from one process monotonic within
 * a millisecond (RFC 9562 §6.2, method 1).
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (nowMs <= lastMs) {
    sequence += 1;
    if (sequence > 0xfff) {
      lastMs += 1;
      sequence = 0;
    }
  } else {
    lastMs = nowMs;
    sequence = 0;
  }
  const bytes = random16();
  const ms = lastMs;
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
  bytes[2] = (ms >>> 24) & 0xff;
  bytes[3] = (ms >>> 16) & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A UUID version 7 greater than `floor` (another UUID version 7): `uuidv7()`, unless `floor` is not
 * older, as when another node's clock runs ahead; then one from the millisecond after `floor`'s.
 * Ingestion uses it so that a device's location ids sort in the order they were applied, across
 * nodes too (ties on the location time go to the larger id: devices/last-location.repository.ts).
 */
export function uuidv7After(floor: string): string {
  const id = uuidv7();
  if (id > floor) return id;
  const floorMs = Number.parseInt(floor.slice(0, 8) + floor.slice(9, 13), 16);
  return uuidv7(floorMs + 1);
}
