/**
 * Request ids: a caller's sane X-Request-ID is kept so traces join up across services; otherwise a
 * UUIDv7 (RFC 9562) is made here. Every request needs one, so this generator avoids the general
 * `uuidv7()`'s per-id Buffer and hex encoding: the time part is formatted once per millisecond and
 * the random part is cut from a hex string refilled 4 KiB of randomness at a time (ADR 012). The
 * layout is the same: 48-bit Unix milliseconds, version 7, a 12-bit per-millisecond counter in
 * `rand_a` (RFC 9562 §6.2 method 1, so ids from one process sort by creation), variant 10, random.
 */
import { randomFillSync } from 'node:crypto';

const RANDOM_HEX_PER_ID = 16; // the variant nibble's source, 3 after it, 12 in the last group
const pool = Buffer.alloc(4096);
let randomHex = '';
let randomOffset = 0;

function nextRandomHex(): string {
  if (randomOffset + RANDOM_HEX_PER_ID > randomHex.length) {
    randomFillSync(pool);
    randomHex = pool.toString('hex');
    randomOffset = 0;
  }
  const hex = randomHex.slice(randomOffset, randomOffset + RANDOM_HEX_PER_ID);
  randomOffset += RANDOM_HEX_PER_ID;
  return hex;
}

let currentMs = -1;
let timePrefix = '';
let sequence = 0;
const SEQUENCE_HEX = Array.from({ length: 0x1000 }, (_, i) => i.toString(16).padStart(3, '0'));
// The variant nibble is 0b10xx: its two low bits come from a random hex digit.
const VARIANT: Record<string, string> = {};
for (let i = 0; i < 16; i++) VARIANT[i.toString(16)] = (8 + (i & 3)).toString(16);

export function newRequestId(nowMs: number = Date.now()): string {
  if (nowMs > currentMs) {
    currentMs = nowMs;
    sequence = 0;
    const hex = nowMs.toString(16).padStart(12, '0');
    timePrefix = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7`;
  } else if (++sequence > 0xfff) {
    // More than 4096 ids in one millisecond (or the clock went back): borrow the next millisecond.
    return newRequestId(currentMs + 1);
  }
  const random = nextRandomHex();
  return `${timePrefix}${SEQUENCE_HEX[sequence]}-${VARIANT[random[0] ?? '0']}${random.slice(1, 4)}-${random.slice(4)}`;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keep a caller's X-Request-ID when it is sane, so traces join up across services. */
export function requestIdFrom(
  header: string | string[] | undefined,
  fallback: () => string = newRequestId,
): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && REQUEST_ID.test(value) ? value : fallback();
}
